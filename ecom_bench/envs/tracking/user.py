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
from ecom_bench.envs.tracking.references import OrderUserBase
from ecom_bench.users import UserAct, UserMessage, is_request, render
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World
from ecom_bench.domains.orders.references import RefKind

GREETINGS = ("Hi!", "Hello,", "Hey there.", "Hi there,", "")
ASKS = ("Could you check the status of {ref}?", "What's happening with {ref}? I'd like to know its status.",
        "Can you tell me the current status of {ref}?", "I'm wondering where {ref} {be}. What's its status?")


class TrackingUser(OrderUserBase):
    rng_prefix: ClassVar[tuple[str, ...]] = ("tracking",)

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

    def opening(self) -> UserMessage:
        rng = self.rng("opening")
        ref = self._current_reference()
        text = render("{greeting} " + rng.choice(ASKS), greeting=rng.choice(GREETINGS), ref=ref,
                      be="are" if ref in self.plural_references else "is")
        return self.say(text, UserAct.OPENING, rng)

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        rng = self.next_reply_rng()
        if last_turn:
            return self.quit(rng)
        feedback = self.order_feedback(agent_text, rng)
        if feedback is not None:
            return feedback
        if is_request(agent_text):
            if self.to_disclose(("order",)):
                return self.say(render("I mean {ref}.", ref=self.full_reference), UserAct.CLARIFY, rng, ("order",))
            return self.say(self.restate() + " I just need its status.", UserAct.CONTINUE, rng)
        return self.say(render("Could you please tell me the status of {ref}?", ref=self._current_reference()),
                        UserAct.CONTINUE, rng)
