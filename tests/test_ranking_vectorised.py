"""The vectorised ranking path (catalogue column views, gates, the cached pool) agrees with the
per-product rules it replaces, and generation computes each evaluation pool once."""

from __future__ import annotations

import numpy as np

from ecom_bench.envs._ranking import Constraint, Gate, _pool, ideal_ranking, offered_values, satisfaction_matrix
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.agents import get_policy


def _constraints(catalog) -> list[Constraint]:
    """Every kind of constraint, with values drawn from the catalogue itself (some met, some not)."""
    rng = np.random.default_rng(0)
    out: list[Constraint] = []
    for i in rng.choice(len(catalog), 12, replace=False).tolist():
        p = catalog.products[i]
        out += [Constraint("price", float(round(p.price))), Constraint("rating", 4.0), Constraint("ship", p.ship_days),
                Constraint("category", p.leaf_category), Constraint("brand", f"  {p.brand.upper()} ")]
        out += [Constraint("attribute", f" {v.upper()}", attribute=a) for a, v in p.attributes.items()]
        out += [Constraint("attribute", v.value, attribute=v.attribute) for v in p.variants[:2]]
    return out + [Constraint("attribute", "no such value", attribute="color"),
                  Constraint("attribute", "x", attribute="no_such_attribute")]


def test_satisfaction_matrix_equals_the_per_product_rule(context):
    catalog = context.catalog
    constraints = tuple(_constraints(catalog))
    matrix = satisfaction_matrix(catalog, constraints)
    scalar = np.array([[c.satisfaction(p) for c in constraints] for p in catalog.products])
    assert matrix.shape == (len(catalog), len(constraints))
    assert np.array_equal(matrix, scalar)  # exactly: s(p) feeds pinned scores
    rows = np.array([5, 0, 17, 5])
    assert np.array_equal(satisfaction_matrix(catalog, constraints, rows), scalar[rows])


def test_offering_matches_offered_values(context):
    catalog = context.catalog
    for p in catalog.products[:200]:
        for attribute in {*p.attributes, *(v.attribute for v in p.variants)}:
            for value in offered_values(p, attribute):
                assert catalog.offering(attribute, value.upper())[catalog.index_of(p.id)]
    assert not catalog.offering("color", "no such colour").any()


def test_gate_mask_equals_calling_the_gate(context):
    catalog = context.catalog
    p0 = next(p for p in catalog.products if p.variants)
    v = p0.variants[0]
    gate = Gate(require=(Constraint("attribute", v.value, attribute=v.attribute),), exclude=(p0.id,))
    expected = np.array([gate(p) for p in catalog.products])
    assert np.array_equal(gate.mask(catalog), expected)
    assert expected.any() and not expected[catalog.index_of(p0.id)]
    assert np.array_equal(gate.mask(catalog, np.array([3, catalog.index_of(p0.id)])), expected[[3, catalog.index_of(p0.id)]])
    assert Gate().mask(catalog).all()


def test_the_verifier_reuses_the_pool_generation_computed(context):
    for env in ("discovery", "substitution"):
        _pool.cache_clear()
        episode = new_episode(env, 6, 0, 3, context=context)
        built = _pool.cache_info()
        assert built.misses == 1, f"{env}: generation should compute one pool"
        run = run_policy(episode, get_policy(env, "oracle"))
        after = _pool.cache_info()
        assert after.misses == built.misses and after.hits > built.hits, f"{env}: the verifier recomputed its pool"
        assert run.result.reward.success
        ideal = ideal_ranking(episode.problem.goal, episode.problem.world)
        assert len(ideal.pool) == len(set(ideal.pool)) <= 500
