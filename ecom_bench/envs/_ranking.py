"""Shared mechanics of E_PD (discovery) and E_SUB (substitution), written once.

Both envs hide a set of constraints, grade every catalogue product by how well it
meets them (s(p) in [0, 1]), rank an evaluation pool by a graded relevance, and
score the agent's recommendation list by nDCG@k and the share of it that is out of
stock. This module holds those pieces plus the p_oos schedule and the scripted
oracle and random agents, which play both envs the same way.

* **Constraints.** price ≤ budget, leaf category, brand, min rating, max ship days,
  attribute values. A product meets an attribute constraint when it *offers* the
  value: its own attribute or one of its variants along that attribute (a charger
  sold in USB-C and Lightning offers both).
* **The variant bought.** A request that names a value of a product's variant attribute
  (E_SUB's compatibility, an attribute constraint) buys that variant, so the customer
  pays *its* price and needs *it* in stock: the budget is checked on the price of the
  variant the request pins (`bought_variant`), and "in stock" means that variant is.
  A product the request pins no variant of is priced and stocked as listed. Variants
  are priced apart (`catalog.variants`: −10%..+15% of the listing), so checking the
  listing price let a task's only "right" products cost more than the stated budget.
  Per-constraint satisfaction is 1 when met; categorical misses are 0; numeric misses
  decay (10% over budget → 0.5, a quarter star short → 0.5, one day late → 0.5).
  s(p) is the mean over the constraints.
* **Pool (docs/design.md §Upstream pitfalls, 1).** The verifier computes its own evaluation pool from the
  catalogue: the top-500 products by s(p) (ties by catalogue order), restricted by an
  env's hard gate (E_SUB: compatibility, not the original). The pool fixes the ideal
  DCG; a recommended product outside it is still graded by the same formula.
* **Relevance.** rel(p) = (1 + base′(p)) / 2 for an in-stock product that meets every
  constraint and passes the gate, else 0 (a product that breaks a hard requirement is
  no answer, however close). base(p) is the env's score (E_PD: the hidden persona's
  utility; E_SUB: λ·sim(p, p0) + (1−λ)·s(p)), rescaled to [0, 1] over the pool
  (base′), so every right product earns at least half and the customer's taste decides
  the order among them.
* **nDCG@k** with linear gains; the ideal is the pool's k most relevant products in
  stock at scoring time (one that went out of stock is no longer a relevant answer),
  so when fewer than k products qualify, the short exact list is ideal. Clipped at 1
  (the pool can undercount the ideal only when over 500 products tie at s = 1).
* **Success** (both envs) is validity only: every pick is in stock, passes the gate
  and meets every constraint, and the list has k picks (or every product that
  qualifies, when fewer do). Ranking lives only in r_task (the nDCG term): the hidden
  persona's order is never told, so no success threshold on nDCG could be earned by
  asking, and a condition such as nDCG@k >= 0.6 would be vacuous (every valid list meets
  it: a right product's relevance is at least half the best one's).
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, Protocol

import numpy as np

from ecom_bench._seeding import derive_seed
from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, ToolCallRequest, tool_results
from ecom_bench.catalog import Catalog, Product, Variant
from ecom_bench.catalog.catalog import fold
from ecom_bench.catalog.lookups import catalog_lookups
from ecom_bench.catalog.naming import counted, product_noun
from ecom_bench.catalog.taxonomy import attribute_label
from ecom_bench.difficulty import Difficulty
from ecom_bench.users.persona import PERSONA_DIMENSIONS, sample_persona
from ecom_bench.world import World
from ecom_bench.world.state import StockOut, changed_rows, in_stock_mask

ConstraintKind = Literal["price", "category", "brand", "rating", "ship", "attribute"]

POOL_SIZE = 500
#: Length of the ideal ranked list handed to the oracle (enough to replace stock-outs).
RANKED_LIST = 40
#: Which persona dimension a constraint kind makes the user care about (aligned preferences).
DIMENSION_OF: dict[str, str] = {"price": "price", "rating": "rating", "ship": "ship_speed", "brand": "brand",
                                "category": "similarity", "attribute": "similarity"}
MAX_SHIP_DAYS = 10


def category_noun(product: Product) -> str:
    """What a shopper searches for the product's kind: "wall charger", "mouse" (category "Mice")."""
    return product_noun(product).one.lower()


def offered_values(product: Product, attribute: str) -> frozenset[str]:
    """The values of `attribute` a product can be bought in: its own and its variants'."""
    values = {fold(product.attributes[attribute])} if attribute in product.attributes else set()
    values.update(fold(v.value) for v in product.variants if v.attribute == attribute)
    return frozenset(values)


def variant_attribute(product: Product) -> str | None:
    """The attribute the product's variants vary along (None if it has no real variants)."""
    attrs = {v.attribute for v in product.variants}
    if len(product.variants) < 2 or len(attrs) != 1:
        return None
    attr = attrs.pop()
    return attr if attr in product.attributes else None


def pins_of(constraints: tuple[Constraint, ...]) -> tuple[Constraint, ...]:
    """The constraints that choose which variant is bought: the attribute ones, in order."""
    return tuple(c for c in constraints if c.kind == "attribute")


def bought_variant(product: Product, pins: tuple[Constraint, ...]) -> Variant | None:
    """The variant a request with these `pins` buys: the first of the product's variants along a
    pinned attribute with the pinned value (the first pin that names one decides), else None
    (no pin names a variant of it: it is bought as listed)."""
    for c in pins:
        value = fold(c.value)
        for v in product.variants:
            if v.attribute == c.attribute and fold(v.value) == value:
                return v
    return None


