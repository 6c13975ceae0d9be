"""The verifier's ideal list reuses the generator's base scores (kept on the pool) and reads only
the stock anew: it equals the list computed from scratch, before and after stock-outs."""

from __future__ import annotations

import numpy as np
import pytest

from ecom_bench.world.state import in_stock_mask
from ecom_bench.envs._ranking import _relevances, evaluation_pool, ideal_ranking
from ecom_bench.episode import new_episode


def _from_scratch(goal, world) -> list[tuple[str, float]]:
    """The ideal list as it was computed before the reuse: base scores, span, Python sort."""
    pool = evaluation_pool(goal, world)
    base = goal.base_relevance(world.catalog, pool.rows, pool.s, pool.sims)
    span = (float(base.min()), float(base.max())) if len(base) else (0.0, 1.0)
    rel = _relevances(pool.meets_all & in_stock_mask(world, pool.rows), base, span)
    return sorted(((i, float(r)) for i, r in zip(pool.ids, rel.tolist(), strict=True) if r > 0),
                  key=lambda x: (-x[1], x[0]))


@pytest.mark.parametrize("env", ["discovery", "substitution"])
def test_ideal_list_reused_equals_from_scratch(context, env: str) -> None:
    for seed in range(12):
        ep = new_episode(env, 6, seed, 0, context=context)
        goal, world = ep.problem.task.goal, ep.world
        first = ideal_ranking(goal, world)
        assert first.ranked == _from_scratch(goal, world)
        assert evaluation_pool(goal, world).bases, "the generator's base scores are kept on the pool"
        # stock moves between generation and scoring: only the stock is read again
        gone = [pid for pid, _ in first.ranked[: 1 + seed % 4]]
        world.set_out_of_stock(*gone)
        again = ideal_ranking(goal, world)
        assert again.ranked == _from_scratch(goal, world)
        assert not set(gone) & {pid for pid, _ in again.ranked}
        assert again.span == first.span and again.pool == first.pool


def test_ties_in_relevance_go_by_id(context) -> None:
    ep = new_episode("substitution", 2, 3, 0, context=context)
    ranked = ideal_ranking(ep.problem.task.goal, ep.world).ranked
    keys = [(-r, pid) for pid, r in ranked]
    assert keys == sorted(keys) and np.all(np.array([r for _, r in ranked]) > 0)
