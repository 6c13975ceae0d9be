"""E_RETURN's hidden goal: the order line, what the customer wants done, and the right outcome."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ReplacementWish:
    """The customer wants a replacement product: same leaf category, in stock, and this constraint."""

    kind: str  # "max_price" | "other_brand" | "min_rating"
    value: float | str  # the price cap, the brand to avoid, or the minimum rating

    def satisfied_by(self, price: float, brand: str, rating: float) -> bool:
        if self.kind == "max_price":
            return price <= float(self.value)
        if self.kind == "other_brand":
            return brand != self.value
        return rating >= float(self.value)

    def describe(self) -> str:
        if self.kind == "max_price":
            return f"priced at most ${float(self.value):.2f}"
        if self.kind == "other_brand":
            return f"not from {self.value}"
        return f"rated at least {float(self.value):.1f}"


@dataclass(frozen=True)
class ReturnsGoal:
    order_id: str
    line_id: str
    product_id: str
    variant_id: str | None
    leaf: str
    kind: str  # "return" | "exchange"
    reason: str  # ReturnReason value
    method: str  # ReturnMethod value
    eligible: bool
    eligibility: str  # the store rule's verdict on the line at build time
    edge: str | None  # which edge case near the return window, if any
    reference: dict[str, str]
    reference_text: str
    n_recent: int
    new_variant_id: str | None = None  # exchange: the variant wanted instead
    new_variant_value: str | None = None
    replacement: ReplacementWish | None = None
    replacement_example: str | None = None  # one valid replacement (the oracle shows it, then answers it)

    @property
    def outcome(self) -> str:
        if not self.eligible:
            return "not_eligible"
        return "exchange_started" if self.kind == "exchange" else "return_started"

    def to_dict(self) -> dict[str, Any]:
        return {"order_id": self.order_id, "line_id": self.line_id, "product_id": self.product_id,
                "variant_id": self.variant_id, "leaf": self.leaf, "kind": self.kind, "reason": self.reason,
                "method": self.method, "eligible": self.eligible, "eligibility": self.eligibility,
                "edge": self.edge, "outcome": self.outcome, "reference": dict(self.reference),
                "reference_text": self.reference_text, "n_recent": self.n_recent,
                "new_variant_id": self.new_variant_id, "new_variant_value": self.new_variant_value,
                "replacement": None if self.replacement is None else {"kind": self.replacement.kind,
                                                                      "value": self.replacement.value},
                "replacement_example": self.replacement_example}
