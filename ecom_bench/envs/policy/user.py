"""E_POLICY's template customer: asks the question, withholds facts, answers questions about them.

The customer knows every fact of their situation (`PolicyGoal.situation`) but not the
policy, so they never state, check or confirm an answer. Facts the rule reads may be
withheld from the opening (p_missing); the opening then says there is more to tell.
The shared `Customer` decides disclosure: any request (`is_request`) is answered, a
question naming withheld facts (a label or keyword of `Slot.keywords`) gets those, any
other request ("could you give me a few details?") gets every withheld fact.

Replies: CLARIFY only when withheld facts were given (a turn the customer caused);
CONTINUE for everything else, including a proposed answer: the customer cannot check
it, so it is not a confirmed state and the turn is the agent's. QUIT at the last turn.
Noise never touches values, units or scope words.
"""

from __future__ import annotations

import re
from typing import ClassVar

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.policy.goal import PolicyGoal
from ecom_bench.users import Customer, UserAct, UserMessage, render
from ecom_bench.users.base import Disclosure
from ecom_bench.users.understanding import is_request, says, topics_asked
from ecom_bench.world import World
from ecom_bench.world.policy import FAMILIES, SLOTS

GREETINGS = ("Hi!", "Hello,", "Hey there.", "Hi there,", "Good morning!", "")
UNIT_WORDS = ("lb", "day", "days", "month", "months", "item", "items", "order", "orders")
#: What an opening adds when facts the policy needs are withheld (the customer does not know which).
POLICY_MISSING_SIGNALS = ("I can tell you more about my situation if the policy depends on it.",
                          "Let me know if you need any other details about my order.",
                          "Just ask if you need to know anything else about my case.")
NOTHING_MORE = ("I think I've told you everything about my situation. What does the policy say?",
                "That's all I know about my case. Could you check the policy for me?")
CANNOT_CHECK = ("I don't know the rules myself, so I can't say. Please go by what the policy says.",
                "I'll have to trust you on that; I don't know the policy.")
WAITING = ("Could you check your store policy and tell me?", "So what does the policy say for my case?")
_ANSWERISH = re.compile(r"\$\s?\d|\b\d+(?:\.\d+)?\s*(?:days?|months?)\b")
#: The words a question about each fact may use: the policy text's label and the customer's keywords.
TOPICS = {key: (slot.label, *slot.keywords) for key, slot in SLOTS.items()}


def join_facts(facts: list[str], *, capital: bool = True) -> str:
    if not facts:
        return ""
    text = facts[0] if len(facts) == 1 else ", ".join(facts[:-1]) + " and " + facts[-1]
    return (text[0].upper() if capital else text[0]) + text[1:] + "."


class PolicyUser(Customer):
    """The simulated customer of one E_POLICY episode."""

    #: Policy wording: the customer knows more about their case, not "requirements".
    missing_signals: ClassVar[tuple[str, ...]] = POLICY_MISSING_SIGNALS

    rng_prefix: ClassVar[tuple[str, ...]] = ("policy-user",)

    def __init__(self, goal: PolicyGoal, difficulty: Difficulty, seed: int, disclosure: Disclosure) -> None:
        protect = set(UNIT_WORDS)
        for slot in SLOTS.values():
            protect.update(slot.choices)
        super().__init__(difficulty, seed, disclosure, protect)
        self.goal = goal

    # ---------------------------------------------------------------- API
    def opening(self) -> UserMessage:
        rng = self.rng("opening")
        g = self.goal
        told = [k for k in g.slots if self.told(k)]
        rng.shuffle(told)
        facts = [self._say(g.scope_slot)] + [self._say(k) for k in told]
        greeting = rng.choice(GREETINGS)
        text = render("{greeting} {facts} {question} {signal}", greeting=greeting,
                      facts=join_facts(facts, capital=not greeting.endswith(",")), question=g.question,
                      signal=self.missing_signal(rng))
        return self.say(text, UserAct.OPENING, rng)

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        rng = self.next_reply_rng()
        if last_turn:
            return self.quit(rng)
        if is_request(agent_text):
            asked = topics_asked(agent_text, TOPICS)
            revealed = self.to_disclose(asked)
            # Withheld facts asked about or (for a general request) all of them, then any other fact
            # asked about again: the customer knows their whole situation.
            facts = revealed + [k for k in asked if k not in revealed]
            if facts:
                act = UserAct.CLARIFY if revealed else UserAct.CONTINUE
                return self.say(join_facts([self._say(k) for k in facts]), act, rng, revealed)
            if self._proposes_answer(agent_text):
                return self.say(rng.choice(CANNOT_CHECK), UserAct.CONTINUE, rng)
            return self.say(rng.choice(NOTHING_MORE), UserAct.CONTINUE, rng)
        if self._proposes_answer(agent_text):
            return self.say(rng.choice(CANNOT_CHECK), UserAct.CONTINUE, rng)
        return self.say(rng.choice(WAITING), UserAct.CONTINUE, rng)

    # ------------------------------------------------------------ helpers
    def _say(self, key: str) -> str:
        return render(SLOTS[key].say(self.goal.situation[key]))

    def _proposes_answer(self, agent_text: str) -> bool:
        if self.goal.kind == "choice":
            low = agent_text.lower()
            return any(says(low, o) for o in FAMILIES[self.goal.family].outcomes)
        return _ANSWERISH.search(agent_text) is not None
