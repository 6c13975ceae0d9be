"""E_CART's hidden goal and the shared cart-matching rule.

`goal_units` and `cart_units` define the compound key (product_id, variant_id when
the variant is required) once; the verifier's F1 and the user's corrections both
use them, so the user never complains about a line the verifier accepts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from ecom_bench.world import CartLine

Key = tuple[str, str | None]


@dataclass(frozen=True)
class CartTarget:
    product_id: str
    short_name: str
    variant_id: str  # the variant the user wants (any variant is fine unless variant_required)
    variant_attribute: str | None
    variant_value: str | None
    variant_required: bool
    quantity: int

    @property
    def key(self) -> Key:
        return (self.product_id, self.variant_id if self.variant_required else None)

    @property
    def variant_slot(self) -> str:
        return f"{self.product_id}.variant"

    @property
    def quantity_slot(self) -> str:
        return f"{self.product_id}.quantity"


@dataclass(frozen=True)
class CartGoal:
    targets: tuple[CartTarget, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"targets": [asdict(t) for t in self.targets]}

    def target(self, product_id: str) -> CartTarget | None:
        return next((t for t in self.targets if t.product_id == product_id), None)

    def goal_units(self) -> Counter[Key]:
        return Counter({t.key: t.quantity for t in self.targets})

    def line_key(self, line: CartLine) -> Key:
        target = self.target(line.product_id)
        if target is not None and not target.variant_required:
            return (line.product_id, None)
        return (line.product_id, line.variant_id)

    def cart_units(self, cart: list[CartLine]) -> Counter[Key]:
        units: Counter[Key] = Counter()
        for line in cart:
            units[self.line_key(line)] += line.quantity
        return units


def unit_f1(goal: Counter[Key], cart: Counter[Key]) -> tuple[float, int]:
    """F1 over units of compound keys, and the number of matched units."""
    matched = sum(min(n, cart.get(k, 0)) for k, n in goal.items())
    n_goal, n_cart = sum(goal.values()), sum(cart.values())
    if matched == 0 or n_goal == 0 or n_cart == 0:
        return 0.0, matched
    precision, recall = matched / n_cart, matched / n_goal
    return 2 * precision * recall / (precision + recall), matched