def price_paid(product: Product, pins: tuple[Constraint, ...] = ()) -> float:
    """What the customer pays for the product bought as `pins` ask: the variant's price, else the listing's."""
    variant = bought_variant(product, pins)
    return product.price if variant is None else variant.price


# ----------------------------------------------------------------- constraints
@dataclass(frozen=True)
class Constraint:
    """One hard requirement of the customer. `value`: budget, leaf, brand, stars, days or attribute value."""

    kind: ConstraintKind
    value: Any
    attribute: str | None = None  # only for kind="attribute"
    #: only for kind="price": the attribute requirements that choose the variant bought, whose
    #: price is the one checked (`price_paid`); none: the listing price
    pins: tuple[Constraint, ...] = ()

    @property
    def slot(self) -> str:
        """The Disclosure slot of this constraint."""
        return f"attribute:{self.attribute}" if self.kind == "attribute" else self.kind

    @property
    def label(self) -> str:
        return attribute_label(self.attribute) if self.attribute else self.kind

    def satisfaction(self, p: Product) -> float:
        if self.kind == "price":
            price = price_paid(p, self.pins)
            return 1.0 if price <= self.value else max(0.0, 1.0 - 5.0 * (price - self.value) / self.value)
        if self.kind == "rating":
            return 1.0 if p.rating >= self.value else max(0.0, 1.0 - 2.0 * (self.value - p.rating))
        if self.kind == "ship":
            return 1.0 if p.ship_days <= self.value else max(0.0, 1.0 - 0.5 * (p.ship_days - self.value))
        if self.kind == "category":
            return float(p.leaf_category == self.value)
        if self.kind == "brand":
            return float(fold(p.brand) == fold(self.value))
        assert self.attribute is not None
        return float(fold(self.value) in offered_values(p, self.attribute))

    def describe(self) -> str:
        """Readable form for explanations: 'price <= $35', 'connector = USB-C'."""
        if self.kind == "price":
            return f"price <= ${self.value:g}"
        if self.kind == "rating":
            return f"rating >= {self.value:g}"
        if self.kind == "ship":
            return f"ships within {counted(self.value, 'day')}"
        if self.kind in ("category", "brand"):
            return f"{self.kind} {self.value}"
        return f"{self.label} = {self.value}"

    def actual(self, p: Product) -> str:
        """The product's own value for this constraint (for explanations and the user's corrections)."""
        if self.kind == "price":
            variant = bought_variant(p, self.pins)
            return f"${price_paid(p, self.pins):g}" + (f" ({variant.value})" if variant is not None else "")
        if self.kind == "rating":
            return counted(p.rating, "star")
        if self.kind == "ship":
            return counted(p.ship_days, "day")
        if self.kind == "category":
            return p.leaf_category
        if self.kind == "brand":
            return p.brand
        assert self.attribute is not None
        return ", ".join(sorted(offered_values(p, self.attribute))) or "none"

    def to_dict(self) -> dict[str, Any]:
        """`dataclasses.asdict` of it, written out (the goal is serialised on every step)."""
        out = {"kind": self.kind, "value": self.value, "attribute": self.attribute}
        if self.pins:
            out["pins"] = [c.to_dict() for c in self.pins]
        return out


def constraints_from(product: Product, rng: random.Random, m: int, difficulty: Difficulty,
                     skip_attributes: tuple[str, ...] = (), pinned: tuple[Constraint, ...] = (),
                     ) -> tuple[Constraint, tuple[Constraint, ...]]:
    """The request's subject (`product`'s leaf category) and m more constraints it satisfies.

    The category is always stated and not counted in m: a one-word search gets it right
    for free, so counting it let random lists pass at low d. The m constraints are the
    budget price·(1+δ), δ ~ U(0, 0.5·e^(−d/5)) (docs/design.md), then m−1 of brand, min rating, max
    ship days and the attribute values not in `skip_attributes`; m is capped at the types
    the product has (at least 6: brand, rating, ship days and 2+ attributes, + budget).
    The price is the one the customer pays: of the variant that `pinned` (E_SUB's
    compatibility) and the drawn attribute constraints buy (`price_paid`).
    """
    delta = rng.uniform(0.0, 0.5 * math.exp(-difficulty.level / 5))
    others = [Constraint("brand", product.brand),
              Constraint("rating", max(1.0, math.floor(product.rating * 2) / 2)),
              Constraint("ship", min(MAX_SHIP_DAYS, product.ship_days + rng.randint(0, 1)))]
    others += [Constraint("attribute", value, attribute=name) for name, value in sorted(product.attributes.items())
               if name not in skip_attributes]
    rng.shuffle(others)
    chosen = tuple(others[: max(0, m - 1)])
    pins = pins_of((*pinned, *chosen))
    budget = float(math.ceil(price_paid(product, pins) * (1.0 + delta)))
    return Constraint("category", product.leaf_category), (Constraint("price", budget, pins=pins), *chosen)


#: A budget must price at least this share of its category out: one above nearly the whole
#: aisle rules nothing out, and then any few search hits for the customer's words pass
#: (E_PD at d=3: "search the request, recommend 4 random hits" won 4.7% of 300 episodes;
#: 1.7% of those whose budget binds, while the honest heuristic kept 79-83%).
MIN_BUDGET_CUT = 1 / 3


