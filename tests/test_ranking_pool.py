"""The evaluation pool without grading the catalogue: the products meeting no
categorical constraint are scanned in catalogue order only as far as they can still enter,
and the pool equals grading every product, including at the scan's stopping points (a tail
tied at what the numeric constraints alone give, a tail below it, a gate)."""

from __future__ import annotations

import random
from unittest import mock

import numpy as np
import pytest

import ecom_bench.envs._ranking as ranking
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs._ranking import NO_GATE, Constraint, Gate, _top_rows, constraints_from, satisfaction_matrix


def _full_pool(catalog, requirements, gate, size):
    sat = satisfaction_matrix(catalog, requirements)
    order = np.argsort(-sat.mean(axis=1), kind="stable")
    rows = order[gate.mask(catalog)[order]][:size]
    return rows, sat[rows]


def _gates(product):
    gates = [NO_GATE, Gate(exclude=(product.id,))]
    for name, value in sorted(product.attributes.items())[:1]:
        gates.append(Gate(require=(Constraint("attribute", value, attribute=name),), exclude=(product.id,)))
    gates.append(Gate(require=(Constraint("price", product.price * 1.5),)))  # a gate no index answers
    return gates


@pytest.mark.parametrize("size,chunk", [(500, 2000), (40, 7), (200, 50), (1200, 300)])
def test_scanned_pool_equals_grading_every_product(context, size, chunk):
    catalog = context.catalog
    rng = random.Random(size)
    with mock.patch.object(ranking, "POOL_SIZE", size), mock.patch.object(ranking, "SCAN_CHUNK", chunk):
        for level in (0, 4, 8, 12):
            difficulty = Difficulty.from_level(level)
            for _ in range(6):
                p = rng.choice(catalog.products)
                category, constraints = constraints_from(p, rng, difficulty.n_constraints, difficulty)
                requirements = (category, *constraints)
                for gate in _gates(p):
                    rows, sat = _top_rows(catalog, requirements, gate)
                    want_rows, want_sat = _full_pool(catalog, requirements, gate, size)
                    assert rows.tolist() == want_rows.tolist()
                    assert np.array_equal(sat, want_sat)


def test_a_tail_tied_at_the_numeric_ceiling_scans_only_a_prefix(context):
    """Budget, rating and shipping that most products meet, in a leaf smaller than the pool:
    the pool's tail is products meeting only those, the earliest in catalogue order, and the
    scan stops once it has them (it never grades the whole catalogue)."""
    catalog = context.catalog
    leaf = min(set(catalog.leaf_categories.tolist()), key=lambda c: (np.count_nonzero(catalog.leaf_categories == c), c))
    requirements = (Constraint("category", leaf), Constraint("price", 1e9), Constraint("rating", 1.0),
                    Constraint("ship", 10))
    graded: list[int] = []
    real = ranking.satisfaction_matrix

    def counting(c, r, rows=None):
        graded.append(len(c) if rows is None else len(rows))
        return real(c, r, rows)

    with mock.patch.object(ranking, "POOL_SIZE", 60), mock.patch.object(ranking, "SCAN_CHUNK", 16), \
            mock.patch.object(ranking, "satisfaction_matrix", side_effect=counting):
        rows, _ = _top_rows(catalog, requirements, NO_GATE)
    want, _ = _full_pool(catalog, requirements, NO_GATE, 60)
    assert rows.tolist() == want.tolist()
    assert sum(graded) < len(catalog) // 4
