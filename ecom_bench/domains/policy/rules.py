"""The store's policy rules (E_POLICY): the rule model, its documents, its answers, the questions.

A `PolicyRule` is data with one meaning: a *family* (what it sets: a shipping fee, a
return window, a return resolution, ...), a *scope* (the region, department or channel
it applies to), a base, and B clauses over the customer's situation (the values of
`SLOTS`). `PolicyRule.compute(situation)` is the only definition of an answer (the
verifier calls it, no answer table exists) and `PolicyRule.document()` renders the same
structure as the policy text the agent retrieves, so text and answer cannot disagree.

Numeric rules start from an amount that scales with one of the customer's own amounts
(a base plus a rate per unit: "$12.99 plus $0.80 per lb the package weighs", "23 days
plus 0.13 days per dollar of the item price"; or a share: "15% of the item price"),
then apply every clause in order; each clause has an
effect on both branches ("if the package weighs at least 20 lb, add $8.00; otherwise
add $2.00"), so every clause must be read and its condition evaluated. `make_rule`
(`generator.py`)
draws a rule *together with* a situation and keeps it only when flipping or skipping
any single clause (or all of them) moves the answer by at least `MIN_CLAUSE_EFFECT`
(far outside the success tolerance), which is what makes B_branch a real axis.
Categorical rules are decision lists (the first clause whose condition holds decides);
which clause decides, or the default, is drawn uniformly, the clauses before it fail
and each of those decides the answer too (flip it and another outcome wins).

No structural tells: conditions are drawn before the customer's values, and the values
after them to make each condition hold or fail as drawn, so a condition's text does not
say whether it holds; in a numeric rule each clause holds at even odds. A guess from
the rule text alone is right at chance: 1 in B + 1 for a decision list; for a numeric
rule, even a reader who guessed which clauses hold (1 in 2^B) still needs the customer's
amount, which spreads the answer over far more than the success tolerance (about 0.6%):
a rule with a constant base let "guess the clause combination" be right 2^-B of the time.
Day and month answers round to whole units, halves up, as the document says.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Literal

#: A clause may not be skippable: flipping or skipping it moves the answer at least this much.
MIN_CLAUSE_EFFECT = 0.05


# ------------------------------------------------------------------ slots
@dataclass(frozen=True)
class Slot:
    """One fact of the customer's situation a rule can read (public: it is the store's vocabulary)."""

    key: str
    label: str  # as the policy text names it: "order subtotal"
    statement: str  # how the customer says it: "my order subtotal is {value}"
    # words that name this fact wherever a question uses them (word prefixes); the phrasings whose
    # meaning depends on context ("how much", "when", "where") are read by envs/policy/questions.py
    keywords: tuple[str, ...]
    choices: tuple[str, ...] = ()  # a categorical slot's values (unique across slots)
    unit: str = ""  # a numeric slot's unit: "$", "lb", "item", "day", "month", "order"
    lo: float = 0.0
    hi: float = 0.0
    decimals: int = 0
    per: str = ""  # per-unit phrase for "add $0.40 per lb the package weighs" ("" = not offered)
    scope_phrase: str = ""  # for a scope slot: "orders shipping to {value}"

    @property
    def is_choice(self) -> bool:
        return bool(self.choices)

    def fmt(self, value: Any) -> str:
        return str(value) if self.is_choice else fmt_quantity(self.unit, float(value))

    def draw(self, rng: random.Random) -> Any:
        if self.is_choice:
            return rng.choice(self.choices)
        if self.decimals == 0:
            return rng.randint(int(self.lo), int(self.hi))
        return round(rng.uniform(self.lo, self.hi), self.decimals)

    def say(self, value: Any) -> str:
        """The customer's sentence stating this slot's value."""
        shown = self.fmt(value)
        article = "an" if shown[:1].lower() in "aeiou" else "a"
        return self.statement.format(value=shown, a_value=f"{article} {shown}")

    def thresholds(self) -> list[float]:
        """Round numbers strictly inside the slot's range, as a policy would write them.

        Not the top of the range: "at least $400" on a $15-$400 subtotal holds only at exactly $400,
        which pinned the customer's amount (and an answer scaling with it) to one value."""
        span = self.hi - self.lo
        step = 1.0 if span <= 15 else 5.0 if span <= 80 else 10.0 if span <= 200 else 25.0
        start = math.ceil(self.lo / step) * step
        steps = (start + i * step for i in range(int((self.hi - start) // step) + 1))
        return [t for t in steps if self.lo < t < self.hi]


def fmt_quantity(unit: str, x: float) -> str:
    if unit == "$":
        return f"${x:,.2f}"
    shown = f"{x:g}" if unit == "lb" else f"{int(round(x))}"
    if unit == "lb":
        return f"{shown} lb"
    return f"{shown} {unit}{'' if shown == '1' else 's'}"


def fmt_rate(unit: str, x: float) -> str:
    """A per-unit rate as a policy writes it: "$0.45", "0.35 days", "0.05 months"."""
    return f"${x:.2f}" if unit == "$" else f"{x:g} {unit}s"


def _slots(*slots: Slot) -> dict[str, Slot]:
    out = {s.key: s for s in slots}
    seen: dict[str, str] = {}
    for s in slots:  # a choice value names its slot: the customer's words stay unambiguous
        for c in s.choices:
            assert c.lower() not in seen, f"choice {c!r} of {s.key} also belongs to {seen[c.lower()]}"
            seen[c.lower()] = s.key
    return out


SLOTS: dict[str, Slot] = _slots(
    Slot("subtotal", "order subtotal", "my order subtotal is {value}",
         ("subtotal", "sub-total", "order total", "grand total", "order value", "basket total", "cart total"),
         unit="$", lo=15, hi=400, decimals=2),
    Slot("weight", "package weight", "the package weighs {value}", ("weigh", "heavy", "heavier"),
         unit="lb", lo=1, hi=60, decimals=1, per="per lb the package weighs"),
    Slot("items", "number of items", "there are {value} in the order",
         ("number of item", "item count", "quantity", "how many item", "how many piece", "how many product",
          "how many thing", "how many unit"),
         unit="item", lo=1, hi=12, per="per item in the order"),
    Slot("days_since_delivery", "days since delivery", "it was delivered {value} ago",
         ("days since deliver", "delivery date", "date of delivery", "since it arrived", "since it was delivered",
          "since you received"),
         unit="day", lo=1, hi=60, per="per day since delivery"),
    Slot("days_since_purchase", "days since purchase", "I bought it {value} ago",
         ("days since purchas", "days since you bought", "purchase date", "date of purchase", "order date",
          "since you bought", "since you purchased", "since you ordered"),
         unit="day", lo=1, hi=45, per="per day since purchase"),
    Slot("item_price", "item price", "the item cost {value}",
         ("item price", "purchase price", "retail price", "full price", "item cost", "price of the item",
          "price of the product"),
         unit="$", lo=10, hi=900, decimals=2, per="per dollar of the item price"),
    Slot("price_gap", "price difference", "the competitor sells it for {value} less",
         ("price difference", "price gap", "difference in price", "undercut", "price beat", "how much cheaper",
          "how much lower", "how much less"),
         unit="$", lo=3, hi=150, decimals=2),
    Slot("item_age", "item age", "I've had it for {value}", ("item age", "how old", "had it for", "owned it for"),
         unit="month", lo=1, hi=36, per="per month of item age"),
    Slot("orders_year", "order count over the past 12 months", "I placed {value} in the past 12 months",
         ("order count", "order history", "how many orders", "how many times", "how often", "how frequently",
          "number of orders", "orders with us", "orders from us", "ordered from us"),
         unit="order", lo=0, hi=40, per="per order placed in the past 12 months"),
    Slot("card_amount", "gift card amount", "I'm loading {value} onto the gift card",
         ("gift card amount", "gift card value", "card amount", "card value", "face value", "loading", "top up",
          "topping up", "denomination", "card balance"),
         unit="$", lo=25, hi=500, decimals=2),
    Slot("tier", "membership tier", "I'm a {value} member",
         ("member", "tier", "loyalty", "reward", "vip", "premium", "subscri"),
         choices=("Basic", "Silver", "Gold", "Platinum")),
    Slot("size_class", "size class", "the item is classed as {value}",
         ("size class", "oversize", "over-size", "bulky", "fragile", "dimension", "regular size", "regular-size",
          "breakable", "delicate"),
         choices=("regular-size", "oversized", "bulky", "fragile")),
    Slot("speed", "shipping speed", "I picked {value} shipping",
         ("shipping speed", "shipping option", "shipping method", "shipping service", "shipping type",
          "shipping choice", "delivery speed", "delivery option", "delivery method", "delivery service", "expedited",
          "express", "next-day", "next day", "two-day", "rush"),
         choices=("standard", "expedited", "overnight", "same-day")),
    Slot("payment", "payment method", "my payment method is {value}",
         ("payment", "pay with", "paid with", "paying with", "pay by", "paid by", "paying by", "pay using",
          "paid using", "how did you pay", "how you paid", "how were you paying", "paypal"),
         choices=("credit card", "debit card", "PayPal", "store credit")),
    Slot("channel", "purchase channel", "I ordered through the {value}",
         ("purchase channel", "sales channel", "channel", "website", "web site", "mobile app", "the app", "our app",
          "in-store", "in person", "call center", "call centre", "by phone", "over the phone", "retail store"),
         choices=("website", "mobile app", "retail store", "call center"),
         scope_phrase="purchases made through the {value}"),
    Slot("condition", "item condition", "the item is {value}",
         ("condition", "unopened", "opened", "sealed", "damag", "defect", "broken", "faulty", "original packaging",
          "original box"),
         choices=("unopened", "opened", "damaged", "defective")),
    Slot("reason", "return reason", "the reason for the return is: {value}", ("reason",),
         choices=("changed my mind", "wrong size", "arrived late", "not as described")),
    Slot("category", "product department", "it's from the {value} department",
         ("department", "categor", "kind of item", "kind of product", "type of item", "type of product",
          "sort of item", "sort of product", "product type"),
         choices=("electronics", "apparel", "home goods", "toys", "beauty", "sports gear", "groceries"),
         scope_phrase="items from the {value} department"),
    Slot("region", "shipping destination", "I'm shipping to {value}",
         ("destination", "address", "zip", "postcode", "postal code", "post code", "region", "where do you live",
          "where are you"),
         choices=("the contiguous US", "Alaska", "Hawaii", "Puerto Rico", "Canada"),
         scope_phrase="orders shipping to {value}"),
    Slot("season", "purchase period", "the purchase falls in the {value}",
         ("season", "time of year", "holiday", "black friday", "clearance", "purchase period", "christmas"),
         choices=("holiday season", "regular season", "clearance sale", "Black Friday week")),
    Slot("competitor_type", "competitor type", "the lower price is at {a_value}",
         ("competitor", "retailer", "marketplace", "warehouse club", "seller", "other store", "another store",
          "other shop", "another shop", "local store", "local shop"),
         choices=("authorized retailer", "online marketplace", "local store", "warehouse club")),
    Slot("item_state", "item state", "I bought it {value}",
         ("refurb", "open-box", "open box", "brand new", "second-hand", "second hand", "secondhand", "pre-owned",
          "preowned"),
         choices=("brand new", "refurbished", "open-box")),
    Slot("registered", "registration status", "the product is {value}", ("regist",),
         choices=("registered", "unregistered")),
)


# --------------------------------------------------------------- families
@dataclass(frozen=True)
class Family:
    """A kind of rule: what it sets, over which scope, reading which slots."""

    key: str
    code: str  # rule-id prefix
    title: str  # "Shipping fees"
    sets: str  # "the shipping fee"
    unit: str  # "$", "day", "month"; "" for a categorical family
    scope: str  # the scope slot
    pool: tuple[str, ...]  # slots its clauses may read
    questions: tuple[str, ...]  # how the customer asks
    base: tuple[float, float] = (0.0, 0.0)  # constant base range (unit of the answer) ...
    rate_slot: str | None = None  # ... plus a rate per unit of this amount of the customer's ...
    rate: tuple[float, float, float] = (0.0, 0.0, 0.0)  # ... drawn from (lo, hi, step)
    base_slot: str | None = None  # ... or a percentage of this slot's value
    base_pct: tuple[int, int] = (100, 100)
    floor: float = 0.0
    outcomes: tuple[str, ...] = ()  # a categorical family's answer options
    #: The answer is itself a limit (a window, a coverage period): "up to 30 days" states it, where
    #: "up to $50" only bounds a fee.
    answer_is_limit: bool = False

    @property
    def kind(self) -> Literal["number", "choice"]:
        return "choice" if self.outcomes else "number"

    @property
    def amount_slot(self) -> str | None:
        """The customer's amount the start of a numeric rule scales with (None: categorical)."""
        return self.base_slot or self.rate_slot

    @property
    def max_clauses(self) -> int | None:
        """A decision list needs distinct outcomes for its clauses and its default."""
        return len(self.outcomes) - 1 if self.outcomes else None


FAMILIES: dict[str, Family] = {f.key: f for f in (
    Family("shipping_fee", "SHIP", "Shipping fees", "the shipping fee", "$", "region",
           ("subtotal", "items", "tier", "size_class", "speed", "payment", "category", "channel"),
           ("Per your policy, how much will shipping cost me?", "What shipping fee will I pay under your policy?"),
           base=(4, 15), rate_slot="weight", rate=(0.15, 0.95, 0.05)),
    Family("delivery_time", "DLVR", "Delivery times", "the delivery time", "day", "region",
           ("speed", "size_class", "items", "tier", "subtotal", "category", "channel"),
           ("Per your shipping policy, how many days will it take to reach me?",
            "Under your policy, how many days until my order gets here?"), base=(2, 6), floor=1,
           rate_slot="weight", rate=(0.4, 0.9, 0.05)),
    Family("return_window", "RWIN", "Return windows", "the return window", "day", "category",
           ("tier", "condition", "channel", "season", "payment", "reason", "item_state"),
           ("What does your policy say: how many days do I have to return it?",
            "Per your policy, how many days is my return window?"), base=(14, 45), floor=1,
           rate_slot="item_price", rate=(0.05, 0.15, 0.01), answer_is_limit=True),
    Family("restocking_fee", "RSTK", "Restocking fees", "the restocking fee", "$", "category",
           ("condition", "days_since_delivery", "tier", "reason", "channel", "payment", "season"),
           ("Under your policy, how much is the restocking fee if I send it back?",
            "What restocking fee does your policy charge me for this return?"),
           base_slot="item_price", base_pct=(5, 25)),
    Family("refund_amount", "RFND", "Refund amounts", "the refund amount", "$", "category",
           ("condition", "days_since_delivery", "reason", "payment", "tier", "channel", "season"),
           ("Per your policy, how much money will I get back if I return it?",
            "Under your return policy, how much is my refund?"), base_slot="item_price"),
    Family("price_match", "PMCH", "Price matching", "the price-match credit", "$", "category",
           ("competitor_type", "days_since_purchase", "tier", "item_price", "channel", "payment", "season"),
           ("What price-match credit does your policy give me?",
            "Under your price-match policy, how much credit will I get?"), base_slot="price_gap"),
    Family("warranty", "WRTY", "Warranty coverage", "the warranty coverage", "month", "category",
           ("tier", "channel", "item_state", "registered", "season", "payment"),
           ("Per your warranty policy, how many months of coverage do I get?",
            "How many months of warranty does your policy give me?"), base=(6, 18),
           rate_slot="item_price", rate=(0.04, 0.09, 0.01), answer_is_limit=True),
    Family("member_discount", "MDSC", "Member discounts", "the member discount", "$", "channel",
           ("tier", "subtotal", "items", "category", "payment", "orders_year", "season"),
           ("Per your discount policy, how much will I save on this order?",
            "What discount does your policy give me on this order?"), base_slot="subtotal", base_pct=(3, 15)),
    Family("gift_card_bonus", "GIFT", "Gift card bonuses", "the gift card bonus", "$", "channel",
           ("card_amount", "tier", "payment", "orders_year", "season", "region"),
           ("Per your gift card policy, how much bonus value will I get?",
            "What bonus does your policy add to my gift card?"), base_slot="card_amount", base_pct=(5, 20)),
    Family("return_resolution", "RRES", "Return resolutions", "the return resolution", "", "category",
           ("condition", "days_since_delivery", "reason", "tier", "channel", "payment", "item_price", "season"),
           ("What does your policy say I get for this return: my money back, an exchange, something else?",
            "Under your return policy, what resolution will I get?"),
           outcomes=("full refund", "store credit", "exchange only", "repair", "partial refund", "replacement",
                     "gift card refund", "not eligible")),
    Family("shipping_service", "SSVC", "Shipping service selection", "the shipping service", "", "region",
           ("weight", "size_class", "speed", "subtotal", "tier", "items", "category"),
           ("Which shipping service will my order go by, per your policy?",
            "Per your shipping policy, which carrier service will be used?"),
           outcomes=("ground", "two-day air", "overnight air", "freight", "economy mail", "white-glove delivery",
                     "local courier", "consolidated shipping")),
    Family("warranty_service", "WSVC", "Warranty service options", "the warranty service", "", "category",
           ("item_age", "item_price", "tier", "registered", "item_state", "channel", "condition"),
           ("Per your warranty policy, what kind of service will I get?",
            "What warranty service does your policy give me for this?"),
           outcomes=("mail-in repair", "on-site repair", "advance replacement", "refund", "depot repair",
                     "parts only", "not covered", "exchange at store")),
)}

#: Every categorical answer option of the store's rules (what a final answer may name).
OUTCOMES: tuple[str, ...] = tuple(dict.fromkeys(o for f in FAMILIES.values() for o in f.outcomes))


# ------------------------------------------------------- rule components
@dataclass(frozen=True)
class Condition:
    slot: str
    op: Literal["at_least", "under", "in"]
    threshold: float = 0.0
    values: tuple[str, ...] = ()

    def holds(self, situation: dict[str, Any]) -> bool:
        v = situation[self.slot]
        if self.op == "in":
            return v in self.values
        return float(v) >= self.threshold if self.op == "at_least" else float(v) < self.threshold

    def text(self) -> str:
        s = SLOTS[self.slot]
        if self.op == "in":
            vals = list(self.values)
            listed = vals[0] if len(vals) == 1 else ", ".join(vals[:-1]) + " or " + vals[-1]
            return f"the {s.label} is {listed}"
        return f"the {s.label} is {'at least' if self.op == 'at_least' else 'under'} {s.fmt(self.threshold)}"


EffectOp = Literal["add", "subtract", "percent_off", "percent_more", "per_unit"]


@dataclass(frozen=True)
class Effect:
    op: EffectOp
    amount: float
    slot: str | None = None  # per_unit: the slot whose value multiplies the rate

    def apply(self, value: float, situation: dict[str, Any]) -> float:
        if self.op == "add":
            return value + self.amount
        if self.op == "subtract":
            return value - self.amount
        if self.op == "percent_off":
            return value * (1 - self.amount / 100)
        if self.op == "percent_more":
            return value * (1 + self.amount / 100)
        return value + self.amount * float(situation[self._per_slot()])  # per_unit

    def _per_slot(self) -> str:
        if self.slot is None:
            raise ValueError("a per_unit effect names the slot whose value multiplies its rate")
        return self.slot

    def text(self, unit: str) -> str:
        if self.op == "percent_off":
            return f"take {self.amount:g}% off"
        if self.op == "percent_more":
            return f"add {self.amount:g}%"
        if self.op == "per_unit":
            return f"add {fmt_quantity(unit, self.amount)} {SLOTS[self._per_slot()].per}"
        return f"{self.op} {fmt_quantity(unit, self.amount)}"


@dataclass(frozen=True)
class Clause:
    condition: Condition
    then: Effect | None = None  # numeric rules: both branches have an effect
    otherwise: Effect | None = None
    outcome: str | None = None  # categorical rules: the outcome when the condition holds


class OfFamily:
    """What a rule and a question share through their `family`: the kind and unit of answer."""

    family: str

    @property
    def fam(self) -> Family:
        return FAMILIES[self.family]

    @property
    def kind(self) -> Literal["number", "choice"]:
        return self.fam.kind

    @property
    def unit(self) -> str:
        return self.fam.unit


@dataclass(frozen=True)
class PolicyRule(OfFamily):
    rule_id: str
    family: str
    scope: str  # the value of the family's scope slot this rule applies to
    clauses: tuple[Clause, ...]
    base: float = 0.0  # the constant base, or the percentage of the family's base slot
    default: str | None = None  # categorical: the outcome when no clause holds
    rate: float = 0.0  # with a constant base: added per unit of the family's rate slot


    @property
    def title(self) -> str:
        scope = SLOTS[self.fam.scope].scope_phrase.format(value=self.scope)
        return f"{self.fam.title}: {scope}"

    def slots(self) -> tuple[str, ...]:
        """The situation slots the answer reads (the scope aside), in reading order."""
        amount = self.fam.amount_slot
        keys = ([amount] if amount else []) + [c.condition.slot for c in self.clauses]
        return tuple(dict.fromkeys(keys))

    def start(self, situation: dict[str, Any]) -> float:
        """The running amount before the clauses: base% of the base slot, or base + rate per unit."""
        fam = self.fam
        if fam.base_slot:
            return self.base / 100 * float(situation[fam.base_slot])
        if fam.rate_slot:
            return self.base + self.rate * float(situation[fam.rate_slot])
        return self.base

    def _finish(self, value: float) -> float:
        """The floor, then rounding: to the cent, or to a whole day/month with halves up (as the text says)."""
        value = max(self.fam.floor, value)
        if self.fam.unit == "$":
            return round(value, 2)
        return float(math.floor(round(value, 6) + 0.5))

    def compute(self, situation: dict[str, Any], *, skip: int | None = None, flip: int | None = None) -> float | str:
        """The rule's answer for a situation (`skip`/`flip` one clause: the dependency check)."""
        if self.kind == "choice":
            for i, c in enumerate(self.clauses):
                if i != skip and c.condition.holds(situation) != (i == flip):
                    return c.outcome  # type: ignore[return-value]
            return self.default  # type: ignore[return-value]
        value = self.start(situation)
        for i, c in enumerate(self.clauses):
            if i == skip:
                continue
            effect = c.then if c.condition.holds(situation) != (i == flip) else c.otherwise
            value = effect.apply(value, situation)  # type: ignore[union-attr]
        return self._finish(value)

    def decisive(self, situation: dict[str, Any]) -> int:
        """Categorical: the index of the clause that decides (len(clauses): the default)."""
        return next((i for i, c in enumerate(self.clauses) if c.condition.holds(situation)), len(self.clauses))

    def _base_alone(self, situation: dict[str, Any]) -> float:
        return self._finish(self.start(situation))

    def depends_on_every_clause(self, situation: dict[str, Any]) -> bool:
        """Would a reader who skipped or mis-evaluated a clause that matters get the answer wrong?

        Numeric: every clause matters: flipping or skipping any one moves the answer by
        >= MIN_CLAUSE_EFFECT, and so does skipping them all (the bare base is never the
        answer, or "answer the base" would be a guess that needs no facts).
        Categorical: the clauses up to the decisive one matter: flipping any of them
        changes the outcome. The clauses after it cannot change the answer (the first
        clause that holds decides), and they must not be forced to: requiring every clause
        to matter made the decisive clause always the last one (or the default), so "answer
        the last clause's outcome" was right half the time without a single fact. The
        decisive clause is drawn uniformly instead (`_truths`), so a guess of its position
        is right 1 time in B + 1.
        """
        answer = self.compute(situation)
        if self.kind == "choice":
            return all(self.compute(situation, flip=i) != answer for i in range(self.decisive(situation) + 1)
                       if i < len(self.clauses))
        if abs(self._base_alone(situation) - float(answer)) < MIN_CLAUSE_EFFECT * abs(float(answer)):
            return False
        for i in range(len(self.clauses)):
            for variant in (self.compute(situation, skip=i), self.compute(situation, flip=i)):
                if abs(float(variant) - float(answer)) < MIN_CLAUSE_EFFECT * abs(float(answer)):
                    return False
        return True

    def document(self) -> str:
        fam = self.fam
        scope_slot = SLOTS[fam.scope]
        lines = [f"{self.rule_id} · {self.title}",
                 f"Applies to: {scope_slot.scope_phrase.format(value=self.scope)}."]
        if self.kind == "choice":
            lines += [f"Sets: {fam.sets}. Possible outcomes: {', '.join(fam.outcomes)}.",
                      "Check the clauses in order; the first one whose condition holds decides:"]
            lines += [f"{i}. If {c.condition.text()}, {fam.sets} is {c.outcome}."
                      for i, c in enumerate(self.clauses, 1)]
            lines.append(f"If none of them holds, {fam.sets} is {self.default}.")
            return "\n".join(lines)
        unit_words = {"$": "in dollars", "day": "in days", "month": "in months"}[fam.unit]
        if fam.base_slot:
            base = f"{self.base:g}% of the {SLOTS[fam.base_slot].label}"
        else:
            base = f"a base of {fmt_quantity(fam.unit, self.base)}"
        if fam.rate_slot:
            base += f" plus {fmt_rate(fam.unit, self.rate)} {SLOTS[fam.rate_slot].per}"
        lines += [f"Sets: {fam.sets}, {unit_words}.",
                  f"Start from {base}. Then apply every clause below, in order, to the running amount:"]
        lines += [f"{i}. If {c.condition.text()}, {c.then.text(fam.unit)}; otherwise "  # type: ignore[union-attr]
                  f"{c.otherwise.text(fam.unit)}." for i, c in enumerate(self.clauses, 1)]  # type: ignore[union-attr]
        end = (f"{fam.sets[0].upper()}{fam.sets[1:]} is never below {fmt_quantity(fam.unit, fam.floor)}")
        end += ("; round it to the nearest cent." if fam.unit == "$"
                else f"; round it to the nearest whole {fam.unit} (a half rounds up).")
        lines.append(end)
        return "\n".join(lines)


# -------------------------------------------------------- the questions
@dataclass(frozen=True)
class PolicyQuestion(OfFamily):
    """What one customer asks (the rule family: the kind and unit of answer it wants) and the facts they hold.

    Holds no answer. The customer's question names its topic and the customer states any fact
    asked for, so nothing here is hidden from the agent: the answer tool reads a free-text
    answer against it (`answers.py`), to tell the answer from the facts around it.
    """

    family: str
    situation: dict[str, Any]  # slot -> value: every fact of the customer's case


    @property
    def outcomes(self) -> tuple[str, ...]:
        return self.fam.outcomes

    @property
    def sets(self) -> str:
        return self.fam.sets

    def facts(self) -> list[tuple[str, float | str]]:
        """The customer's facts as (dimension, value): "$", "day", "month", "other" for amounts, "option"
        for named values ("store credit" is a payment method here, not an outcome)."""
        out: list[tuple[str, float | str]] = []
        for key, value in self.situation.items():
            slot = SLOTS[key]
            if slot.is_choice:
                out.append(("option", str(value)))
            else:
                out.append((slot.unit if slot.unit in ("$", "day", "month") else "other", float(value)))
        return out
