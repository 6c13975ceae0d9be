"""E_TRACK's hidden goal: which order the customer means, how they said it, and its status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TrackingGoal:
    order_id: str
    status: str  # the order's current status (OrderStatus value)
    reference: dict[str, str]  # the OrderReference the customer gives (kind, leaf, value)
    reference_text: str  # its words ("the VoltEdge wall charger I ordered")
    n_recent: int  # H_orders(d): the target and its look-alikes
    n_orders: int  # the whole account history (look-alikes + background)

    def to_dict(self) -> dict[str, Any]:
        return {"order_id": self.order_id, "status": self.status, "reference": dict(self.reference),
                "reference_text": self.reference_text, "n_recent": self.n_recent, "n_orders": self.n_orders}
