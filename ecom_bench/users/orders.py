"""`OrderUserBase`: what the tracking and returns customers share on top of `Customer`.

How they react to order ids the agent names, and a second description of their order when
asked again which one they mean.
"""

from __future__ import annotations

import random
import re
from typing import ClassVar

from ecom_bench.difficulty import Difficulty
from ecom_bench.users.customer import Customer
from ecom_bench.users.messages import Disclosure, UserAct
from ecom_bench.users.phrases import ORDER_PHRASES, PHRASES, PhraseTable
from ecom_bench.users.phrasing import CustomerDecision, Phrase
from ecom_bench.users.understanding import is_request

ORDER_ID_RE = re.compile(r"\bORD-\d{6}\b", re.IGNORECASE)


class OrderUserBase(Customer):
    """What the tracking and returns customers share: how they react to order ids and to
    being asked again which order they mean.

    Subclasses set `target_order_id`, `direct` (the customer gave, or knows, the order id),
    `full_reference` (what they say when asked which order) and `alternates` (further
    descriptions, each unique to the same line), and decide their opening and replies.

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
    phrases: ClassVar[PhraseTable] = {**PHRASES, **ORDER_PHRASES}

    def __init__(self, difficulty: Difficulty, seed: int, disclosure: Disclosure, protect: frozenset[str]) -> None:
        super().__init__(difficulty, seed, disclosure, protect)
        self._asked_again = 0

    @staticmethod
    def mentioned_orders(agent_text: str) -> list[str]:
        return list(dict.fromkeys(m.upper() for m in ORDER_ID_RE.findall(agent_text)))

    def _reveal_order(self) -> tuple[str, ...]:
        return ("order",) if self._disclosure.reveal("order") else ()

    def slot_value(self, slot: str) -> str | None:
        if slot == "order":
            return self.target_order_id if self.direct else self.full_reference
        return None

    def restate(self) -> Phrase:
        """Asked again which order: another description of the same line (the full one if none is left)."""
        if not self.alternates:
            return self.line("as_i_said", ref=self.full_reference)
        alt = self.alternates[self._asked_again % len(self.alternates)]
        self._asked_again += 1
        return self.line("as_i_said_in_other_words", ref=self.full_reference, alt=alt)

    def order_feedback(self, agent_text: str, rng: random.Random) -> CustomerDecision | None:
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
            return self.decision(act, self.line("no_order_numbers", ref=self.full_reference), rng, revealed)
        if self.target_order_id in named:
            return None  # they gave the id: talking about it is no news to them
        said = [("order", self.target_order_id)]
        if is_request(agent_text):
            return self.decision(act, self.line("my_order_number", id=self.target_order_id), rng, revealed,
                                 convey=said if not revealed else ())
        goodbye = self.count_mistake(rng)
        if goodbye is not None:
            return goodbye
        return self.decision(UserAct.CORRECT, self.line("not_my_order", id=self.target_order_id), rng, revealed,
                             convey=said if not revealed else ())
