"""How a customer refers to one of their orders, shared by E_TRACK and E_RETURN users.

A reference is an `OrderReference` (domains.orders) picked at build time among those
that match exactly one order line of the whole account; this module only phrases it
and holds what both customers share on top of `users.Customer`: how they react to
order ids the agent names, and a second description when asked again.
"""

from __future__ import annotations

import math
import random
import re
from datetime import date, datetime

from ecom_bench.difficulty import Difficulty
from ecom_bench.domains.orders.book import OrderBook
from ecom_bench.envs.base import EnvAxis
from ecom_bench.users import Customer, UserAct, UserMessage, is_request, render
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World
from ecom_bench.domains.orders.records import Order, OrderLine
from ecom_bench.domains.orders.references import OrderReference, RefKind, matching_lines, unique_references

ORDER_ID_RE = re.compile(r"\bORD-\d{6}\b", re.IGNORECASE)


def lookup_calls(reference: dict[str, str]) -> int:
    """The calls an agent needs to tell which order a customer's `reference` (`OrderReference.to_dict`)
    means: none for an order id, else order_list, and datetime_now for a date ("12 days ago")."""
    kind = reference.get("kind")
    if kind == RefKind.ORDER_ID.value:
        return 0
    return 2 if kind == RefKind.DATE.value else 1


#: The order-history envs' own difficulty axes (E_TRACK, E_RETURN).
P_INDIRECT = EnvAxis("p_ref", "chance the customer describes the order instead of giving its id", "σ((d − 2)/1.5)",
                     lambda d: 1.0 / (1.0 + math.exp(-(d - 2) / 1.5)))
P_SIMILAR = EnvAxis("p_similar", "share of look-alike orders of the target's own brand (harder to tell apart)",
                    "min(0.8, 0.08·d)", lambda d: min(0.8, 0.08 * d))


def p_indirect(difficulty: Difficulty) -> float:
    return float(P_INDIRECT.at(difficulty))


def p_similar(difficulty: Difficulty) -> float:
    return float(P_SIMILAR.at(difficulty))


def note_phrase(note: str) -> str:
    return note if note.startswith("for ") else f"as a {note}"


DATE_STYLES = ("calendar", "days_ago", "weekday")
#: Each ordinal names its end ("second-oldest", "most recent"), so it reads one way only.
ORDINAL_WORDS = {"oldest": "oldest", "second_oldest": "second-oldest", "third_oldest": "third-oldest",
                 "latest": "most recent", "second_latest": "second most recent",
                 "third_latest": "third most recent"}


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
        return render("my {nth} {noun} order", nth=ORDINAL_WORDS[v], noun=noun)
    return render("the {noun} I ordered", noun=noun)


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


#: Cues a customer describes an order by (NOUN alone is the vague, withheld form).
DESCRIPTIVE_KINDS = (RefKind.TITLE, RefKind.BRAND, RefKind.DATE, RefKind.NOTE, RefKind.VARIANT, RefKind.ORDINAL)


def choose_reference(world: World, order: Order, line: OrderLine, indirect: bool,
                     rng: random.Random) -> OrderReference:
    """The order id, or a description that matches exactly this line in the whole account."""
    refs = unique_references(world.state(OrderBook).orders, order, line, world.catalog)
    options = [r for r in refs if r.kind in DESCRIPTIVE_KINDS] if indirect else []
    ref = rng.choice(options) if options else next(r for r in refs if r.kind is RefKind.ORDER_ID)
    hits = matching_lines(world.state(OrderBook).orders, ref, world.catalog)
    assert {o.order_id for o, _ in hits} == {order.order_id}, f"reference {ref} is ambiguous"
    return ref


def alternate_phrases(world: World, order: Order, line: OrderLine, chosen: OrderReference, noun: str,
                      date_style: str, rng: random.Random) -> tuple[str, ...]:
    """The other descriptions that pick out exactly this line (shuffled): what the customer adds
    when asked again, instead of repeating the same words."""
    refs = [r for r in unique_references(world.state(OrderBook).orders, order, line, world.catalog)
            if r.kind in DESCRIPTIVE_KINDS and r != chosen]
    rng.shuffle(refs)
    return tuple(phrase_reference(r, noun, world.now, date_style) for r in refs)
