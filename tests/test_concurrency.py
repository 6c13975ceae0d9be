"""Isolation under concurrency: concurrent episodes share one catalogue
and index but never a cart, a stock change or a seen-set; a parallel Inspect run with
epochs gives exactly the per-sample scores of a serial one.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from inspect_ai import eval as inspect_eval

from conftest import TEST_CATALOG_SIZE, score_parts
from ecom_bench import tasks
from ecom_bench.agents import get_policy
from ecom_bench.envs import ENVIRONMENTS
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy

pytestmark = pytest.mark.reliability


def _outcome(context, env: str, i: int) -> str:
    run = run_policy(new_episode(env, 8, 0, i, context=context), get_policy(env, "heuristic"))
    return json.dumps({"reward": run.result.reward.to_dict(), "final": run.result.final_state}, sort_keys=True,
                      default=str)


def test_threads_sharing_one_context_match_a_serial_run(context):
    jobs = [(env, i) for env in ENVIRONMENTS for i in range(4)]
    serial = [_outcome(context, env, i) for env, i in jobs]
    with ThreadPoolExecutor(max_workers=16) as pool:
        parallel = list(pool.map(lambda job: _outcome(context, *job), jobs))
    assert parallel == serial


def _per_sample(log) -> dict:
    return {(s.id, s.epoch): (score_parts(s),
                              json.dumps(s.scores["total"].metadata["final_state"], sort_keys=True))
            for s in log.samples}


def test_parallel_inspect_run_with_epochs_equals_serial(tmp_path):
    def run(max_samples: int):
        task = tasks.collection(envs="C8", difficulty=6, samples=16, catalog_size=TEST_CATALOG_SIZE)
        [log] = inspect_eval(task, model="ecom/heuristic", epochs=2, max_samples=max_samples,
                             log_dir=str(tmp_path / str(max_samples)), display="none")
        assert log.status == "success" and not [s for s in log.samples if s.error]
        return log

    parallel, serial = run(64), run(1)
    assert len(parallel.samples) == 32
    assert _per_sample(parallel) == _per_sample(serial)
    # epochs replay the same episode: both epochs of a sample score the same
    values = _per_sample(parallel)
    for (sid, _epoch), v in values.items():
        assert values[(sid, 1)] == v
