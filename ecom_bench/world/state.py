"""The mutable state of one episode.

A generator builds the `World` once from its seed; the tools act on that same object
and the verifier reads it, so the three can never disagree (SPEC pitfall 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ecom_bench.catalog import Catalog, Product, Variant
from ecom_bench._seeding import seeded_rng
from ecom_bench.difficulty import Difficulty


@dataclass
class CartLine:
    product_id: str
    variant_id: str | None
    quantity: int

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.product_id, self.variant_id)


@dataclass(frozen=True)
class VisitRecord:
    """A product the customer viewed before the conversation (E_CART visit history)."""

    product_id: str
    days_ago: int


@dataclass
class ToolCallRecord:
    turn: int
    name: str
    arguments: dict[str, Any]
    ok: bool
    result: str


@dataclass
class World:
    """Catalogue view + per-episode state; never shared between episodes."""

    catalog: Catalog
    difficulty: Difficulty
    seed: int
    search_engine: Any = None  # ecom_bench.catalog.search.SearchEngine (kept untyped: lazy import)
    visit_history: list[VisitRecord] = field(default_factory=list)
    cart: list[CartLine] = field(default_factory=list)
    stock: dict[str, int] = field(default_factory=dict)  # per-episode overrides, by variant or product id
    seen_ids: set[str] = field(default_factory=set)  # every id a tool has shown the agent
    referenced_ids: list[str] = field(default_factory=list)  # ids the agent acted on (hallucination check)
    tool_log: list[ToolCallRecord] = field(default_factory=list)
    checked_out: bool = False
    final_answer: dict[str, Any] | None = None

    # --- catalogue view ---------------------------------------------------
    def product(self, product_id: str) -> Product | None:
        return self.catalog.get(product_id)

    def stock_of(self, product: Product, variant: Variant | None = None) -> int:
        if variant is not None:
            return self.stock.get(variant.id, variant.stock)
        return self.stock.get(product.id, product.stock)

    def in_stock(self, product: Product, variant: Variant | None = None) -> bool:
        if variant is None and product.variants:
            return any(self.stock_of(product, v) > 0 for v in product.variants)
        return self.stock_of(product, variant) > 0

    # --- cart --------------------------------------------------------------
    def cart_line(self, product_id: str, variant_id: str | None) -> CartLine | None:
        for line in self.cart:
            if line.key == (product_id, variant_id):
                return line
        return None

    def cart_units(self) -> int:
        return sum(line.quantity for line in self.cart)

    def snapshot(self) -> dict[str, Any]:
        """The final state for score metadata and the log viewer."""
        return {
            "cart": [
                {"product_id": ln.product_id, "variant_id": ln.variant_id, "quantity": ln.quantity}
                for ln in self.cart
            ],
            "checked_out": self.checked_out,
            "final_answer": self.final_answer,
            "stock_changes": dict(sorted(self.stock.items())),
            "seen_ids": len(self.seen_ids),
            "tool_calls": len(self.tool_log),
        }

    # --- search ------------------------------------------------------------
    def search(self, query: str, filters: Any, limit: int) -> list[Product]:
        """Hybrid catalogue search at this episode's difficulty.

        Retrieval depth is top_k(d); a share ε_rank(d) of the page is replaced by
        look-alike distractors (same leaf category, passing the filters), placed
        deterministically from (episode seed, query, filters).
        """
        if self.search_engine is None:
            raise RuntimeError("this world has no search engine")
        hits = self.search_engine.search(query, filters=filters, depth=self.difficulty.top_k, limit=limit)
        products = [h.product for h in hits]
        return inject_distractors(self, products, query, filters, limit)


def inject_distractors(world: World, products: list[Product], query: str, filters: Any, limit: int) -> list[Product]:
    eps = world.difficulty.eps_rank
    if eps <= 0 or not products:
        return products
    rng = seeded_rng(world.seed, "distractors", query.lower(), repr(filters))
    expected = eps * min(limit, max(len(products), 1))
    n = int(expected) + (1 if rng.random() < expected - int(expected) else 0)
    if n == 0:
        return products
    shown = {p.id for p in products}
    pool = [
        world.catalog.products[i]
        for i in world.catalog.by_leaf_category.get(products[0].leaf_category, [])
        if world.catalog.products[i].id not in shown
    ]
    if filters is not None and hasattr(filters, "matches"):
        pool = [p for p in pool if filters.matches(p)]
    if not pool:
        return products
    picks = rng.sample(pool, min(n, len(pool)))
    out = list(products)
    for p in picks:
        out.insert(rng.randrange(0, len(out) + 1), p)
    return out[:limit]
