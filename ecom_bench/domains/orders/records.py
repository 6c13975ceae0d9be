"""The customer's orders and returns: data model, store rules, references.

E_TRACK, E_RETURN and E_JOURNEY share this module and `domains/orders/history.py` (the
look-ups, the return check and the generator over one `World`), so a tracking target, a
return target and their look-alikes are built the same way, and the tools, the users and
the verifiers read the same objects (docs/design.md §Upstream pitfalls, 3: nothing is rebuilt).
`World` holds these records, so nothing here reads a `World`.

Store rules (also what `return_check_eligibility` applies):

| top category             | return window (days after delivery) |
|--------------------------|-------------------------------------|
| Electronics              | 30                                  |
| Clothing                 | 60                                  |
| Home & Kitchen           | 30                                  |
| Beauty                   | 14                                  |
| Sports & Outdoors        | 45                                  |
| Toys & Games             | 45                                  |
| Office Products          | 30                                  |
| Pet Supplies             | 30                                  |
| Grocery                  | final sale: not returnable          |
| Tools & Home Improvement | 90                                  |
| anything else            | 30                                  |

A line is eligible when its order is delivered, its category is not final sale, it
has no return yet, and the number of calendar days from the delivery date to
`world.now`'s date is at most the window (the last day counts). Customer-caused
reasons (changed mind, does not fit) pay the method's fee; seller-caused ones
(defective, damaged, wrong item, not as described) return free.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ecom_bench.catalog import Catalog, Product
from ecom_bench.catalog.naming import short_name
from ecom_bench.catalog.taxonomy import LEAF_BY_PATH


class OrderStatus(str, enum.Enum):
    CONFIRMED = "confirmed"  # placed, not yet handed to a carrier
    SHIPPED = "shipped"  # handed to the carrier, tracking number issued
    IN_TRANSIT = "in_transit"  # on its way, expected by the ETA
    DELIVERED = "delivered"
    CANCELLED = "cancelled"


#: Return window in days after delivery, by top category; None = final sale.
RETURN_WINDOW_DAYS: dict[str, int | None] = {
    "Electronics": 30,
    "Clothing": 60,
    "Home & Kitchen": 30,
    "Beauty": 14,
    "Sports & Outdoors": 45,
    "Toys & Games": 45,
    "Office Products": 30,
    "Pet Supplies": 30,
    "Grocery": None,
    "Tools & Home Improvement": 90,
}
DEFAULT_RETURN_WINDOW_DAYS = 30


def return_window_days(product: Product) -> int | None:
    """The product's return window in days, or None when it is final sale."""
    return RETURN_WINDOW_DAYS.get(product.top_category, DEFAULT_RETURN_WINDOW_DAYS)


class ReturnReason(str, enum.Enum):
    DEFECTIVE = "defective"
    DAMAGED = "damaged"
    WRONG_ITEM = "wrong_item"
    NOT_AS_DESCRIBED = "not_as_described"
    DOES_NOT_FIT = "does_not_fit"
    CHANGED_MIND = "changed_mind"


REASON_DESCRIPTIONS: dict[ReturnReason, str] = {
    ReturnReason.DEFECTIVE: "the item does not work properly",
    ReturnReason.DAMAGED: "the item arrived damaged",
    ReturnReason.WRONG_ITEM: "a different item was delivered than the one ordered",
    ReturnReason.NOT_AS_DESCRIBED: "the item does not match its description",
    ReturnReason.DOES_NOT_FIT: "wrong size or fit for the customer",
    ReturnReason.CHANGED_MIND: "the customer no longer wants it",
}
SELLER_FAULT_REASONS = frozenset({ReturnReason.DEFECTIVE, ReturnReason.DAMAGED, ReturnReason.WRONG_ITEM,
                                  ReturnReason.NOT_AS_DESCRIBED})


class ReturnMethod(str, enum.Enum):
    PICKUP = "pickup"  # a courier collects it from the customer's address
    DROP_OFF = "drop_off"  # the customer takes it to a partner drop-off point
    MAIL = "mail"  # the customer posts it with a prepaid label


#: Fee deducted from the refund for customer-caused reasons; seller-caused reasons are free.
RETURN_FEES: dict[ReturnMethod, float] = {ReturnMethod.PICKUP: 7.99, ReturnMethod.DROP_OFF: 0.0,
                                          ReturnMethod.MAIL: 4.99}


def return_fee(reason: ReturnReason, method: ReturnMethod) -> float:
    return 0.0 if reason in SELLER_FAULT_REASONS else RETURN_FEES[method]


# ------------------------------------------------------------------- records
@dataclass
class OrderLine:
    line_id: str
    product_id: str
    variant_id: str | None
    quantity: int
    unit_price: float
    #: The product's catalogue row when the generator knows it (never shown, not compared):
    #: spares `line_leaf` an id lookup (a binary search, ~10 µs) per line of a new history.
    row: int | None = field(default=None, repr=False, compare=False)


