"""The mutable state of one episode.

A generator builds the `World` once from its seed; the tools act on that same object
and the verifier reads it, so the three can never disagree (docs/design.md §Upstream pitfalls, 3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar

import numpy as np

from ecom_bench.catalog import Catalog, Product, Variant
from ecom_bench.catalog.lookups import RowProducts, catalog_lookups, rows_of
from ecom_bench._seeding import seeded_rng
from ecom_bench.difficulty import Difficulty

DomainState = TypeVar("DomainState")


#: The store's clock when no generator sets one: fixed, so every run sees the same "now".
REFERENCE_NOW = datetime(2026, 6, 15, 12, 0)


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


@dataclass(frozen=True)
class FinalAnswer:
    """One final-answer tool call: the env's answer (for intent `intent` in a journey)."""

    tool: str
    arguments: dict[str, Any]
    intent: int = 0


@dataclass
class StockOut:
    """A scheduled mid-dialogue stock-out (axis p_oos).

    When the agent first acts on (`on="referenced"`: carts, recommends) or is shown
    (`on="seen"`) the id `watch`, the items in `item_ids` (product and/or variant ids)
    drop to zero stock at the end of that turn, before the user replies; the user
    simulator reads `World.stock_outs` to say so, and every tool reports it.
    """

    watch: str
    item_ids: tuple[str, ...]
    on: Literal["referenced", "seen"] = "referenced"
    fired_at_turn: int | None = None
    intent: int | None = None  # in a journey: fires only while this request is the active one


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
    answers: list[FinalAnswer] = field(default_factory=list)  # final-answer tool calls, in order
    intent: int = 0  # the journey's current intent (always 0 in an atomic env)
    now: datetime = REFERENCE_NOW
    stock_outs: list[StockOut] = field(default_factory=list)
    #: Products an earlier request of a journey relies on: a later request's generator must
    #: not take them out of stock (E_SUB's original), or the earlier request becomes unsolvable.
    reserved_ids: set[str] = field(default_factory=set)
    #: Each domain's state, one instance per type (`state()`): the built-in domains' orders and
    #: rule book (`ecom_bench.domains`), and the state of environments from outside the package.
    domains: dict[type, Any] = field(default_factory=dict)

    def state(self, kind: type[DomainState]) -> DomainState:
        """This world's instance of a domain-state type, made with `kind()` on first use: where an
        env keeps state of its own (its generator writes it, its tools and verifier read it)."""
        found = self.domains.get(kind)
        if found is None:
            found = self.domains[kind] = kind()
        return found

    @property
    def final_answer(self) -> dict[str, Any] | None:
        """The arguments of the last final answer, if any."""
        return self.answers[-1].arguments if self.answers else None

    def answers_for(self, intent: int = 0, tool: str | None = None) -> list[FinalAnswer]:
        return [a for a in self.answers if a.intent == intent and (tool is None or a.tool == tool)]

    # --- catalogue view ---------------------------------------------------
    def product(self, product_id: str) -> Product | None:
        """The catalogue product with this id, or None (a variant id, an invented id)."""
        return self.catalog.get(product_id)

    def stock_of(self, product: Product, variant: Variant | None = None) -> int:
        if variant is not None:
            return self.stock.get(variant.id, variant.stock)
        return self.stock.get(product.id, product.stock)

    def in_stock(self, product: Product, variant: Variant | None = None) -> bool:
        if variant is None and product.variants:
            return any(self.stock_of(product, v) > 0 for v in product.variants)
        return self.stock_of(product, variant) > 0

    def set_out_of_stock(self, *item_ids: str) -> None:
        """Drop products (all their variants) or single variants to zero stock."""
        for item_id in item_ids:
            product = self.product(item_id)
            if product is not None:
                self.stock[product.id] = 0
                for v in product.variants:
                    self.stock[v.id] = 0
            else:
                self.stock[item_id] = 0

    def fire_stock_outs(self, turn: int) -> list[StockOut]:
        """Trigger the scheduled stock-outs whose watched id the agent has now acted on / seen."""
        fired = []
        referenced = set(self.referenced_ids)
        for event in self.stock_outs:
            if event.fired_at_turn is not None or event.intent not in (None, self.intent):
                continue
            if event.watch in (referenced if event.on == "referenced" else self.seen_ids):
                self.set_out_of_stock(*event.item_ids)
                event.fired_at_turn = turn
                fired.append(event)
        return fired

    # --- cart --------------------------------------------------------------
    def cart_line(self, product_id: str, variant_id: str | None) -> CartLine | None:
        for line in self.cart:
            if line.key == (product_id, variant_id):
                return line
        return None

    def cart_units(self) -> int:
        return sum(line.quantity for line in self.cart)

    def snapshot(self) -> dict[str, Any]:
        """The final state for score metadata and the log viewer: the shared state; the top-level
        keys of each domain state with a `snapshot_section()` (the built-in domains, whose states
        every episode's world starts with, so every log has their keys); under `domains`, by type
        name, each domain state with a `snapshot()` (an env from outside the package)."""
        sections: dict[str, Any] = {}
        for state in self.domains.values():
            if callable(getattr(state, "snapshot_section", None)):
                sections.update(state.snapshot_section())
        others = {kind.__name__: state.snapshot() for kind, state in self.domains.items()
                  if callable(getattr(state, "snapshot", None))}
        return {
            "cart": [
                {"product_id": ln.product_id, "variant_id": ln.variant_id, "quantity": ln.quantity}
                for ln in self.cart
            ],
            "checked_out": self.checked_out,
            "final_answer": self.final_answer,
            "answers": [{"tool": a.tool, "intent": a.intent, "arguments": a.arguments} for a in self.answers],
            **sections,
            "stock_outs": [{"items": list(e.item_ids), "fired_at_turn": e.fired_at_turn}
                           for e in self.stock_outs],
            "stock_changes": dict(sorted(self.stock.items())),
            "seen_ids": len(self.seen_ids),
            "tool_calls": len(self.tool_log),
            **({"domains": others} if others else {}),
        }

    # --- search ------------------------------------------------------------
    def search(self, query: str, filters: Any, limit: int) -> list[Product]:
        """The first page of `search_page`."""
        return self.search_page(query, filters, limit).products

    def search_page(self, query: str, filters: Any, limit: int, offset: int = 0) -> ResultPage:
        """Hybrid catalogue search at this episode's difficulty (`SearchEngine.search_page`).

        Retrieval depth is top_k(d); a share ε_rank(d) of the page is replaced by
        look-alike distractors (same leaf category, passing the filters), placed
        deterministically from (episode seed, query, filters, offset). The next page
        starts after the last search result this one kept, so none is skipped.
        """
        if self.search_engine is None:
            raise RuntimeError("this world has no search engine")
        page = self.search_engine.search_page(query, filters=filters, depth=self.difficulty.top_k, limit=limit,
                                              offset=offset)
        found = [h.product for h in page.hits]
        shown = inject_distractors(self, found, query, filters, limit, offset)
        kept = {p.id for p in shown}
        end = offset + sum(1 for p in found if p.id in kept)
        return ResultPage(shown, page.total, page.ranked, offset, end if end < page.total else None, page.filtered)