def budget_binds(catalog: Catalog, leaf: str, budget: float) -> bool:
    """Whether the budget prices at least MIN_BUDGET_CUT of the leaf category's products out."""
    prices = catalog.prices[catalog_lookups(catalog).leaf(leaf)]
    return bool(len(prices)) and float(np.mean(prices > budget)) >= MIN_BUDGET_CUT


# ------------------------------------------------------- satisfaction, vectorised
@lru_cache(maxsize=16)
def _offering(catalog: Catalog, attribute: str, value: str) -> np.ndarray:
    """`catalog.offering(attribute, value)`, kept for the few attribute values an episode's
    constraints name: its pool, list grading and gate test each read them (read-only)."""
    mask = catalog.offering(attribute, value)
    mask.flags.writeable = False
    return mask


def bought_variants(catalog: Catalog, pins: tuple[Constraint, ...], rows: np.ndarray) -> np.ndarray:
    """`bought_variant` for each of `rows`: its position in the catalogue's flat variant columns
    (`Catalog.variant_prices`, `variant_stocks`), or -1 where none is pinned."""
    rows = np.asarray(rows, dtype=np.int64)
    out = np.full(len(rows), -1, dtype=np.int64)
    if not pins or not len(rows):
        return out
    codes = catalog.variant_codes
    owner, flat = catalog.variants_of(rows)
    for c in reversed(pins):  # an earlier pin overrides a later one
        a, v = codes.attribute_code.get(c.attribute or ""), codes.value_code.get(fold(c.value))
        if a is None or v is None:
            continue
        hit = np.flatnonzero((codes.attribute[flat] == a) & (codes.value[flat] == v))[::-1]
        out[owner[hit]] = flat[hit]  # reversed: a product's first such variant is written last
    return out


def paid_prices(catalog: Catalog, pins: tuple[Constraint, ...], rows: np.ndarray | None = None) -> np.ndarray:
    """`price_paid` of every product, or of `rows`."""
    if not pins:
        return catalog.prices if rows is None else catalog.prices[rows]
    rows = np.arange(len(catalog)) if rows is None else np.asarray(rows, dtype=np.int64)
    bought = bought_variants(catalog, pins, rows)
    return np.where(bought >= 0, catalog.variant_prices[np.maximum(bought, 0)], catalog.prices[rows])


def in_stock_as_bought(world: World, pins: tuple[Constraint, ...], rows: np.ndarray) -> np.ndarray:
    """Whether each of `rows` can be bought as `pins` ask: its pinned variant in stock, or (none
    pinned) any of it (`in_stock_mask`), with the episode's stock changes applied."""
    rows = np.asarray(rows, dtype=np.int64)
    out = in_stock_mask(world, rows)
    bought = bought_variants(world.catalog, pins, rows)
    pinned = np.flatnonzero(bought >= 0)
    if not len(pinned):
        return out
    out[pinned] = world.catalog.variant_stocks[bought[pinned]] > 0
    if world.stock:
        for k in pinned[np.isin(rows[pinned], changed_rows(world))].tolist():
            p = world.catalog.products[int(rows[k])]
            out[k] = world.in_stock(p, bought_variant(p, pins))
    return out


def satisfaction_matrix(catalog: Catalog, constraints: tuple[Constraint, ...],
                        rows: np.ndarray | None = None) -> np.ndarray:
    """(n, m) per-constraint satisfaction of every catalogue product, or of `rows` (same rule as
    `Constraint.satisfaction`, over the catalogue's column views: no per-product Python)."""
    def col_of(a: np.ndarray) -> np.ndarray:
        return a if rows is None else a[rows]

    out = np.zeros((len(catalog) if rows is None else len(rows), len(constraints)), dtype=np.float64)
    for j, c in enumerate(constraints):
        if c.kind == "price":
            x = paid_prices(catalog, c.pins, rows)
            col = np.where(x <= c.value, 1.0, 1.0 - 5.0 * (x - c.value) / c.value)
        elif c.kind == "rating":
            x = col_of(catalog.ratings)
            col = np.where(x >= c.value, 1.0, 1.0 - 2.0 * (c.value - x))
        elif c.kind == "ship":
            x = col_of(catalog.ship_days)
            col = np.where(x <= c.value, 1.0, 1.0 - 0.5 * (x - c.value))
        elif c.kind == "category":
            col = col_of(catalog.leaf_categories) == c.value
        elif c.kind == "brand":
            col = col_of(catalog.folded_brands) == fold(c.value)
        else:
            assert c.attribute is not None
            col = col_of(_offering(catalog, c.attribute, c.value))
        out[:, j] = np.clip(col, 0.0, 1.0)
    return out


def mean_satisfaction(sat: np.ndarray) -> np.ndarray:
    """s(p) per row, summed left to right like Python's `sum` (numpy's pairwise `mean` can
    differ in the last bit from 8 constraints on, and s(p) feeds the scores)."""
    total = np.zeros(sat.shape[0], dtype=np.float64)
    for j in range(sat.shape[1]):
        total = total + sat[:, j]
    return total / max(1, sat.shape[1])


