"""E_TRACK's template customer: names (or half-names) an order, answers, corrects, confirms.

The one slot is "order": withheld (at p_missing) the opening says only "the wall charger
I ordered" (or nothing identifying, for an order-id reference) and any question from
the agent gets the full reference. Naming a wrong order id gets "no, that's not the
order I mean"; naming the right one gets a confirmation.
"""

from __future__ import annotations

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.tracking.goal import TrackingGoal
from ecom_bench.envs.tracking.references import OrderUserBase, is_question
from ecom_bench.users import UserAct, UserMessage, render
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World

GREETINGS = ("Hi!", "Hello,", "Hey there.", "Hi there,", "")
ASKS = ("Could you check the status of {ref}?", "What's happening with {ref}? I'd like to know its status.",
        "Can you tell me the current status of {ref}?", "I'm wondering where {ref} is. What's its status?")


class TrackingUser(OrderUserBase):
    env = "tracking"

    def __init__(self, goal: TrackingGoal, difficulty: Difficulty, seed: int, disclosure: Disclosure,
                 partial_reference: str, protect: frozenset[str]) -> None:
        super().__init__(difficulty, seed, disclosure, protect)
        self.goal = goal
        self.target_order_id = goal.order_id
        self.full_reference = goal.reference_text
        self.partial_reference = partial_reference

    def _current_reference(self) -> str:
        return self.full_reference if self._disclosure.is_told("order") else self.partial_reference

    def opening(self) -> UserMessage:
        rng = self._rng("opening")
        text = render("{greeting} " + rng.choice(ASKS), greeting=rng.choice(GREETINGS),
                      ref=self._current_reference())
        return self._say(text, UserAct.OPENING, rng)

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        rng = self._next_reply_rng()
        if last_turn:
            return self._quit(rng)
        feedback = self._order_feedback(agent_text, rng)
        if feedback is not None:
            return feedback
        if is_question(agent_text):
            if self.target_order_id in self.mentioned_orders(agent_text):
                self._disclosure.reveal("order")
                return self._say("Yes, that's the one.", UserAct.CONFIRM, rng)
            if self._disclosure.reveal("order"):
                return self._say(render("I mean {ref}.", ref=self.full_reference), UserAct.CLARIFY, rng, ("order",))
            return self._say(render("As I said, it's {ref}. I just need its status.", ref=self.full_reference),
                             UserAct.CONTINUE, rng)
        if self.target_order_id in self.mentioned_orders(agent_text):
            return self._say(rng.choice(("Great, thanks for checking.", "Thanks, that's what I needed.")),
                             UserAct.CONFIRM, rng)
        return self._say(render("Could you please tell me the status of {ref}?", ref=self._current_reference()),
                         UserAct.CONTINUE, rng)