@dataclass(frozen=True)
class ResultPage:
    """One page of a catalogue search as the agent gets it."""

    products: list[Product]
    total: int  # products the search reaches: every filter match, or the query's top_k without filters
    ranked: int  # how many of them come ordered by relevance to the query (the rest: catalogue order)
    offset: int
    next_offset: int | None  # where the next page starts; None on the last
    filtered: bool


def inject_distractors(world: World, products: list[Product], query: str, filters: Any, limit: int,
                       offset: int = 0) -> list[Product]:
    eps = world.difficulty.eps_rank
    if eps <= 0 or not products:
        return products
    rng = seeded_rng(world.seed, "distractors", query.lower(), repr(filters), *([offset] if offset else []))
    expected = eps * min(limit, max(len(products), 1))
    n = int(expected) + (1 if rng.random() < expected - int(expected) else 0)
    if n == 0:
        return products
    pool = distractor_pool(world.catalog, products, filters)
    if not pool:
        return products
    # `rng.sample(pool, k)`'s draws, by position: sample copies a small population whole
    # (n <= 21), which would make every product of a small leaf for one or two picks
    picks = [pool[j] for j in rng.sample(range(len(pool)), min(n, len(pool)))]
    out = list(products)
    for p in picks:
        out.insert(rng.randrange(0, len(out) + 1), p)
    return out[:limit]


def distractor_pool(catalog: Catalog, shown: list[Product], filters: Any) -> Sequence[Product]:
    """The products of the first hit's leaf category that are not `shown` and pass `filters`, in
    catalogue order: the leaf's rows and the filters' column tests from per-catalogue arrays
    (`catalog.lookups`), so a search does not walk the leaf in Python."""
    index = catalog_lookups(catalog)
    rows = index.leaf(shown[0].leaf_category)
    rows = rows[~np.isin(rows, rows_of(catalog, (p.id for p in shown)))]
    if filters is None or not hasattr(filters, "matches"):
        return RowProducts(catalog, rows)
    rows = rows[filters.compile().column_mask(catalog, rows)]  # price (as bought), rating, days, brand
    category = getattr(filters, "category", None)
    if category and category.strip() and len(rows):
        # the category test reads only the product's path: decide it once per distinct path
        codes = index.path_code[rows]
        first = {c: int(r) for c, r in zip(codes[::-1].tolist(), rows[::-1].tolist(), strict=True)}
        passing = [c for c, r in first.items() if type(filters)(category=category).matches(catalog.products[r])]
        rows = rows[np.isin(codes, passing)]
    if getattr(filters, "attributes", None) or getattr(filters, "features", None):
        rows = np.array([r for r in rows.tolist() if filters.matches(catalog.products[r])], dtype=np.int64)
    return RowProducts(catalog, rows)


def changed_rows(world: World) -> np.ndarray:
    """Rows of the products whose stock this episode changed (a product or one of its variants)."""
    catalog = world.catalog
    lookups = catalog_lookups(catalog)
    rows = set()
    for item_id in world.stock:
        i = catalog.index_of(item_id)
        if i is None:
            i = lookups.variant_owner(catalog, item_id)
        if i is not None:
            rows.add(i)
    return np.fromiter(sorted(rows), dtype=np.int64, count=len(rows))


def in_stock_mask(world: World, rows: np.ndarray) -> np.ndarray:
    """`world.in_stock(p)` for each of `rows`, without a per-product loop: the catalogue's
    stock, corrected for the few products the episode's stock changes touch."""
    catalog = world.catalog
    rows = np.asarray(rows, dtype=np.int64)
    out = catalog_lookups(catalog).base_in_stock[rows]
    if world.stock:
        changed = changed_rows(world)
        hit = np.flatnonzero(np.isin(rows, changed))
        for k in hit.tolist():
            out[k] = world.in_stock(catalog.products[int(rows[k])])
    return out