@dataclass(frozen=True)
class Gate:
    """A hard requirement beyond the constraints (E_SUB: compatible, and not the original).

    Data rather than code, so that it keys the evaluation-pool cache and has a
    vectorised form (`mask`) beside the per-product test (calling it).
    """

    require: tuple[Constraint, ...] = ()  # each met in full
    exclude: tuple[str, ...] = ()  # product ids that never pass

    def __call__(self, p: Product) -> bool:
        return p.id not in self.exclude and all(c.satisfaction(p) == 1.0 for c in self.require)

    def mask(self, catalog: Catalog, rows: np.ndarray | None = None) -> np.ndarray:
        """Which products (all, or `rows`) pass, as a bool array."""
        if not self.require and not self.exclude:
            return np.ones(len(catalog) if rows is None else len(rows), dtype=bool)
        ok = np.all(satisfaction_matrix(catalog, self.require, rows) == 1.0, axis=1)
        for pid in self.exclude:
            i = catalog.index_of(pid)
            if i is not None:
                ok &= (np.arange(len(catalog)) if rows is None else rows) != i
        return ok


NO_GATE = Gate()


# --------------------------------------------------------------------- persona
def constrained_persona(seed: int, constraints: tuple[Constraint, ...]) -> dict[str, float]:
    """The persona, boosted on every dimension the user's constraints touch (aligned preferences)."""
    return sample_persona(seed, {DIMENSION_OF[c.kind] for c in constraints})


def persona_utility(weights: dict[str, float], catalog: Catalog, rows: np.ndarray, *, budget: float, brand: str,
                    sims: np.ndarray) -> np.ndarray:
    """u(p) in [0, 1] for each of `rows`: the persona's weighted taste for price, rating, speed,
    brand and similarity (`sims`: to the reference product, aligned with `rows`)."""
    ship = catalog.ship_days[rows]
    scores = {
        "price": np.minimum(1.0, np.maximum(0.0, 1.0 - 0.5 * catalog.prices[rows] / budget)),
        "rating": (catalog.ratings[rows] - 1.0) / 4.0,
        "ship_speed": (MAX_SHIP_DAYS - np.minimum(ship, MAX_SHIP_DAYS)) / (MAX_SHIP_DAYS - 1),
        "brand": (catalog.folded_brands[rows] == fold(brand)).astype(np.float64),
        "similarity": np.maximum(0.0, sims),
    }
    total = np.zeros(len(rows), dtype=np.float64)
    for d in PERSONA_DIMENSIONS:  # in order, as a Python sum would
        total = total + weights[d] * scores[d]
    return total


# --------------------------------------------------------------- the ranking goal
class RankingGoal(Protocol):
    """What both envs' hidden goals provide to the shared scoring."""

    @property
    def k(self) -> int:
        """How many products the customer asked for (the list's cut-off)."""
        ...

    @property
    def reference_id(self) -> str:
        """The product similarity is measured to (E_PD target, E_SUB original)."""
        ...

    @property
    def requirements(self) -> tuple[Constraint, ...]:
        """Every constraint scored by s(p): the category, then the m constraints."""
        ...

    @property
    def gate(self) -> Gate:
        """Hard requirement beyond the constraints (E_SUB: compatible and not the original)."""
        ...

    def gate_problem(self, p: Product) -> str:
        """Why `p` fails the gate, for explanations ('' if it passes)."""
        ...

    def base_relevance(self, catalog: Catalog, rows: np.ndarray, s: np.ndarray, sims: np.ndarray) -> np.ndarray:
        """The env's score for ordering right products, in [0, 1], for each of `rows`
        (`s`: their s(p); `sims`: their similarity to `reference_id`)."""
        ...

    @property
    def base_key(self) -> tuple[Any, ...]:
        """Everything `base_relevance` reads besides the catalogue and its arguments (hashable):
        with the pool, it keys the base scores kept for the verifier."""
        ...


def purchase_pins(goal: RankingGoal) -> tuple[Constraint, ...]:
    """The requirements that choose the variant the customer buys: the gate's and the constraints'
    attribute ones (E_SUB's compatibility first). The budget's `pins` are these too."""
    return pins_of((*goal.gate.require, *goal.requirements))


def in_stock_for(goal: RankingGoal, world: World, p: Product) -> bool:
    """Whether `p` can be bought now as the goal's customer needs it (`in_stock_as_bought`)."""
    return world.in_stock(p, bought_variant(p, purchase_pins(goal)))


def similarities(engine: Any, reference_id: str, rows: np.ndarray) -> np.ndarray:
    """Cosine similarity of the products at `rows` to the reference product (zeros without a
    search engine)."""
    if engine is None or not len(rows):
        return np.zeros(len(rows), dtype=np.float64)
    return engine.similarities_at(reference_id, rows).astype(np.float64)


def graded(goal: RankingGoal, world: World, ids: list[str]) -> dict[str, dict[str, Any]]:
    """For each id: s(p), whether it meets every constraint, the gate, stock and the env's base score."""
    catalog = world.catalog
    found = [(i, r) for i in dict.fromkeys(ids) if (r := catalog.index_of(i)) is not None]
    if not found:
        return {}
    rows = np.array([r for _, r in found], dtype=np.int64)
    sat = satisfaction_matrix(catalog, goal.requirements, rows)
    s = mean_satisfaction(sat)
    gate = goal.gate.mask(catalog, rows)
    base = goal.base_relevance(catalog, rows, s, similarities(world.search_engine, goal.reference_id, rows))
    stocked = in_stock_as_bought(world, purchase_pins(goal), rows)
    return {pid: {"s": float(s[r]), "meets_all": bool(np.all(sat[r] == 1.0)), "gate": bool(gate[r]),
                  "in_stock": bool(stocked[r]), "base": float(base[r]),
                  "violated": [c for c, x in zip(goal.requirements, sat[r], strict=True) if x < 1.0]}
            for r, (pid, _) in enumerate(found)}


