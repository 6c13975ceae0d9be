"""`OrderUserBase`: what the tracking and returns customers share on top of `Customer`.

How they react to order ids the agent names, and a second description of their order when
asked again which one they mean.
"""

from __future__ import annotations

import random
import re

from ecom_bench.difficulty import Difficulty
from ecom_bench.users.customer import Customer
from ecom_bench.users.messages import Disclosure, UserAct, UserMessage, render
from ecom_bench.users.understanding import is_request

ORDER_ID_RE = re.compile(r"\bORD-\d{6}\b", re.IGNORECASE)


class OrderUserBase(Customer):
    """What the tracking and returns customers share: how they react to order ids and to
    being asked again which order they mean.

    Subclasses set `target_order_id`, `direct` (the customer gave, or knows, the order id),
    `full_reference` (what they say when asked which order) and `alternates` (further
    descriptions, each unique to the same line), and implement `opening` / `reply`.

    A customer who *described* their order never saw its id: any message naming order ids
    gets the same reply whether or not theirs is among them (they restate the
    description), so "is it A, B or C?" is no oracle; a question beside the ids is answered as
    if they were not there. A customer who gave the id simply
    says it again.
    """

    target_order_id: str
    direct: bool
    full_reference: str
    alternates: tuple[str, ...] = ()

    def __init__(self, difficulty: Difficulty, seed: int, disclosure: Disclosure, protect: frozenset[str]) -> None:
        super().__init__(difficulty, seed, disclosure, protect)
        self._asked_again = 0

    @staticmethod
    def mentioned_orders(agent_text: str) -> list[str]:
        return list(dict.fromkeys(m.upper() for m in ORDER_ID_RE.findall(agent_text)))

    def _reveal_order(self) -> tuple[str, ...]:
        return ("order",) if self._disclosure.reveal("order") else ()

    def restate(self) -> str:
        """Asked again which order: another description of the same line (the full one if none is left)."""
        if not self.alternates:
            return render("As I said, it's {ref}.", ref=self.full_reference)
        alt = self.alternates[self._asked_again % len(self.alternates)]
        self._asked_again += 1
        return render("As I said, it's {ref}; in other words, {alt}.", ref=self.full_reference, alt=alt)

    def order_feedback(self, agent_text: str, rng: random.Random) -> UserMessage | None:
        """The reply to a message naming order ids (None when it names none)."""
        named = self.mentioned_orders(agent_text)
        if not named:
            return None
        if not self.direct and is_request(ORDER_ID_RE.sub(" ", agent_text)):
            # A question that also names the ids the agent found ("I see it in order ORD-5. Why
            # are you returning it?") is answered as the same question without them: the reply
            # names no id, so it is the same whichever ids were named.
            return None
        revealed = self._reveal_order()
        act = UserAct.CLARIFY if revealed else UserAct.CONTINUE
        if not self.direct:
            text = render("I don't have the order numbers in front of me. I mean {ref}.", ref=self.full_reference)
            return self.say(text, act, rng, revealed)
        if self.target_order_id in named:
            return None  # they gave the id: talking about it is no news to them
        if is_request(agent_text):
            return self.say(render("My order number is {id}.", id=self.target_order_id), act, rng, revealed)
        quit_ = self.strike(rng)
        if quit_ is not None:
            return quit_
        text = render("That's not my order. My order number is {id}.", id=self.target_order_id)
        return self.say(text, UserAct.CORRECT, rng, revealed)