@dataclass
class Order:
    order_id: str
    placed_at: datetime
    status: OrderStatus
    lines: list[OrderLine]
    eta: date | None = None  # expected delivery (confirmed / shipped / in transit)
    delivered_at: datetime | None = None
    carrier: str | None = None
    tracking_number: str | None = None
    note: str | None = None  # what the customer bought it for ("gift for Mom")
    #: Generator bookkeeping, never shown to the agent: the leaf of the look-alike group this
    #: order belongs to (None for the old background).
    group_leaf: str | None = None

    def line(self, line_id: str) -> OrderLine | None:
        return next((ln for ln in self.lines if ln.line_id == line_id), None)

    @property
    def total(self) -> float:
        return round(sum(ln.unit_price * ln.quantity for ln in self.lines), 2)


@dataclass
class ReturnRecord:
    """A return or exchange of one order line. `intent` is None for returns made before the conversation."""

    return_id: str
    order_id: str
    line_id: str
    product_id: str
    variant_id: str | None
    quantity: int
    kind: str  # "return" | "exchange"
    reason: ReturnReason
    method: ReturnMethod
    fee: float
    refund: float  # 0 for an exchange (the new variant replaces the item)
    created_at: datetime
    new_variant_id: str | None = None
    intent: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"return_id": self.return_id, "order_id": self.order_id, "line_id": self.line_id,
                "product_id": self.product_id, "variant_id": self.variant_id, "quantity": self.quantity,
                "kind": self.kind, "reason": self.reason.value, "method": self.method.value, "fee": self.fee,
                "refund": self.refund, "created_at": self.created_at.isoformat(timespec="minutes"),
                "new_variant_id": self.new_variant_id, "intent": self.intent}


# ---------------------------------------------------------------- references
def product_noun(product: Product) -> str:
    """What a shopper calls the product's kind ("wall charger"): the leaf's title noun."""
    leaf = LEAF_BY_PATH.get(tuple(product.category))
    noun = leaf.noun if leaf is not None else product.leaf_category
    return noun.lower()


class RefKind(str, enum.Enum):
    ORDER_ID = "order_id"  # "order ORD-123456"
    TITLE = "title"  # "the VoltEdge PowerPort Wall Charger I ordered recently"
    BRAND = "brand"  # "the VoltEdge wall charger"
    DATE = "date"  # "the wall charger I ordered on June 3" / "12 days ago"
    NOTE = "note"  # "the wall charger I ordered for the office"
    VARIANT = "variant"  # "the black wall charger"
    ORDINAL = "ordinal"  # "my second-oldest wall charger order" (by date among the leaf's lines, `ORDINALS`)
    NOUN = "noun"  # "the wall charger" (unique only when no look-alike exists)


@dataclass(frozen=True)
class OrderReference:
    """A description of one order line that a customer can give; `matches` says which lines fit it."""

    kind: RefKind
    leaf: str  # the described line's leaf category ("" for ORDER_ID)
    value: str  # order id, short name, brand, ISO date, note, variant value ("" for NOUN)

    def matches(self, order: Order, line: OrderLine, catalog: Catalog) -> bool:
        if self.kind is RefKind.ORDER_ID:
            return order.order_id == self.value
        product = catalog.get(line.product_id)
        if product is None or product.leaf_category != self.leaf:
            return False
        if self.kind is RefKind.TITLE:
            return short_name(product) == self.value
        if self.kind is RefKind.BRAND:
            return product.brand == self.value
        if self.kind is RefKind.DATE:
            return order.placed_at.date().isoformat() == self.value
        if self.kind is RefKind.NOTE:
            return order.note == self.value
        if self.kind is RefKind.VARIANT:
            variant = product.variant(line.variant_id) if line.variant_id else None
            return variant is not None and variant.value == self.value
        return True  # NOUN: any line of the leaf (ORDINAL is resolved by `matching_lines`)

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "leaf": self.leaf, "value": self.value}


#: Ordinal references, by value: the line's place among the account's lines of its kind, oldest
#: first (negative: from the newest). Each value names one end explicitly ("my second-oldest
#: wall charger order"): "the third wall charger order I placed" was read from either end.
ORDINALS: dict[str, int] = {"oldest": 0, "second_oldest": 1, "third_oldest": 2,
                            "latest": -1, "second_latest": -2, "third_latest": -3}


def line_row(catalog: Catalog, line: OrderLine) -> int | None:
    """The catalogue row of a line's product (None when the catalogue lacks it): the row the
    generator kept, else an id lookup."""
    return line.row if line.row is not None else catalog.index_of(line.product_id)


def line_leaf(catalog: Catalog, line: OrderLine) -> str | None:
    """The leaf category of a line's product (None when the catalogue lacks it), read from
    the catalogue's leaf column: no `Product` is made (an account has ~130 lines, and every
    reference is checked against all of them)."""
    row = line_row(catalog, line)
    return None if row is None else catalog.leaf_categories[row]


def _lines_of_leaf(orders: list[Order], leaf: str, catalog: Catalog) -> list[tuple[Order, OrderLine]]:
    """The account's lines of one leaf category, in account order."""
    return [(o, ln) for o in orders for ln in o.lines if line_leaf(catalog, ln) == leaf]


