"""Property tests over env x difficulty x seed: every generated task is
valid and solvable, rewards stay in [-1, 1], and (env, d, seed) fixes the task and the
transcript in any process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from ecom_bench.agents import get_policy
from ecom_bench.envs import ENVIRONMENTS
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy

pytestmark = pytest.mark.reliability

ENVS = sorted(ENVIRONMENTS)
triples = st.tuples(st.sampled_from(ENVS), st.integers(0, 15), st.integers(0, 2**31 - 1))
#: Fixed examples in CI; ten times as many, freshly drawn, under --long (conftest profiles).
SETTINGS = settings(max_examples=examples(80))


def transcript(context, env: str, d: int, seed: int, policy: str) -> dict:
    run = run_policy(new_episode(env, d, seed, 0, context=context), get_policy(env, policy))
    return {"messages": [(m.role, m.text, [(c.name, c.arguments) for c in m.tool_calls]) for m in run.messages],
            "reward": run.result.reward.to_dict(), "hidden": run.result.hidden}


@SETTINGS
@given(triples)
def test_every_task_is_valid_and_the_oracle_solves_it(context, triple):
    env, d, seed = triple
    episode = new_episode(env, d, seed, 0, context=context)
    assert episode.opening.strip() and episode.tool_specs()
    assert episode.problem.hidden_state()["goal"]
    result = run_policy(episode, get_policy(env, "oracle")).result
    assert result.reward.success, f"{env} d={d} seed={seed}: {result.explanation()}"
    assert result.reward.hallucination == 0.0


@SETTINGS
@given(triples, st.sampled_from(["heuristic", "random"]))
def test_rewards_stay_in_range(context, triple, policy):
    env, d, seed = triple
    r = run_policy(new_episode(env, d, seed, 0, context=context), get_policy(env, policy)).result.reward
    for value in (r.task, r.efficiency, r.hallucination, r.total):
        assert -1.0 <= value <= 1.0
    assert r.total == -1.0 if r.hard_fail else True


def test_same_triple_same_task_and_transcript_in_a_fresh_process(context):
    cases = [(env, d, seed) for env, d, seed in
             zip(ENVS, (1, 4, 7, 10, 13, 15, 2, 9), (17, 2**20, 99, 5, 123456, 8, 31337, 42), strict=True)]
    here = {f"{e}/{d}/{s}": transcript(context, e, d, s, "heuristic") for e, d, s in cases}
    code = (
        "import json, sys; sys.path.insert(0, 'tests');"
        "from conftest import TEST_SPEC; from ecom_bench.envs.context import load_context;"
        "from test_properties import transcript; ctx = load_context(TEST_SPEC);"
        f"cases = {cases!r};"
        "print(json.dumps({f'{e}/{d}/{s}': transcript(ctx, e, d, s, 'heuristic') for e, d, s in cases}, default=str))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONHASHSEED": "7"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    there = json.loads(proc.stdout.strip().splitlines()[-1])
    assert json.loads(json.dumps(here, default=str)) == there
