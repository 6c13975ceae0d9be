"""How a customer refers to one of their orders, shared by E_TRACK and E_RETURN users.

A reference is an `OrderReference` (world.orders) picked at build time among those
that match exactly one order line of the whole account; this module only phrases it
and holds the reply mechanics both users share (noise, quitting, spotting order ids
the agent names, what a question asks about).
"""

from __future__ import annotations

import math
import random
import re
from datetime import date, datetime

from ecom_bench._seeding import seeded_rng
from ecom_bench.difficulty import Difficulty
from ecom_bench.users import UserAct, UserMessage, add_noise, render
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World
from ecom_bench.world.orders import (
    LATEST,
    Order,
    OrderLine,
    OrderReference,
    RefKind,
    matching_lines,
    unique_references,
)

ORDER_ID_RE = re.compile(r"\bORD-\d{6}\b", re.IGNORECASE)
#: The most order ids a customer picks theirs from ("Is it ORD-1 or ORD-2?"). Shown a longer list
#: they describe their order instead: otherwise naming every order on the account and reading
#: back the customer's pick solved E_TRACK every time (reliability suite, `all_variants`).
MAX_ORDER_CHOICES = 3


def p_indirect(difficulty: Difficulty) -> float:
    """p_ref(d) = σ((d − 2)/1.5): the customer describes the order instead of giving its id."""
    return 1.0 / (1.0 + math.exp(-(difficulty.level - 2) / 1.5))


def p_similar(difficulty: Difficulty) -> float:
    """Share of look-alikes of the target's own brand: min(0.8, 0.08·d) (harder to tell apart)."""
    return min(0.8, 0.08 * difficulty.level)


def note_phrase(note: str) -> str:
    return note if note.startswith("for ") else f"as a {note}"


DATE_STYLES = ("calendar", "days_ago", "weekday")


def date_phrase(iso: str, now: datetime, style: str) -> str:
    """"on June 3", "12 days ago", or (2-7 days back) "last Tuesday"."""
    day = date.fromisoformat(iso)
    n = (now.date() - day).days
    if style == "weekday" and 2 <= n <= 7:
        return f"last {day.strftime('%A')}"
    if style != "calendar":
        return {0: "today", 1: "yesterday"}.get(n, f"{n} days ago")
    return f"on {day.strftime('%B')} {day.day}"


def phrase_reference(ref: OrderReference, noun: str, now: datetime, date_style: str) -> str:
    """The words for `ref` ("the VoltEdge wall charger I ordered")."""
    k, v = ref.kind, ref.value
    if k is RefKind.ORDER_ID:
        return render("my order {id}", id=v)
    if k is RefKind.TITLE:
        return render("the {title} I ordered recently", title=v)
    if k is RefKind.BRAND:
        return render("the {brand} {noun} I ordered", brand=v, noun=noun)
    if k is RefKind.DATE:
        return render("the {noun} I ordered {when}", noun=noun, when=date_phrase(v, now, date_style))
    if k is RefKind.NOTE:
        return render("the {noun} I ordered {why}", noun=noun, why=note_phrase(v))
    if k is RefKind.VARIANT:
        return render("the {value} {noun} I ordered", value=v, noun=noun)
    if k is RefKind.ORDINAL:
        if v == LATEST:
            return render("my most recent {noun} order", noun=noun)
        return render("the {nth} {noun} order I placed recently", nth=v, noun=noun)
    return render("the {noun} I ordered", noun=noun)


def says(text_l: str, phrase: str) -> bool:
    """Whole-word containment in lower-cased text."""
    return re.search(rf"(?<![a-z0-9]){re.escape(phrase.lower())}(?![a-z0-9])", text_l) is not None


def is_question(text: str) -> bool:
    return "?" in text


class OrderUserBase:
    """Reply mechanics shared by the tracking and returns customers.

    Subclasses set `target_order_id`, `full_reference` (what the customer says when asked
    which order) and `protect`, and implement `opening` / `reply`.
    """

    env: str = "orders"
    target_order_id: str
    full_reference: str

    def __init__(self, difficulty: Difficulty, seed: int, disclosure: Disclosure, protect: frozenset[str]) -> None:
        self.difficulty = difficulty
        self.seed = seed
        self._disclosure = disclosure
        self._protect = protect
        self._replies = 0

    def disclosure(self) -> dict[str, bool]:
        return dict(self._disclosure.told)

    def _rng(self, *parts: object) -> random.Random:
        return seeded_rng(self.seed, self.env, *parts)

    def _noisy(self, text: str, rng: random.Random) -> str:
        return add_noise(text, self.difficulty.p_noise, rng, self._protect)

    def _say(self, text: str, act: UserAct, rng: random.Random, revealed: tuple[str, ...] = ()) -> UserMessage:
        return UserMessage(self._noisy(text, rng), act, revealed)

    def _next_reply_rng(self) -> random.Random:
        self._replies += 1
        return self._rng("reply", self._replies)

    @staticmethod
    def _quit(rng: random.Random) -> UserMessage:
        text = rng.choice(("This is taking too long; I'll call the store instead. Bye.",
                           "Sorry, I have to go now. I'll sort it out another time."))
        return UserMessage(text, UserAct.QUIT, ends_episode=True)

    @staticmethod
    def mentioned_orders(agent_text: str) -> list[str]:
        return list(dict.fromkeys(m.upper() for m in ORDER_ID_RE.findall(agent_text)))

    def _order_feedback(self, agent_text: str, rng: random.Random) -> UserMessage | None:
        """Feedback on order ids the agent names: a wrong one is corrected, a short choice including ours
        is answered (a longer list gets the description, `MAX_ORDER_CHOICES`)."""
        named = self.mentioned_orders(agent_text)
        if not named:
            return None
        if self.target_order_id not in named:
            revealed = ("order",) if self._disclosure.reveal("order") else ()
            text = render("No, that's not the order I mean. I mean {ref}.", ref=self.full_reference)
            return self._say(text, UserAct.CORRECT, rng, revealed)
        if len(named) > MAX_ORDER_CHOICES:
            revealed = ("order",) if self._disclosure.reveal("order") else ()
            text = render("That's a lot of orders. I mean {ref}.", ref=self.full_reference)
            return self._say(text, UserAct.CLARIFY if revealed else UserAct.CONTINUE, rng, revealed)
        if len(named) > 1:
            revealed = ("order",) if self._disclosure.reveal("order") else ()
            return self._say(render("It's {id}.", id=self.target_order_id), UserAct.CLARIFY, rng, revealed)
        return None


#: Cues a customer describes an order by (NOUN alone is the vague, withheld form).
DESCRIPTIVE_KINDS = (RefKind.TITLE, RefKind.BRAND, RefKind.DATE, RefKind.NOTE, RefKind.VARIANT, RefKind.ORDINAL)


def choose_reference(world: World, order: Order, line: OrderLine, indirect: bool,
                     rng: random.Random) -> OrderReference:
    """The order id, or a description that matches exactly this line in the whole account."""
    refs = unique_references(world.orders, order, line, world.catalog)
    options = [r for r in refs if r.kind in DESCRIPTIVE_KINDS] if indirect else []
    ref = rng.choice(options) if options else next(r for r in refs if r.kind is RefKind.ORDER_ID)
    hits = matching_lines(world.orders, ref, world.catalog)
    assert {o.order_id for o, _ in hits} == {order.order_id}, f"reference {ref} is ambiguous"
    return ref