def _by_date(hits: list[tuple[Order, OrderLine]]) -> list[tuple[Order, OrderLine]]:
    return sorted(hits, key=lambda h: h[0].placed_at)


def _leaf_lines(orders: list[Order], leaf: str, catalog: Catalog) -> list[tuple[Order, OrderLine]]:
    """The account's lines of one leaf category, oldest order first."""
    return _by_date(_lines_of_leaf(orders, leaf, catalog))


def _matches(orders: list[Order], ref: OrderReference, catalog: Catalog,
             of_leaf: list[tuple[Order, OrderLine]]) -> list[tuple[Order, OrderLine]]:
    """`matching_lines` given the account's lines of `ref.leaf` (`of_leaf`, account order): only
    those can match a description, so only their products are read."""
    if ref.kind is RefKind.ORDER_ID:
        return [(o, ln) for o in orders if o.order_id == ref.value for ln in o.lines]
    if ref.kind is RefKind.ORDINAL:
        lines = _by_date(of_leaf)
        index = ORDINALS[ref.value]
        if len(lines) < 2 or not -len(lines) <= index < len(lines):
            return []
        return [lines[index]]
    return [(o, ln) for o, ln in of_leaf if ref.matches(o, ln, catalog)]


def matching_lines(orders: list[Order], ref: OrderReference, catalog: Catalog) -> list[tuple[Order, OrderLine]]:
    of_leaf = [] if ref.kind is RefKind.ORDER_ID else _lines_of_leaf(orders, ref.leaf, catalog)
    return _matches(orders, ref, catalog, of_leaf)


def _ordinal_of(orders: list[Order], order: Order, line: OrderLine, leaf: str, catalog: Catalog,
                of_leaf: list[tuple[Order, OrderLine]] | None = None) -> str | None:
    """The ordinal from the nearer end of the line's kind (None beyond the third from either end)."""
    by_date = _by_date(of_leaf) if of_leaf is not None else _leaf_lines(orders, leaf, catalog)
    lines = [(o.order_id, ln.line_id) for o, ln in by_date]
    if len(lines) < 2:
        return None
    index = lines.index((order.order_id, line.line_id))
    from_newest = index - len(lines)
    fits = [v for v, i in ORDINALS.items() if i in (index, from_newest)]
    steps = lambda v: ORDINALS[v] if ORDINALS[v] >= 0 else -ORDINALS[v] - 1  # noqa: E731
    return min(fits, key=steps) if fits else None


def _references(orders: list[Order], order: Order, line: OrderLine, catalog: Catalog,
                of_leaf: list[tuple[Order, OrderLine]] | None) -> list[OrderReference]:
    product = catalog.get(line.product_id)
    assert product is not None
    leaf = product.leaf_category
    refs = [OrderReference(RefKind.ORDER_ID, "", order.order_id),
            OrderReference(RefKind.TITLE, leaf, short_name(product)),
            OrderReference(RefKind.BRAND, leaf, product.brand),
            OrderReference(RefKind.DATE, leaf, order.placed_at.date().isoformat()),
            OrderReference(RefKind.NOUN, leaf, "")]
    if order.note:
        refs.append(OrderReference(RefKind.NOTE, leaf, order.note))
    variant = product.variant(line.variant_id) if line.variant_id else None
    if variant is not None:
        refs.append(OrderReference(RefKind.VARIANT, leaf, variant.value))
    ordinal = _ordinal_of(orders, order, line, leaf, catalog, of_leaf)
    if ordinal is not None:
        refs.append(OrderReference(RefKind.ORDINAL, leaf, ordinal))
    return refs


def references_for(orders: list[Order], order: Order, line: OrderLine, catalog: Catalog) -> list[OrderReference]:
    """Every description of (order, line) among `orders` a customer could give, unique or not."""
    return _references(orders, order, line, catalog, None)


def unique_references(orders: list[Order], order: Order, line: OrderLine, catalog: Catalog) -> list[OrderReference]:
    """The descriptions that pick out exactly this line among all `orders` (ORDER_ID: exactly this order).

    Every description but the order id names the line's leaf, so the account's lines of
    that leaf are found once and each description is checked against them alone."""
    of_leaf = _lines_of_leaf(orders, line_leaf(catalog, line) or "", catalog)
    out = []
    for ref in _references(orders, order, line, catalog, of_leaf):
        hits = _matches(orders, ref, catalog, of_leaf)
        if ref.kind is RefKind.ORDER_ID or [(o.order_id, ln.line_id) for o, ln in hits] == \
                [(order.order_id, line.line_id)]:
            out.append(ref)
    return out


__all__ = ["DEFAULT_RETURN_WINDOW_DAYS", "ORDINALS", "Order", "OrderLine", "OrderReference", "OrderStatus",
           "REASON_DESCRIPTIONS", "RETURN_FEES", "RETURN_WINDOW_DAYS", "RefKind", "ReturnMethod", "ReturnReason",
           "ReturnRecord", "SELLER_FAULT_REASONS", "line_leaf", "line_row", "matching_lines", "product_noun",
           "references_for", "return_fee", "return_window_days", "unique_references"]