def _relevances(right: np.ndarray, base: np.ndarray, span: tuple[float, float]) -> np.ndarray:
    lo, hi = span
    scaled = np.minimum(1.0, np.maximum(0.0, (base - lo) / (hi - lo))) if hi > lo else np.ones_like(base)
    return np.where(right, (1.0 + scaled) / 2.0, 0.0)


def relevance(grade: dict[str, Any], span: tuple[float, float]) -> float:
    """(1 + base rescaled to [0, 1] by the pool's span) / 2 for a right, in-stock product; else 0."""
    right = grade["meets_all"] and grade["gate"] and grade["in_stock"]
    return float(_relevances(np.array([right]), np.array([grade["base"]]), span)[0])


@dataclass(frozen=True)
class Pool:
    """The evaluation pool and what about it does not change during an episode."""

    rows: np.ndarray  # catalogue indices, best s(p) first (ties by catalogue order)
    ids: tuple[str, ...]
    s: np.ndarray  # s(p)
    meets_all: np.ndarray  # every constraint met
    sims: np.ndarray  # similarity to the reference product
    #: base scores and span per goal `base_key` (`_base_of`): the generator's ideal list computes
    #: them, the verifier's reads them (only the stock is read again)
    bases: dict[tuple[Any, ...], tuple[np.ndarray, tuple[float, float]]] = field(
        default_factory=dict, compare=False, repr=False)


#: Pools kept: one per ranking goal of the episodes being generated or scored at once
#: (generation computes each, its verifier reuses it; an evicted one is recomputed, the same).
POOL_CACHE = 512


#: Constraint kinds met in full or not at all (0/1): their rows come from per-catalogue indexes.
_CATEGORICAL = ("category", "brand", "attribute")


def _meeting_rows(catalog: Catalog, c: Constraint) -> np.ndarray:
    """The rows whose satisfaction of the categorical constraint `c` is 1."""
    if c.kind == "category":
        return catalog_lookups(catalog).leaf(c.value)
    if c.kind == "brand":
        return catalog_lookups(catalog).brand(fold(c.value))
    assert c.attribute is not None
    return np.flatnonzero(_offering(catalog, c.attribute, c.value))


def _meeting_mask(catalog: Catalog, c: Constraint) -> np.ndarray:
    """`_meeting_rows` as a bool mask over the catalogue."""
    if c.kind == "attribute":
        assert c.attribute is not None
        return _offering(catalog, c.attribute, c.value)
    mask = np.zeros(len(catalog), dtype=bool)
    mask[_meeting_rows(catalog, c)] = True
    return mask


#: Rows graded at once when `_top_rows` scans a level (in catalogue order; each further
#: chunk of the level twice the last).
SCAN_CHUNK = 4 * POOL_SIZE


def _gate_rows(catalog: Catalog, gate: Gate) -> np.ndarray | None:
    """Which products can pass `gate`, as a bool mask from the per-catalogue indexes (its
    categorical requirements and its excluded ids), or None when it asks nothing."""
    if not gate.require and not gate.exclude:
        return None
    ok = np.ones(len(catalog), dtype=bool)
    for c in gate.require:
        if c.kind in _CATEGORICAL:
            ok &= _meeting_mask(catalog, c)
    for pid in gate.exclude:
        i = catalog.index_of(pid)
        if i is not None:
            ok[i] = False
    return ok


