"""A deterministic synthetic catalogue with realistic marketplace content.

`generate_synthetic_catalog(n, seed)` writes n products over every leaf of the taxonomy
(`catalog.taxonomy`): brand, product line, noun, attributes drawn from the leaf's value
pools, a marketplace-style title, a templated description, 3-5 feature bullets, a store,
a log-uniform price with retail endings, a high-skewed rating, a long-tailed review
count, low-skewed shipping days, stock (about 5% out of stock) and 3 synthesised
variants (`catalog.variants`).

Title convention: "{Brand} {Line} {Noun}, {spec parts}, {feature}", e.g.
"VoltEdge PowerPort Wall Charger, 65W, GaN Fast Charging". The part before the first
comma is the product's short name (`catalog.naming.short_name`), the name the
simulated user says; it is unique across the catalogue. The spec parts leave out the
attribute the variants vary along (the title names the product, not one of its
options, as on a real listing page), and so does the description.

All randomness comes from one `random.Random` seeded from (seed, n) through sha256, so
the same (n_products, seed) gives identical products in every process.
"""

from __future__ import annotations

import bisect
import gc
import hashlib
import logging
import math
import os
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from ecom_bench.catalog.catalog import (
    PRODUCT_SCHEMA,
    STORAGE_VERSION,
    VARIANT_TYPE,
    Catalog,
    cache_root,
    progress,
    table_from_chunks,
    table_from_columns,
)
from ecom_bench.catalog.taxonomy import (
    LINE_MODIFIERS,
    MARKETPLACE_STORES,
    TOP_CATEGORIES,
    Leaf,
    TopCategory,
    attribute_label,
)
from ecom_bench.catalog.variants import synthesize_variants, variant_attribute

__all__ = ["generate_synthetic_catalog", "product_id", "synthetic_cache_path"]

log = logging.getLogger(__name__)

#: Share of products sold by a marketplace seller rather than the brand's own store.
P_MARKETPLACE = 0.35
#: Share of products whose line carries a model modifier ("PowerPort Pro").
P_MODIFIER = 0.15
#: Share of products out of stock.
P_OUT_OF_STOCK = 0.05
#: Share of products with a poor rating (uniform 1.0..3.8); the rest ~ N(4.35, 0.38) clipped.
P_POOR_RATING = 0.07
#: Weights of ship_days 1..10 (skewed low).
SHIP_DAY_WEIGHTS = (22, 24, 18, 12, 8, 6, 4, 3, 2, 1)
#: Retail price endings and their weights.
PRICE_ENDINGS = ((0.99, 60), (0.49, 12), (0.95, 10), (0.97, 5), (0.00, 8), (0.79, 5))
#: Relative brand sizes within a category (assigned to brands in a seeded order).
BRAND_WEIGHTS = (6, 5, 4, 3, 3, 2, 2, 2, 1, 1)
_STORE_SUFFIXES = ("Official Store", "Store", "Direct", "Shop")


def product_id(index: int) -> str:
    """The id of the index-th product (0-based): "P0000001", "P0000002", ..."""
    return f"P{index + 1:07d}"


