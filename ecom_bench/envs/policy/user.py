"""E_POLICY's template customer: asks the question, withholds facts, answers questions about them.

The customer knows every fact of their situation (`PolicyGoal.situation`) but not the
policy, so they never state or confirm an answer. Facts the rule reads may be withheld
from the opening (p_missing); each is revealed as soon as the agent asks about it
(its label or keywords, `Slot.keywords`). Replies: CLARIFY when a question uncovers a
withheld fact (a turn the customer caused), CONTINUE when a question asks only what
was already said or does not matter, CONFIRM when the agent proposes an answer, QUIT at
the last turn. Noise never touches values, units or scope words.
"""

from __future__ import annotations

import random
import re

from ecom_bench._seeding import seeded_rng
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.policy.goal import PolicyGoal
from ecom_bench.users import UserAct, UserMessage, add_noise, render
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World
from ecom_bench.world.policy import FAMILIES, SLOTS

GREETINGS = ("Hi!", "Hello,", "Hey there.", "Hi there,", "Good morning!", "")
UNIT_WORDS = ("lb", "day", "days", "month", "months", "item", "items", "order", "orders")
_ANSWERISH = re.compile(r"\$\s?\d|\b\d+(?:\.\d+)?\s*(?:days?|months?)\b")


def says(text_l: str, keyword: str) -> bool:
    """Whether lower-cased text holds `keyword` at the start of a word ("deliver" in "delivered")."""
    return re.search(rf"(?<![a-z0-9]){re.escape(keyword.lower())}", text_l) is not None


def asks_about(text_l: str, slot_key: str) -> bool:
    slot = SLOTS[slot_key]
    return says(text_l, slot.label) or any(says(text_l, k) for k in slot.keywords)


def join_facts(facts: list[str], *, capital: bool = True) -> str:
    if not facts:
        return ""
    text = facts[0] if len(facts) == 1 else ", ".join(facts[:-1]) + " and " + facts[-1]
    return (text[0].upper() if capital else text[0]) + text[1:] + "."


class PolicyUser:
    """The simulated customer of one E_POLICY episode."""

    def __init__(self, goal: PolicyGoal, difficulty: Difficulty, seed: int, disclosure: Disclosure) -> None:
        self.goal = goal
        self.difficulty = difficulty
        self.seed = seed
        self._disclosure = disclosure
        self._replies = 0
        protect = set(UNIT_WORDS)
        for slot in SLOTS.values():
            protect.update(slot.choices)
        self._protect = frozenset(protect)

    # ---------------------------------------------------------------- API
    def disclosure(self) -> dict[str, bool]:
        return dict(self._disclosure.told)

    def opening(self) -> UserMessage:
        rng = seeded_rng(self.seed, "policy-user", "opening")
        g = self.goal
        told = [k for k in g.slots if self._disclosure.is_told(k)]
        rng.shuffle(told)
        facts = [self._say(g.scope_slot)] + [self._say(k) for k in told]
        greeting = rng.choice(GREETINGS)
        text = render("{greeting} {facts} {question}", greeting=greeting,
                      facts=join_facts(facts, capital=not greeting.endswith(",")), question=g.question)
        return UserMessage(self._noisy(text, rng), UserAct.OPENING)

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        self._replies += 1
        rng = seeded_rng(self.seed, "policy-user", "reply", self._replies)
        if last_turn:
            text = rng.choice(("This is taking too long; I'll ask somewhere else. Bye.",
                               "Sorry, I have to go now. I'll call the store instead."))
            return UserMessage(text, UserAct.QUIT, ends_episode=True)
        text_l = agent_text.lower()
        if "?" in agent_text:
            asked = [k for k in SLOTS if asks_about(text_l, k)]
            if asked:
                revealed = tuple(k for k in asked if k in self.goal.slots and self._disclosure.reveal(k))
                text = join_facts([self._say(k) for k in asked])
                act = UserAct.CLARIFY if revealed else UserAct.CONTINUE
                return UserMessage(self._noisy(text, rng), act, revealed)
        if self._proposes_answer(agent_text, text_l):
            text = rng.choice(("I don't know the rules myself, so I'll go with what the policy says. "
                               "Please record that as the answer.",
                               "OK, thanks. If that's what the policy says, please go ahead and record it."))
            return UserMessage(self._noisy(text, rng), UserAct.CONFIRM)
        if "?" in agent_text:
            text = ("I'm not sure what you need from me. Which detail of my situation does the policy depend on?")
        else:
            text = rng.choice(("Could you check your store policy and tell me?",
                               "So what does the policy say for my case?"))
        return UserMessage(self._noisy(text, rng), UserAct.CONTINUE)

    # ------------------------------------------------------------ helpers
    def _say(self, key: str) -> str:
        return render(SLOTS[key].say(self.goal.situation[key]))

    def _proposes_answer(self, agent_text: str, text_l: str) -> bool:
        if self.goal.kind == "choice":
            return any(says(text_l, o) for o in FAMILIES[self.goal.family].outcomes)
        return _ANSWERISH.search(agent_text) is not None

    def _noisy(self, text: str, rng: random.Random) -> str:
        return add_noise(text, self.difficulty.p_noise, rng, self._protect)
