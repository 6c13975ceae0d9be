"""Resets flat in catalogue size: the per-catalogue indexes equal the brute-force
answers on the 3k catalogue, the pruned evaluation pool equals grading every product, the
oracle's turn bound holds, and a reset makes no per-product pass over a leaf category."""

from __future__ import annotations

import random
from unittest import mock

import numpy as np
import pytest

from ecom_bench.catalog.catalog import fold
from ecom_bench.catalog.search import SearchFilters
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs._ranking import (
    NO_GATE,
    POOL_SIZE,
    Constraint,
    Gate,
    _top_rows,
    constraints_from,
    most_oracle_turns,
    oracle_plan,
    satisfaction_matrix,
)
from ecom_bench.envs.context import prepare
from ecom_bench.episode import new_episode
from ecom_bench.world import World
from ecom_bench.world.state import distractor_pool, in_stock_mask


def test_indexes_equal_brute_force(context):
    catalog = context.catalog
    index = prepare(catalog)
    world = World(catalog=catalog, difficulty=Difficulty.from_level(0), seed=0)
    assert {k: v.tolist() for k, v in index.leaf_rows.items()} == catalog.by_leaf_category
    brands: dict[str, list[int]] = {}
    for i, p in enumerate(catalog.products):
        brands.setdefault(fold(p.brand), []).append(i)
    assert {k: v.tolist() for k, v in index.brand_rows.items()} == brands
    assert index.base_in_stock.tolist() == [world.in_stock(p) for p in catalog.products]
    assert [catalog.products[i].id for i in np.argsort(index.id_rank)] == sorted(p.id for p in catalog.products)
    assert index.leaf_in_stock == {k: sum(world.in_stock(catalog.products[i]) for i in v)
                                   for k, v in catalog.by_leaf_category.items()}
    by_price = {k: sorted(v, key=lambda i: (catalog.products[i].price, catalog.products[i].id))
                for k, v in catalog.by_leaf_category.items()}
    assert {k: index.leaf_by_price(k).tolist() for k in by_price} == by_price
    assert index.leaf_by_price("no such leaf").size == 0


def test_in_stock_mask_follows_the_episodes_stock_changes(context):
    catalog = context.catalog
    world = World(catalog=catalog, difficulty=Difficulty.from_level(0), seed=0)
    rng = random.Random(0)
    with_variants = [p for p in catalog.products if len(p.variants) > 1]
    world.set_out_of_stock(*(p.id for p in rng.sample(catalog.products, 30)))
    world.set_out_of_stock(*(rng.choice(p.variants).id for p in rng.sample(with_variants, 30)))
    for p in rng.sample(with_variants, 10):  # every variant out one by one: the product is out of stock
        world.set_out_of_stock(*(v.id for v in p.variants))
    rows = np.arange(len(catalog))
    assert in_stock_mask(world, rows).tolist() == [world.in_stock(p) for p in catalog.products]


def test_variant_owner_also_for_ids_not_named_after_their_product(context):
    """A variant is found from its id ("<product id>-<suffix>") and, for loaded catalogues that
    name variants otherwise (even after another product), from the index's small dict."""
    import dataclasses

    from ecom_bench.catalog import Catalog

    products = [p for p in context.catalog.products[:60] if p.variants][:3]
    renamed = [dataclasses.replace(products[0], variants=tuple(dataclasses.replace(v, id=f"SKU{j}")
                                                               for j, v in enumerate(products[0].variants))),
               dataclasses.replace(products[1], variants=tuple(dataclasses.replace(v, id=f"{products[2].id}-x{j}")
                                                               for j, v in enumerate(products[1].variants))),
               products[2]]
    catalog = Catalog(renamed, name="odd variant ids")
    index = prepare(catalog)
    for row, p in enumerate(renamed):
        assert catalog.variant_ids_at(row) == [v.id for v in p.variants]
        assert all(index.variant_owner(catalog, v.id) == row for v in p.variants)
    assert set(index.odd_variant_rows) == {v.id for p in renamed[:2] for v in p.variants}
    assert index.variant_owner(catalog, "nope") is None and index.variant_owner(catalog, f"{products[2].id}-zz") is None
    world = World(catalog=catalog, difficulty=Difficulty.from_level(0), seed=0)
    world.set_out_of_stock(*(v.id for v in renamed[1].variants))
    assert in_stock_mask(world, np.arange(3)).tolist() == [world.in_stock(p) for p in renamed]


def _full_pool(catalog, requirements, gate):
    sat = satisfaction_matrix(catalog, requirements)
    order = np.argsort(-sat.mean(axis=1), kind="stable")
    rows = order[gate.mask(catalog)[order]][:POOL_SIZE]
    return rows, sat[rows]