def _best(rows: np.ndarray, sat: np.ndarray, gate: Gate, catalog: Catalog) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The gated `rows` best first by (numpy's mean s(p), row), at most POOL_SIZE: (rows, sat, s).
    (The order is by numpy's mean, as the pool always was; grades use `mean_satisfaction`.)"""
    s = sat.mean(axis=1)
    order = np.lexsort((rows, -s))
    order = order[gate.mask(catalog, rows[order])][:POOL_SIZE]
    return rows[order], sat[order], s[order]


def _grade(catalog: Catalog, requirements: tuple[Constraint, ...], rows: np.ndarray,
           masks: dict[int, np.ndarray]) -> np.ndarray:
    """`satisfaction_matrix(catalog, requirements, rows)`, its categorical columns (positions in
    `masks`) read from the masks `_top_rows` already holds (`_meeting_mask`: the same 0/1)
    rather than by comparing the object columns' strings again."""
    if not masks:
        return satisfaction_matrix(catalog, requirements, rows)
    sat = np.empty((len(rows), len(requirements)), dtype=np.float64)
    rest = [j for j in range(len(requirements)) if j not in masks]
    if rest:
        sat[:, rest] = satisfaction_matrix(catalog, tuple(requirements[j] for j in rest), rows)
    for j, mask in masks.items():
        sat[:, j] = mask[rows]
    return sat


def _top_rows(catalog: Catalog, requirements: tuple[Constraint, ...], gate: Gate) -> tuple[np.ndarray, np.ndarray]:
    """The pool's rows (best s(p) first, ties by catalogue order, gated, at most POOL_SIZE) and
    their satisfaction matrix, without grading the whole catalogue when it need not be.

    A product that meets c of the categorical constraints (category, brand, attribute: 0 or
    1 each) has s(p) <= (c + the numeric ones' count) / m, its level's ceiling. Products are
    graded by level, most met first, and within a level in catalogue order (the products
    meeting none last), a growing chunk at a time, until the pool's
    last (s(p), row) beats every product not yet graded: its s(p) is above the next
    product's ceiling, or equal to it with a smaller row (ties go by catalogue order). So
    the cost is set by how many products come near the pool, not by the catalogue's size;
    a pool whose tail lies below a level's ceiling still grades that whole level. The
    result is the pool of grading every product (the tests check it).
    """
    masks = {j: _meeting_mask(catalog, c) for j, c in enumerate(requirements) if c.kind in _CATEGORICAL}
    numeric = len(requirements) - len(masks)
    m = max(1, len(requirements))
    met = np.zeros(len(catalog), dtype=np.int16)
    for mask in masks.values():
        met += mask
    allowed = _gate_rows(catalog, gate)
    if allowed is not None:
        met[~allowed] = -1  # never graded
    # what of the gate the graded rows still have to pass: its categorical requirements and
    # exclusions are in `allowed` already
    rest = Gate(require=tuple(c for c in gate.require if c.kind not in _CATEGORICAL))
    union = np.flatnonzero(met > 0)
    union = union[np.argsort(-met[union], kind="stable")]  # by level (most met first), then row
    rows = np.zeros(0, dtype=np.int64)
    sat = np.zeros((0, len(requirements)), dtype=np.float64)
    s = np.zeros(0, dtype=np.float64)
    # Grade in that order, then the products meeting none (`zeros`, in catalogue order, found
    # once the levels are done), a growing chunk at a time; a chunk may span levels (the
    # check before it is what matters).
    zeros: np.ndarray | None = None

    def meeting_none() -> np.ndarray:
        nonlocal zeros
        if zeros is None:
            zeros = np.flatnonzero(met == 0)
        return zeros

    taken, z, chunk = 0, 0, SCAN_CHUNK
    while True:
        if taken < len(union):
            level, next_row = int(met[union[taken]]), int(union[taken])
        else:
            if z >= len(meeting_none()):
                break
            level, next_row = 0, int(meeting_none()[z])
        if len(rows) == POOL_SIZE and (s[-1] > (level + numeric) / m
                                       or (s[-1] == (level + numeric) / m and rows[-1] < next_row)):
            break  # nobody left (at this level or a lower one) can enter
        part = union[taken : taken + chunk]
        taken += len(part)
        if len(part) < chunk and taken == len(union):  # then the products meeting none, in catalogue order
            more = meeting_none()[z : z + chunk - len(part)]
            z += len(more)
            part = np.concatenate((part, more))
        chunk *= 2
        if len(part):
            part_sat = _grade(catalog, requirements, part, masks)
            if len(rows) == POOL_SIZE:  # a full pool: only what beats its last (s(p), row) can enter
                part_s = part_sat.mean(axis=1)  # row by row, the values `_best` computes
                beats = (part_s > s[-1]) | ((part_s == s[-1]) & (part < rows[-1]))
                part, part_sat = part[beats], part_sat[beats]
            rows, sat, s = _best(np.concatenate((rows, part)), np.concatenate((sat, part_sat)), rest, catalog)
    return rows, sat


@lru_cache(maxsize=POOL_CACHE)
def _pool(world_catalog: Catalog, engine: Any, requirements: tuple[Constraint, ...], gate: Gate,
          reference_id: str) -> Pool:
    rows, pool_sat = _top_rows(world_catalog, requirements, gate)
    ids = tuple(world_catalog.ids.take(rows).to_pylist())  # from the id column: no Product is made
    return Pool(rows, ids, mean_satisfaction(pool_sat), np.all(pool_sat == 1.0, axis=1),
                similarities(engine, reference_id, rows))


def evaluation_pool(goal: RankingGoal, world: World) -> Pool:
    """The top-500 products by s(p) that pass the env's gate (ties by catalogue order).

    Computed once per (catalogue, constraints, gate, reference product) and cached:
    the generator's ideal list and the verifier's share it.
    """
    return _pool(world.catalog, world.search_engine, goal.requirements, goal.gate, goal.reference_id)


@dataclass(frozen=True)
class Ideal:
    ranked: list[tuple[str, float]]  # in-stock pool products with positive relevance, best first
    span: tuple[float, float]
    pool: list[str]  # the evaluation pool, by s(p)


def _base_of(goal: RankingGoal, world: World, pool: Pool) -> tuple[np.ndarray, tuple[float, float]]:
    """The pool's base scores for `goal` and their span: computed once, kept on the pool."""
    key = goal.base_key
    got = pool.bases.get(key)
    if got is None:
        base = goal.base_relevance(world.catalog, pool.rows, pool.s, pool.sims)
        base.flags.writeable = False
        span = (float(base.min()), float(base.max())) if len(base) else (0.0, 1.0)
        got = pool.bases[key] = (base, span)
    return got


def ideal_ranking(goal: RankingGoal, world: World) -> Ideal:
    """The pool graded now: its relevant products, best first (ties by id), and its base span.
    Only the stock is read anew on each call (the verifier's reuses the generator's base scores)."""
    pool = evaluation_pool(goal, world)
    base, span = _base_of(goal, world, pool)
    rel = _relevances(pool.meets_all & in_stock_as_bought(world, purchase_pins(goal), pool.rows), base, span)
    right = np.flatnonzero(rel > 0)
    by_id = catalog_lookups(world.catalog).id_rank[pool.rows[right]]  # each row's place in id order
    order = right[np.lexsort((by_id, -rel[right]))]  # relevance desc, then id
    ranked = [(pool.ids[i], r) for i, r in zip(order.tolist(), rel[order].tolist(), strict=True)]
    return Ideal(ranked, span, list(pool.ids))


def dcg(gains: list[float]) -> float:
    return float(sum(g / math.log2(i + 2) for i, g in enumerate(gains)))


def ndcg_at_k(gains: list[float], ideal_gains: list[float], k: int) -> float:
    ideal = dcg(sorted(ideal_gains, reverse=True)[:k])
    return 0.0 if ideal <= 0 else min(1.0, dcg(gains[:k]) / ideal)


@dataclass(frozen=True)
class ListScore:
    """The shared measurements of one recommendation list."""

    ids: tuple[str, ...]
    ndcg: float
    oos_share: float
    s_best: float
    grades: dict[str, dict[str, Any]]
    ideal_ids: tuple[str, ...]
    needed: int  # picks a complete list holds: k, or every qualifying product when fewer qualify

    def all_ok(self) -> bool:
        """Every pick meets every constraint, passes the gate and is in stock."""
        return bool(self.ids) and all(g["meets_all"] and g["gate"] and g["in_stock"] for g in self.grades.values())

    def complete(self) -> bool:
        """The list holds k picks, or every product that qualifies when fewer than k do."""
        return len(self.ids) >= self.needed

    def success(self) -> bool:
        """Every pick valid and the list complete; the order is scored by r_task only."""
        return self.all_ok() and self.complete()


def score_list(goal: RankingGoal, world: World, ids: list[str]) -> ListScore:
    ids = [i for i in dict.fromkeys(ids) if world.product(i) is not None][: goal.k]
    ideal = ideal_ranking(goal, world)
    grades = graded(goal, world, ids)
    for g in grades.values():
        g["rel"] = relevance(g, ideal.span)
    gains = [grades[i]["rel"] for i in ids]
    oos = sum(1 for i in ids if not grades[i]["in_stock"]) / len(ids) if ids else 0.0
    s_best = max((grades[i]["s"] for i in ids), default=0.0)
    return ListScore(tuple(ids), ndcg_at_k(gains, [r for _, r in ideal.ranked], goal.k), oos, s_best, grades,
                     tuple(i for i, _ in ideal.ranked[: goal.k]), min(goal.k, len(ideal.ranked)))


def verdict_head(score: ListScore, invalid: str) -> str:
    """The verdict's first sentences: success, or why not (an invalid pick, or too few picks)."""
    if not score.all_ok():
        return f"Not a success. {invalid}"
    if not score.complete():
        return (f"Not a success. Only {len(score.ids)} pick(s), though {score.needed} qualifying products "
                "were in stock and asked for.")
    return "Success."


def explain_problems(goal: RankingGoal, world: World, score: ListScore) -> list[str]:
    """One phrase per problem of the list, for the verdict."""
    problems = []
    for rank, pid in enumerate(score.ids, 1):
        g = score.grades[pid]
        p = world.product(pid)
        assert p is not None
        bits = [goal.gate_problem(p)] if not g["gate"] else []
        bits += [f"{c.describe()} but has {c.actual(p)}" for c in g["violated"]]
        if not g["in_stock"]:
            bits.append("out of stock")
        if bits:
            problems.append(f"#{rank} {pid}: " + "; ".join(bits))
    return problems


# ------------------------------------------------------------------ p_oos(d)
def schedule_stock_outs(world: World, rng: random.Random, candidates: list[str], p_oos: float) -> list[str]:
    """Each good candidate goes out of stock, w.p. p_oos, at the end of the turn a tool first shows it."""
    doomed = [pid for pid in candidates if rng.random() < p_oos]
    world.stock_outs.extend(StockOut(watch=pid, item_ids=(pid,), on="seen") for pid in doomed)
    return doomed


@dataclass(frozen=True)
class OraclePlan:
    turns: tuple[tuple[str, ...], ...]  # ids to view per turn; the last turn ends with the answer
    answer: tuple[str, ...]


def oracle_plan(ranked: list[str], doomed: set[str], k: int, budget: int) -> OraclePlan:
    """How to end with the exact in-stock ideal list, knowing which viewed ids will go out of stock.

    A doomed id viewed in a turn that ends with a message goes out of stock; one viewed
    in the final turn (the answer turn) does not. Take the shortest prefix of the ranked
    list whose non-doomed ids plus at most `budget` doomed ones make the answer: the
    prefix's other doomed ids are viewed early, go out of stock and leave the ideal.
    """
    for n in range(min(k, len(ranked)), len(ranked) + 1):
        prefix = ranked[:n]
        kept = [i for i in prefix if i not in doomed]
        doomed_in = [i for i in prefix if i in doomed]
        size = k if n < len(ranked) else min(k, len(kept) + min(budget, len(doomed_in)))
        need = size - len(kept)
        if 0 <= need <= budget:
            fired = doomed_in[need:]
            answer = tuple(i for i in prefix if i not in fired)
            views = fired + kept + doomed_in[:need]
            last = min(budget, size)
            early = views[: len(views) - last]
            turns = [tuple(early[i : i + budget]) for i in range(0, len(early), budget)]
            return OraclePlan(tuple(turns) + (tuple(views[len(views) - last:]),), answer)
    raise ValueError("the ranked list is empty")


def search_shown(world: World, search: dict[str, Any]) -> set[str]:
    """The product ids the oracle's opening catalog_search shows (the same call the tool makes)."""
    from ecom_bench.catalog.search import SearchFilters

    args = {k: v for k, v in search.items() if k not in ("query", "limit")}
    return {p.id for p in world.search(search["query"], SearchFilters(**args), search["limit"])}


def most_oracle_turns(k: int, doomed: int, budget: int) -> int:
    """An upper bound on the oracle's turns (its search, then `oracle_plan`) whatever its search shows.

    The plan views a prefix of the ranked list no longer than max(k, k − budget + doomed)
    (by then it holds k − budget ids that stay in stock, and at most `budget` doomed ones
    complete the answer), `budget` views a turn, the last turn ending with the answer.
    """
    return 2 + math.ceil(max(k, k - budget + doomed) / budget)


def reference_turns(ranked: tuple[str, ...], doomed: tuple[str, ...], k: int, budget: int) -> int:
    """T_min of r_eff for E_PD / E_SUB: the oracle's turns (its search, then `oracle_plan`) when its
    search shows none of the doomed ids; a search that shows some only shortens the plan."""
    if not ranked:
        return 1
    return 1 + len(oracle_plan(list(ranked), set(doomed), k, budget).turns)


def settle_stock_outs(world: World, ranked: list[str], doomed: list[str], search: dict[str, Any], k: int,
                      difficulty: Difficulty) -> list[str]:
    """Drop scheduled stock-outs (highest-ranked first) until the oracle's play fits T_max turns.

    The oracle spends one turn on `search` (the doomed ids it shows go out of stock),
    then follows `oracle_plan` over what is left. The search runs only when the bound
    `most_oracle_turns` does not already fit (a catalogue search is the costliest part
    of a reset, and whatever it shows, nothing is dropped then).
    """
    doomed = list(doomed)
    if most_oracle_turns(k, len(doomed), difficulty.tool_budget) <= difficulty.max_turns:
        return doomed
    shown = search_shown(world, search)

    def turns() -> int:
        left = [i for i in ranked if not (i in shown and i in doomed)]
        return 1 + len(oracle_plan(left, set(doomed) - shown, k, difficulty.tool_budget).turns)

    while turns() > difficulty.max_turns:
        spared = next(i for i in ranked if i in doomed and i not in shown)
        doomed.remove(spared)
        world.stock_outs[:] = [e for e in world.stock_outs if not (e.watch == spared and e.item_ids == (spared,))]
    return doomed


# ---------------------------------------------------------------- shared agents
def _call(name: str, n: int, **arguments: Any) -> ToolCallRequest:
    return ToolCallRequest(name, arguments, id=f"{name}-{n}")


class RecommendOracle:
    """One search, then views each id it will recommend (catalog_get_product), then recommends.

    It reads the hidden ranked list and the scheduled stock-outs. Its opening search
    (whose doomed hits go out of stock when that turn ends) tells it, from the result,
    which ideal ids are gone; `oracle_plan` then orders its views within B_tool per turn
    so that it ends with exactly the in-stock ideal list. Steps are counted from its own
    messages, so it also works inside a journey.
    """

    name = "oracle"
    reads_hidden_goal = True

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        if hidden is None:
            raise ValueError("the oracle needs the hidden goal")
        goal = hidden["goal"]
        step = sum(1 for m in messages if m.role == "assistant")
        if step == 0:
            return AgentAction(tool_calls=(_call("catalog_search", 0, **goal["oracle_search"]),))
        if step == 1:
            return AgentAction(text="I'm checking a few options for you.")
        shown = {row["product_id"] for c, out in tool_results(messages) if c.name == "catalog_search"
                 for row in (out.json() or {}).get("results", [])}
        doomed = set(goal["doomed_ids"])
        ranked = [i for i in goal["ranked_ids"] if not (i in shown and i in doomed)]
        budget = status.tool_budget
        plan = oracle_plan(ranked, doomed - shown, goal["k"], budget)
        actions: list[AgentAction] = []
        n = 1
        for t, ids in enumerate(plan.turns):
            calls = tuple(_call("catalog_get_product", n + j, product_id=i) for j, i in enumerate(ids))
            n += len(ids)
            if t < len(plan.turns) - 1:
                actions += [AgentAction(tool_calls=calls), AgentAction(text="Let me check a few more.")]
            else:
                actions.append(AgentAction(tool_calls=calls + (_call("recommend_products", n,
                                                                     product_ids=list(plan.answer)),)))
        return actions[min(step - 2, len(actions) - 1)]


def requested_k(text: str, default: int = 3) -> int:
    """The list size the customer asked for ("your top 4 picks"; "your top pick" is 1)."""
    m = re.search(r"\btop (?:(\d{1,2})\b|(pick|option)\b)", text.lower())
    if m is None:
        return default
    return int(m.group(1)) if m.group(1) else 1


class RecommendRandom:
    """One search on the customer's own words, then k random ids from its results."""

    name = "random"
    reads_hidden_goal = False

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        users = [m for m in messages if m.role == "user"]
        opening = users[0].text if users else ""
        searches = [(c, r) for c, r in tool_results(messages) if c.name == "catalog_search"]
        if not searches:
            return AgentAction(tool_calls=(_call("catalog_search", len(messages), query=opening[:400] or "product"),))
        results = (searches[-1][1].json() or {}).get("results", [])
        ids = [r["product_id"] for r in results]
        if not ids:
            return AgentAction(text="Sorry, I could not find anything for that.")
        rng = random.Random(derive_seed("random-recommender", opening))
        picks = rng.sample(ids, min(requested_k(opening), len(ids)))
        return AgentAction(tool_calls=(_call("recommend_products", len(messages), product_ids=picks),))