def _rng(seed: int, n_products: int) -> random.Random:
    digest = hashlib.sha256(f"ecom-bench/synthetic/{seed}/{n_products}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _cum(weights: tuple[int, ...] | list[int]) -> list[float]:
    total = float(sum(weights))
    out, acc = [], 0.0
    for w in weights:
        acc += w / total
        out.append(acc)
    out[-1] = 1.0
    return out


_SHIP_CUM = _cum(SHIP_DAY_WEIGHTS)
_ENDING_CUM = _cum([w for _, w in PRICE_ENDINGS])


def _price(u: float, v: float, low: float, high: float) -> float:
    """Log-uniform in [low, high] (u), with a retail ending drawn by v: 23.99, 23.49, 24.00, ..."""
    raw = math.exp(math.log(low) + (math.log(high) - math.log(low)) * u)
    ending = PRICE_ENDINGS[bisect.bisect_left(_ENDING_CUM, v)][0]
    base = math.floor(raw)
    if ending == 0.0 and base < 10:  # whole-dollar prices only on pricier items
        ending = 0.99
    return round(max(base, 1) + ending, 2)


def _description(
    t: int,
    with_specs: bool,
    name: str,
    brand: str,
    line: str,
    leaf: Leaf,
    plural: bool,
    f1: str,
    f2: str,
    specs: list[tuple[str, str]],
) -> str:
    """One or two sentences; every piece is a literal or catalogue data (no templates to leak)."""
    use = leaf.use
    is_ = "are" if plural else "is"
    if t == 0:
        first = f"The {name} {is_} designed for {use}."
    elif t == 1:
        first = f"Made for {use}, the {name} {is_} a dependable everyday pick."
    elif t == 2:
        first = f"Meet the {name}, built for {use}."
    else:
        first = f"{brand} designed the {line} {leaf.noun} for {use}."
    if with_specs and specs:
        spec = ", ".join(f"{attribute_label(k).capitalize()} {v}" for k, v in specs)
        return f"{first} Specifications: {spec}."
    return f"{first} Highlights: {f1}, {f2}."


class _LeafPlan:
    """Per-leaf constants precomputed once per catalogue."""

    __slots__ = ("brands", "extra", "leaf", "lines", "plural", "spec_attrs", "title_attrs", "top", "vattr")

    def __init__(self, leaf: Leaf, top: TopCategory, brands: list[str]) -> None:
        self.leaf = leaf
        self.top = top
        self.brands = brands  # weighted: big brands repeated
        self.lines = top.product_lines
        sample = {a: pool[0] for a, pool in leaf.attributes}
        self.vattr = variant_attribute(leaf.path, sample)
        self.title_attrs = [a for a in leaf.title_attrs if a != self.vattr][:2]
        self.spec_attrs = [a for a, _ in leaf.attributes if a != self.vattr]
        self.extra = top.extra_features
        self.plural = leaf.noun.endswith("s")  # "Work Gloves are", "Air Fryer is"


def _leaf_order() -> list[tuple[Leaf, TopCategory]]:
    """Leaves interleaved across top categories, so any 10 consecutive cover all tops."""
    order = []
    depth = max(len(t.leaves) for t in TOP_CATEGORIES)
    for j in range(depth):
        for t in TOP_CATEGORIES:
            if j < len(t.leaves):
                order.append((t.leaves[j], t))
    return order


#: Rows generated per Arrow record batch: the Python lists of one batch are all that is
#: held at once besides the finished batches.
CHUNK_ROWS = 1 << 16


def catalog_name(n_products: int, seed: int) -> str:
    return f"synthetic-{n_products}-s{seed}"


def generator_version() -> str:
    """A hash of the sources that decide the synthetic products: part of the on-disk cache
    key, so a changed generator never serves a stale catalogue."""
    from ecom_bench.catalog import models, naming, taxonomy, variants

    h = hashlib.sha256(f"storage {STORAGE_VERSION}".encode())
    for mod in (sys.modules[__name__], models, naming, taxonomy, variants):
        h.update(Path(mod.__file__ or "").read_bytes())
    return h.hexdigest()[:12]


def synthetic_cache_path(n_products: int, seed: int, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    return cache_root(cache_dir) / "catalog" / f"{catalog_name(n_products, seed)}-{generator_version()}.arrow"


def generate_synthetic_catalog(n_products: int = 20_000, seed: int = 0, *, use_cache: bool = False,
                               cache_dir: str | os.PathLike[str] | None = None,
                               show_progress: bool = True) -> Catalog:
    """A deterministic catalogue of `n_products` products (name "synthetic-{n}-s{seed}").

    Products are spread evenly over every leaf (each leaf gets n // n_leaves or one
    more; with n >= 10 every top category is present, with n >= n_leaves every leaf).
    Ids are product_id(0..n-1). Short names (title before the first comma) are unique.

    Written straight into Arrow columns (no `Product` objects). With `use_cache`, the
    catalogue is read from (memory-mapped) or written to `synthetic_cache_path`.
    """
    if not isinstance(n_products, int) or isinstance(n_products, bool) or n_products < 0:
        raise ValueError(f"n_products must be a non-negative integer, got {n_products!r}")
    path = synthetic_cache_path(n_products, seed, cache_dir) if use_cache else None
    if path is not None and path.exists():
        try:
            cat = Catalog.open(path, name=catalog_name(n_products, seed))
            if len(cat) == n_products:
                return cat
            log.warning("synthetic catalogue cache %s has %d rows, not %d; regenerating", path, len(cat), n_products)
        except (OSError, ValueError, pa.ArrowException) as e:
            log.warning("synthetic catalogue cache %s is unreadable (%s); regenerating", path, e)
    # Hundreds of thousands of small objects, none cyclic: the cyclic GC's repeated
    # generation scans would roughly double the build time.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    columns: dict[str, list[pa.Array]] = {name: [] for name in PRODUCT_SCHEMA.names}
    try:
        with progress(n_products, f"Generating {n_products:,} synthetic products", "product",
                      show=show_progress) as bar:
            for batch in _generate(n_products, seed, bar.update):
                for name in PRODUCT_SCHEMA.names:
                    columns[name].extend(batch.column(name).chunks)
    finally:
        if gc_was_enabled:
            gc.enable()
    cat = Catalog.from_table(table_from_chunks(columns), name=catalog_name(n_products, seed))
    return cat.mapped_from(path, "synthetic catalogue") if path is not None else cat


def _generate(n_products: int, seed: int, advance: Callable[[int], object] = lambda k: None) -> Iterator[pa.Table]:
    """The catalogue as `PRODUCT_SCHEMA` tables of up to CHUNK_ROWS rows, in order."""
    rng = _rng(seed, n_products)

    brand_store: dict[str, str] = {}
    plans: list[_LeafPlan] = []
    top_brands: dict[str, list[str]] = {}
    for t in TOP_CATEGORIES:
        order = list(t.brands)
        rng.shuffle(order)
        weighted = [b for b, w in zip(order, BRAND_WEIGHTS, strict=False) for _ in range(w)]
        weighted += [b for b in order[len(BRAND_WEIGHTS) :]]  # brands beyond the weight table: weight 1
        top_brands[t.name] = weighted
        for b in t.brands:
            digest = hashlib.sha256(b.encode()).digest()
            brand_store[b] = f"{b} {_STORE_SUFFIXES[digest[0] % len(_STORE_SUFFIXES)]}"
    for leaf, t in _leaf_order():
        plans.append(_LeafPlan(leaf, t, top_brands[t.name]))

    assignment = [plans[i % len(plans)] for i in range(n_products)]
    rng.shuffle(assignment)

    used: set[str] = set()
    cols: dict[str, list[Any]] = {f: [] for f in PRODUCT_SCHEMA.names}
    vcols: dict[str, list[Any]] = {f.name: [] for f in VARIANT_TYPE}
    v_off = [0]
    ids, titles, descriptions, categories = cols["id"], cols["title"], cols["description"], cols["category"]
    brands, attrs_col, prices, ratings = cols["brand"], cols["attributes"], cols["price"], cols["rating"]
    counts, ships, stocks, features, stores = (cols["rating_count"], cols["ship_days"], cols["stock"],
                                               cols["features"], cols["store"])
    v_ids, v_pids, v_attrs, v_values, v_prices, v_stocks = (vcols[f.name] for f in VARIANT_TYPE)
    rnd, gauss, lognormvariate = rng.random, rng.gauss, rng.lognormvariate
    log_stock_lo, log_stock_hi = math.log(5), math.log(500)
    n_mod = len(LINE_MODIFIERS)
    n_market = len(MARKETPLACE_STORES)
    for i, plan in enumerate(assignment):
        leaf = plan.leaf
        pid = product_id(i)
        brand = plan.brands[int(rnd() * len(plan.brands))]
        noun = leaf.noun
        lines = plan.lines

        # --- unique short name: brand + line (+ modifier) + noun
        line = head = ""
        for _ in range(8):
            line = lines[int(rnd() * len(lines))]
            if rnd() < P_MODIFIER:
                line = f"{line} {LINE_MODIFIERS[int(rnd() * n_mod)]}"
            head = f"{brand} {line} {noun}"
            if head.lower() not in used:
                break
        else:  # crowded leaf: extend the last line with a modifier, then "Gen N", until free
            base = line.split(" ")[0]
            k = 0
            while head.lower() in used:
                suffix = LINE_MODIFIERS[k] if k < n_mod else f"Gen {k - n_mod + 2}"
                line = f"{base} {suffix}"
                head = f"{brand} {line} {noun}"
                k += 1
        used.add(head.lower())

        attributes = {a: pool[int(rnd() * len(pool))] for a, pool in leaf.attributes}

        n_feat = 3 + int(rnd() * 3)  # 3..5 bullets: leaf features + one category-wide one
        feats = list(leaf.features)  # partial Fisher-Yates: the first n_feat - 1 are a random sample
        n_leaf_feats = len(feats)
        for j in range(n_feat - 1):
            r = j + int(rnd() * (n_leaf_feats - j))
            feats[j], feats[r] = feats[r], feats[j]
        del feats[n_feat - 1 :]
        feats.insert(1 + int(rnd() * (n_feat - 1)), plan.extra[int(rnd() * len(plan.extra))])
        spec_parts = [attributes[a] for a in plan.title_attrs]
        title = f"{head}, {' '.join(spec_parts)}, {feats[0]}" if spec_parts else f"{head}, {feats[0]}"

        specs = [(a, attributes[a]) for a in plan.spec_attrs]
        description = _description(
            int(rnd() * 4), rnd() < 0.8, head, brand, line, leaf, plan.plural, feats[0], feats[1], specs
        )

        store = MARKETPLACE_STORES[int(rnd() * n_market)] if rnd() < P_MARKETPLACE else brand_store[brand]
        low, high = leaf.price_range
        price = _price(rnd(), rnd(), low, high)
        if rnd() < P_POOR_RATING:  # a minority of poorly reviewed products, the rest skewed high
            rating = round(1.0 + 2.8 * rnd(), 1)
        else:
            rating = round(min(5.0, max(1.0, gauss(4.35, 0.38))), 1)
        rating_count = min(250_000, int(lognormvariate(4.0, 1.6)))
        ship_days = min(10, 1 + bisect.bisect_left(_SHIP_CUM, rnd()))
        u = rnd()
        stock = (
            0 if u < P_OUT_OF_STOCK else int(math.exp(log_stock_lo + (log_stock_hi - log_stock_lo) * rnd()))
        )
        ids.append(pid)
        titles.append(title)
        descriptions.append(description)
        categories.append(leaf.path)
        brands.append(brand)
        attrs_col.append(list(attributes.items()))
        prices.append(price)
        ratings.append(rating)
        counts.append(rating_count)
        ships.append(ship_days)
        stocks.append(stock)
        features.append(feats)
        stores.append(store)
        for v in synthesize_variants(pid, leaf.path, attributes, price, stock):
            v_ids.append(v.id)
            v_pids.append(v.product_id)
            v_attrs.append(v.attribute)
            v_values.append(v.value)
            v_prices.append(v.price)
            v_stocks.append(v.stock)
        v_off.append(len(v_ids))
        if len(ids) == CHUNK_ROWS or i == n_products - 1:
            yield table_from_columns(cols, v_off, vcols)
            advance(len(ids))
            for col in (*cols.values(), *vcols.values()):
                col.clear()
            v_off[:] = [0]
