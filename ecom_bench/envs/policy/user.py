"""E_POLICY's template customer: asks the question, withholds facts, answers questions about them.

The customer knows every fact of their situation (`PolicyGoal.situation`) but not the
policy, so they never state, check or confirm an answer. Facts the rule reads may be
withheld from the opening (p_missing); the opening then says there is more to tell.

Any request (`is_request`) is answered; `questions.read_question` says what it asks:

* a question about facts gets exactly those, in the customer's words: withheld ones
  are disclosed, ones already told are restated ("as I said, ...");
* the rest of the withheld facts come too when the question gave nothing new (it named
  only told facts), when a part of it could not be placed (said so: "I'm not sure
  what else you mean"), or when it asked in general or only checked in while
  something is still withheld. So a plain question never does worse than a vague one
  for the facts it names, and a part the customer cannot read is never dropped silently;
* a check-in (a sign-off such as "I hope that helps!" too) with nothing withheld gets a
  natural reply: thanks once an answer was proposed, otherwise that they are waiting for
  what the policy says;
* a question about nothing in their situation ("What's your favourite colour?") gets
  "I'm not sure how that matters" and no facts: it is no clarification.

Replies: CLARIFY only when withheld facts were given (a turn the customer caused);
CONTINUE for everything else, including a proposed answer: the customer cannot check
it, so it is not a confirmed state and the turn is the agent's. QUIT at the last turn.
Noise never touches values, units or scope words.
"""

from __future__ import annotations

import random
import re
from typing import ClassVar

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.policy.goal import PolicyGoal
from ecom_bench.envs.policy.questions import Reading, read_question
from ecom_bench.users import Customer, UserAct, UserMessage, render
from ecom_bench.users.base import Disclosure
from ecom_bench.users.understanding import is_check_in, is_request, says
from ecom_bench.world import World
from ecom_bench.domains.policy.rules import FAMILIES, SLOTS

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
#: A check-in once an answer was proposed: thanks, without judging it (the customer cannot check it).
THANKS = ("Okay, thanks. I'll go by what the policy says.", "Alright, thank you. I'll take your word for it.")
#: A check-in before any answer: nothing more to add, still waiting for the policy's answer.
STILL_WAITING = ("Nothing else from me; I'm just waiting to hear what the policy says.",
                 "No, that's all. What does the policy say for my case?")
#: Leads for the withheld facts given beyond what was asked (a part that could not be placed; a check-in).
NOT_SURE = ("I'm not sure what else you're asking, but here's the rest of my situation:",
            "I didn't quite follow all of that; here's what else I know about my case:")
#: A question about something outside the customer's situation: no facts, a pointer back to the case.
OFF_TOPIC = ("I'm not sure how that matters for my question.",
             "Sorry, I don't see what that has to do with my question.")
BEFORE_THAT = ("Before that, there's more about my case you may need:", "One thing first, you may need to know this:")
_ANSWERISH = re.compile(r"\$\s?\d|\b\d+(?:\.\d+)?\s*(?:days?|months?)\b")


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
        self._heard_answer = False  # the agent has proposed an answer in words
        self._said: set[str] = set()  # the facts stated so far (restated with "as I said")

    # ---------------------------------------------------------------- API
    def opening(self) -> UserMessage:
        rng = self.rng("opening")
        g = self.goal
        told = [k for k in g.slots if self.told(k)]
        rng.shuffle(told)
        facts = [self._say(g.scope_slot)] + [self._say(k) for k in told]
        self._said.update([g.scope_slot, *told])
        greeting = rng.choice(GREETINGS)
        text = render("{greeting} {facts} {question} {signal}", greeting=greeting,
                      facts=join_facts(facts, capital=not greeting.endswith(",")), question=g.question,
                      signal=self.missing_signal(rng))
        return self.say(text, UserAct.OPENING, rng)

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        rng = self.next_reply_rng()
        if last_turn:
            return self.quit(rng)
        proposes = self._proposes_answer(agent_text)
        self._heard_answer = self._heard_answer or proposes
        if is_request(agent_text):
            return self._answer(read_question(agent_text), proposes, rng)
        if proposes:
            return self.say(rng.choice(CANNOT_CHECK), UserAct.CONTINUE, rng)
        if is_check_in(agent_text.lower()):  # a sign-off ("I hope that helps!") is answered as a check-in
            return self._answer(Reading(check_in=True), proposes, rng)
        return self.say(rng.choice(THANKS if self._heard_answer else WAITING), UserAct.CONTINUE, rng)

    def _answer(self, reading: Reading, proposes: bool, rng: random.Random) -> UserMessage:
        """Answer what was asked; add the other withheld facts where the question gave nothing new,
        had a part the customer could not place, or only asked in general or checked in."""
        if reading.unrelated:
            hint = self.missing_signal(rng)  # still more to tell: say so, as the opening did
            return self.say(" ".join(filter(None, (rng.choice(OFF_TOPIC), hint))), UserAct.CONTINUE, rng)
        hidden = self.withheld()
        new = [k for k in reading.slots if k in hidden]
        rest = [] if new and not reading.unmapped else [k for k in hidden if k not in new]
        revealed = [k for k in hidden if k in new or k in rest]
        for key in revealed:
            self._disclosure.reveal(key)
        again = [k for k in reading.slots if k in self._said]
        first = [self._say(k) for k in reading.slots if k not in again]
        self._said.update(reading.slots, rest)
        said = [join_facts(first)] if first else []
        if again:
            said.append(join_facts(["as I said, " + self._say(again[0])] + [self._say(k) for k in again[1:]]))
        if rest:
            lead = (rng.choice(NOT_SURE) if reading.unmapped else rng.choice(BEFORE_THAT) if reading.check_in
                    else "Also," if said else "")
            said.append(" ".join(filter(None, (lead, join_facts([self._say(k) for k in rest], capital=not lead)))))
        if said:
            act = UserAct.CLARIFY if revealed else UserAct.CONTINUE
            return self.say(" ".join(said), act, rng, revealed)
        if proposes:
            return self.say(rng.choice(CANNOT_CHECK), UserAct.CONTINUE, rng)
        if reading.check_in:
            return self.say(rng.choice(THANKS if self._heard_answer else STILL_WAITING), UserAct.CONTINUE, rng)
        return self.say(rng.choice(NOTHING_MORE), UserAct.CONTINUE, rng)

    # ------------------------------------------------------------ helpers
    def _say(self, key: str) -> str:
        return render(SLOTS[key].say(self.goal.situation[key]))

    def _proposes_answer(self, agent_text: str) -> bool:
        if self.goal.kind == "choice":
            low = agent_text.lower()
            return any(says(low, o) for o in FAMILIES[self.goal.family].outcomes)
        return _ANSWERISH.search(agent_text) is not None
