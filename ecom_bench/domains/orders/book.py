"""The customer's account in one world: its orders and the returns made on them.

`world.state(OrderBook)` is the one copy the generator fills, the order tools read and write,
and the customers and verifiers read. Its snapshot section keeps every log's `orders` and
`returns` keys (every episode's world starts with an empty book, `ecom_bench.domains`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ecom_bench.domains.orders.records import Order, ReturnRecord
from ecom_bench.world.state import World


@dataclass
class OrderBook:
    """A world's orders (the history a generator built) and returns (before and during the episode)."""

    orders: list[Order] = field(default_factory=list)
    returns: list[ReturnRecord] = field(default_factory=list)

    def snapshot_section(self) -> dict[str, Any]:
        return {"orders": len(self.orders), "returns": [r.to_dict() for r in self.returns]}


def find_order(world: World, order_id: str) -> Order | None:
    return next((o for o in world.state(OrderBook).orders if o.order_id == order_id), None)


def returns_of(world: World, line_id: str) -> list[ReturnRecord]:
    return [r for r in world.state(OrderBook).returns if r.line_id == line_id]


def next_return_id(world: World) -> str:
    returns = world.state(OrderBook).returns
    taken = {r.return_id for r in returns}
    n = len(returns) + 1
    while f"RET-{n:05d}" in taken:
        n += 1
    return f"RET-{n:05d}"


__all__ = ["OrderBook", "find_order", "next_return_id", "returns_of"]