@pytest.mark.parametrize("level", [0, 3, 6, 9, 12])
def test_pruned_pool_equals_grading_every_product(context, level):
    catalog = context.catalog
    rng = random.Random(level)
    difficulty = Difficulty.from_level(level)
    for _ in range(15):
        p = rng.choice(catalog.products)
        category, constraints = constraints_from(p, rng, difficulty.n_constraints, difficulty)
        requirements = (category, *constraints)
        gates = [NO_GATE, Gate(exclude=(p.id,))]
        if p.attributes:
            name, value = sorted(p.attributes.items())[0]
            gates.append(Gate(require=(Constraint("attribute", value, attribute=name),), exclude=(p.id,)))
        for gate in gates:
            rows, sat = _top_rows(catalog, requirements, gate)
            want_rows, want_sat = _full_pool(catalog, requirements, gate)
            assert rows.tolist() == want_rows.tolist()
            assert np.array_equal(sat, want_sat)


def test_pruning_stops_early_on_a_big_catalogue_shape(context):
    """With one leaf as large as the pool, the categorical levels decide it (no full grading)."""
    catalog = context.catalog
    p = catalog.products[0]
    requirements = (Constraint("category", p.leaf_category), Constraint("brand", p.brand),
                    Constraint("price", 10_000.0), Constraint("rating", 1.0), Constraint("ship", 10))
    with mock.patch("ecom_bench.envs._ranking.POOL_SIZE", 5):
        import ecom_bench.envs._ranking as ranking

        calls = []
        real = ranking.satisfaction_matrix
        with mock.patch.object(ranking, "satisfaction_matrix",
                               side_effect=lambda c, r, rows=None: calls.append(rows) or real(c, r, rows)):
            rows, _ = _top_rows(catalog, requirements, NO_GATE)
    assert len(rows) == 5 and all(r is not None for r in calls)  # never the whole catalogue


def test_oracle_turn_bound_holds():
    rng = random.Random(0)
    for _ in range(3000):
        ranked = [f"p{i}" for i in range(rng.randint(0, 40))]
        doomed = {i for i in ranked if rng.random() < rng.random()}
        shown = {i for i in ranked if rng.random() < 0.3}
        k, budget = rng.randint(1, 10), rng.randint(1, 8)
        left = [i for i in ranked if not (i in shown and i in doomed)]
        turns = 1 + len(oracle_plan(left, doomed - shown, k, budget).turns)
        assert turns <= most_oracle_turns(k, len(doomed), budget)


def test_distractor_pool_equals_filtering_the_leaf(context):
    catalog = context.catalog
    rng = random.Random(1)
    for _ in range(40):
        shown = rng.sample(catalog.products, 3)
        leaf = shown[0].leaf_category
        p = rng.choice([catalog.products[i] for i in catalog.by_leaf_category[leaf]])
        name, value = next(iter(sorted(p.attributes.items())), (None, None))
        filters = rng.choice([
            None, SearchFilters(), SearchFilters(max_price=p.price), SearchFilters(min_price=p.price, min_rating=4.0),
            SearchFilters(max_ship_days=p.ship_days, brand=f" {p.brand.upper()} "),
            SearchFilters(category=p.category[0]), SearchFilters(category="no such category"),
            SearchFilters(category=" > ".join(p.category[-2:]), max_price=p.price * 1.5),
            SearchFilters(attributes={name: value} if name else None)])
        want = [catalog.products[i] for i in catalog.by_leaf_category[leaf]
                if catalog.products[i].id not in {s.id for s in shown}]
        if filters is not None:
            want = [q for q in want if filters.matches(q)]
        assert list(distractor_pool(catalog, shown, filters)) == want


@pytest.mark.parametrize("env", ["discovery", "substitution", "bundle", "returns", "tracking"])
def test_a_reset_walks_no_leaf_in_python(context, env):
    """`World.in_stock` and the search filters' per-product test are what a leaf walk calls:
    a reset calls them a few times (its chosen products), never once per product of a leaf."""
    prepare(context.catalog)
    leaf = min(len(v) for v in context.catalog.by_leaf_category.values())
    counts = {"in_stock": 0, "filters": 0}
    real_in_stock, real_matches = World.in_stock, SearchFilters.matches

    def in_stock(self, *a, **k):
        counts["in_stock"] += 1
        return real_in_stock(self, *a, **k)

    def matches(self, *a, **k):
        counts["filters"] += 1
        return real_matches(self, *a, **k)

    with mock.patch.object(World, "in_stock", in_stock), mock.patch.object(SearchFilters, "matches", matches):
        for i in range(4):
            for d in (3, 9):
                counts.update(in_stock=0, filters=0)
                new_episode(env, d, 0, i, context=context)
                assert counts["in_stock"] < leaf / 2 and counts["filters"] < leaf / 2, (env, d, i, counts, leaf)
