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
from collections.abc import Sequence
from typing import ClassVar

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.policy.goal import PolicyGoal
from ecom_bench.envs.policy.phrases import PHRASES
from ecom_bench.envs.policy.questions import Reading, read_question
from ecom_bench.users import Customer, UserAct, render
from ecom_bench.users.messages import Disclosure
from ecom_bench.users.phrases import PhraseTable
from ecom_bench.users.phrasing import CustomerDecision, Phrase, Speech, Utterance
from ecom_bench.users.understanding import is_check_in, is_request, says
from ecom_bench.world import World
from ecom_bench.domains.policy.rules import FAMILIES, SLOTS

#: Never noised: units of the facts (and every slot's choices).
UNIT_WORDS = ("lb", "day", "days", "month", "months", "item", "items", "order", "orders")
_ANSWERISH = re.compile(r"\$\s?\d|\b\d+(?:\.\d+)?\s*(?:days?|months?)\b")


def _said(*parts: Utterance | None) -> Speech:
    return Speech(tuple(p for p in parts if p is not None))


class PolicyUser(Customer):
    """The simulated customer of one E_POLICY episode."""

    rng_prefix: ClassVar[tuple[str, ...]] = ("policy-user",)
    phrases: ClassVar[PhraseTable] = {**Customer.phrases, **PHRASES}

    def __init__(self, goal: PolicyGoal, difficulty: Difficulty, seed: int, disclosure: Disclosure) -> None:
        protect = set(UNIT_WORDS)
        for slot in SLOTS.values():
            protect.update(slot.choices)
        super().__init__(difficulty, seed, disclosure, protect)
        self.goal = goal
        self._heard_answer = False  # the agent has proposed an answer in words
        self._said: set[str] = set()  # the facts stated so far (restated with "as I said")

    def slot_value(self, slot: str) -> str | None:
        """A fact's value where the customer's words carry it as is (a number, a choice)."""
        value = str(self.goal.situation.get(slot, ""))
        return value if value and value in self._say(slot) else None

    # ----------------------------------------------------------- decisions
    def decide_opening(self) -> CustomerDecision:
        rng = self.rng("opening")
        g = self.goal
        told = [k for k in g.slots if self.told(k)]
        rng.shuffle(told)
        facts = [self._say(g.scope_slot)] + [self._say(k) for k in told]
        self._said.update([g.scope_slot, *told])
        greeting = self.pick(rng, "greeting")
        text = self.line("opening", greeting=greeting, facts=self._facts(facts, capital=not greeting.template.endswith(",")),
                         question=g.question, signal=self.missing_signal(rng) or "")
        return self.decision(UserAct.OPENING, text, rng)

    def decide_reply(self, agent_text: str, world: World, last_turn: bool) -> CustomerDecision:
        rng = self.next_reply_rng()
        if last_turn:
            return self.goodbye(rng)
        proposes = self._proposes_answer(agent_text)
        self._heard_answer = self._heard_answer or proposes
        if is_request(agent_text):
            return self._answer(read_question(agent_text), proposes, rng)
        if proposes:
            return self.decision(UserAct.CONTINUE, self.pick(rng, "cannot_check"), rng)
        if is_check_in(agent_text.lower()):  # a sign-off ("I hope that helps!") is answered as a check-in
            return self._answer(Reading(check_in=True), proposes, rng)
        return self.decision(UserAct.CONTINUE, self.pick(rng, "thanks" if self._heard_answer else "waiting"), rng)

    def _answer(self, reading: Reading, proposes: bool, rng: random.Random) -> CustomerDecision:
        """Answer what was asked; add the other withheld facts where the question gave nothing new,
        had a part the customer could not place, or only asked in general or checked in."""
        if reading.unrelated:
            hint = self.missing_signal(rng)  # still more to tell: say so, as the opening did
            return self.decision(UserAct.CONTINUE, _said(self.pick(rng, "off_topic"), hint), rng)
        hidden = self.withheld()
        new = [k for k in reading.slots if k in hidden]
        rest = [] if new and not reading.unmapped else [k for k in hidden if k not in new]
        revealed = [k for k in hidden if k in new or k in rest]
        for key in revealed:
            self._disclosure.reveal(key)
        again = [k for k in reading.slots if k in self._said]
        first = [self._say(k) for k in reading.slots if k not in again]
        self._said.update(reading.slots, rest)
        said: list[Utterance] = [self._facts(first)] if first else []
        if again:
            said.append(self._facts([self.line("as_i_said", fact=self._say(again[0])),
                                     *(self._say(k) for k in again[1:])]))
        if rest:
            lead = (self.pick(rng, "not_sure") if reading.unmapped else self.pick(rng, "before_that")
                    if reading.check_in else self.line("also") if said else None)
            said.append(_said(lead, self._facts([self._say(k) for k in rest], capital=lead is None)))
        if said:
            act = UserAct.CLARIFY if revealed else UserAct.CONTINUE
            return self.decision(act, Speech(tuple(said)), rng, revealed)
        if proposes:
            return self.decision(UserAct.CONTINUE, self.pick(rng, "cannot_check"), rng)
        if reading.check_in:
            return self.decision(UserAct.CONTINUE, self.pick(rng, "thanks" if self._heard_answer else "still_waiting"),
                                 rng)
        return self.decision(UserAct.CONTINUE, self.pick(rng, "nothing_more"), rng)

    # ------------------------------------------------------------ helpers
    def _say(self, key: str) -> str:
        """A fact of the situation, as the world's slot words it."""
        return render(SLOTS[key].say(self.goal.situation[key]))

    def _facts(self, facts: Sequence[Phrase | str], *, capital: bool = True) -> Phrase:
        """"X." or "X, Y and Z." (the first letter a capital unless `capital` is false)."""
        first = facts[0]
        if capital and isinstance(first, str):
            first = first[0].upper() + first[1:]
        if len(facts) == 1:
            return self.line("fact", fact=first)
        rest = Speech((first, *facts[1:-1]), sep=", ")
        return self.line("facts", rest=rest, last=facts[-1])

    def _proposes_answer(self, agent_text: str) -> bool:
        if self.goal.kind == "choice":
            low = agent_text.lower()
            return any(says(low, o) for o in FAMILIES[self.goal.family].outcomes)
        return _ANSWERISH.search(agent_text) is not None
