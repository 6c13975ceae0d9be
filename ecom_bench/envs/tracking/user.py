"""E_TRACK's template customer: names (or half-names) an order, answers, restates.

The one slot is "order": withheld (at p_missing) the opening says only "the wall charger
I ordered" (or nothing identifying, for an order-id reference) and any request from the
agent gets the full reference (`Customer.to_disclose`); asked again, the customer adds
another description of the same order instead of repeating itself. Order ids the agent
names get the reply of `OrderUserBase.order_feedback`: a customer who described their
order cannot tell a right id from a wrong one, so the reply is the same for both.
"""

from __future__ import annotations

from typing import ClassVar

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.tracking.goal import TrackingGoal
from ecom_bench.envs.tracking.phrases import PHRASES
from ecom_bench.users import UserAct, is_request
from ecom_bench.users.messages import Disclosure
from ecom_bench.users.orders import OrderUserBase
from ecom_bench.users.phrases import PhraseTable
from ecom_bench.users.phrasing import CustomerDecision, Speech
from ecom_bench.world import World
from ecom_bench.domains.orders.references import RefKind


class TrackingUser(OrderUserBase):
    rng_prefix: ClassVar[tuple[str, ...]] = ("tracking",)
    phrases: ClassVar[PhraseTable] = {**OrderUserBase.phrases, **PHRASES}

    def __init__(self, goal: TrackingGoal, difficulty: Difficulty, seed: int, disclosure: Disclosure,
                 partial_reference: str, protect: frozenset[str], alternates: tuple[str, ...] = (),
                 plural_references: frozenset[str] = frozenset()) -> None:
        super().__init__(difficulty, seed, disclosure, protect)
        self.goal = goal
        self.target_order_id = goal.order_id
        self.direct = goal.reference["kind"] == RefKind.ORDER_ID.value
        self.full_reference = goal.reference_text
        self.partial_reference = partial_reference
        self.alternates = alternates
        self.plural_references = plural_references  # "the jeans I ordered" takes "are"

    def _current_reference(self) -> str:
        return self.full_reference if self.told("order") else self.partial_reference

    def decide_opening(self) -> CustomerDecision:
        rng = self.rng("opening")
        ref = self._current_reference()
        be = self.line("are" if ref in self.plural_references else "is")
        ask = self.pick(rng, "ask", ref=ref, be=be)
        return self.decision(UserAct.OPENING, self.line("opening", greeting=self.pick(rng, "greeting"), ask=ask), rng)

    def decide_reply(self, agent_text: str, world: World, last_turn: bool) -> CustomerDecision:
        rng = self.next_reply_rng()
        if last_turn:
            return self.goodbye(rng)
        feedback = self.order_feedback(agent_text, rng)
        if feedback is not None:
            return feedback
        if is_request(agent_text):
            if self.to_disclose(("order",)):
                return self.decision(UserAct.CLARIFY, self.line("i_mean", ref=self.full_reference), rng, ("order",))
            return self.decision(UserAct.CONTINUE, Speech((self.restate(), self.line("just_status"))), rng)
        return self.decision(UserAct.CONTINUE, self.line("status_please", ref=self._current_reference()), rng)
