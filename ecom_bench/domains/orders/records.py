"""The customer's orders and returns: the records and the store's return rules.

E_TRACK, E_RETURN and E_JOURNEY share the orders domain (`references.py`: how a customer
describes a line; `book.py`: a world's orders and returns; `eligibility.py`: the return check;
`history.py`: the generator), so a tracking target, a return target and their look-alikes are
built the same way, and the tools, the users and the verifiers read the same objects
(docs/design.md §Upstream pitfalls, 3: nothing is rebuilt). Nothing here reads a `World`.

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


__all__ = [
    "DEFAULT_RETURN_WINDOW_DAYS",
    "REASON_DESCRIPTIONS",
    "RETURN_FEES",
    "RETURN_WINDOW_DAYS",
    "SELLER_FAULT_REASONS",
    "Order",
    "OrderLine",
    "OrderStatus",
    "ReturnMethod",
    "ReturnReason",
    "ReturnRecord",
    "line_leaf",
    "line_row",
    "return_fee",
    "return_window_days",
]
