"""The store's domains beyond the shopping core, each with its data model, generator, state and
tools together: `orders/` (the customer's orders and returns) and `policy/` (the store's rule book).

The shopping core every env shares (catalogue view, cart, stock, visits, the ids shown and acted
on, the tool log, the final answers, the clock, stock-outs) stays in `ecom_bench.world` with its
tools. A domain keeps its per-episode state in a typed object reached through `World.state(...)`
(`world.state(OrderBook).orders`, `world.state(Rulebook)`), so `World` knows no domain; every
episode's world starts with each built-in domain's state (`DOMAIN_STATES`), empty, so every
log's snapshot has the same keys whichever env wrote it.
"""

from __future__ import annotations

from ecom_bench.domains.orders.book import OrderBook
from ecom_bench.domains.policy.rulebook import Rulebook

#: The built-in domains' state types, in the order their snapshot sections appear.
DOMAIN_STATES: tuple[type, ...] = (OrderBook, Rulebook)

__all__ = ["DOMAIN_STATES", "OrderBook", "Rulebook"]
