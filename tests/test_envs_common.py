"""The contract every environment keeps, checked for all eight through the core.

Per-env behaviour lives in test_env_<name>.py; this file holds what must be true of
every env alike: solvable by its oracle at every difficulty, rewards in [-1, 1],
reproducible from (env, d, seed) in any process, the three scripted policies, and
no hidden value in what the agent is told up front.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

from conftest import TEST_CATALOG_SIZE
from ecom_bench.agents import get_policy
from ecom_bench.conversation import AgentAction
from ecom_bench.envs import ENVIRONMENTS, get_env
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy

ENVS = list(ENVIRONMENTS)
#: Envs where the random floor must stay at or below 5% success from d = 3.
RANDOM_FLOOR_ENVS = ("discovery", "substitution", "tracking", "policy", "bundle")


def run(context, env, d, index, policy, seed=0):
    return run_policy(new_episode(env, d, seed, index, context=context), get_policy(env, policy))


@pytest.mark.parametrize("env", ENVS)
@pytest.mark.parametrize("d", [0, 3, 6, 9, 12, 15])
def test_oracle_solves_every_task(context, env, d):
    for i in range(4):
        result = run(context, env, d, i, "oracle").result
        r = result.reward
        assert r.success and r.task >= 0.95, f"{env} d={d} #{i}: {result.explanation()}"
        assert r.hallucination == 0.0, result.invented_ids
        assert -1.0 <= r.total <= 1.0


@pytest.mark.parametrize("env", ENVS)
def test_an_actions_calls_stepped_one_at_a_time_are_the_action(context, env):
    """`step(..., more_calls=True)` (an agent's tool runner runs a generation's calls one by one):
    the same transcript, steps and score as the action stepped at once."""
    at_once = new_episode(env, 3, 0, 0, context=context)
    whole = run_policy(at_once, get_policy(env, "oracle"))
    episode, policy = new_episode(env, 3, 0, 0, context=context), get_policy(env, "oracle")
    hidden = episode.problem.hidden_state()
    while not episode.done:
        action = policy.act(episode.messages, hidden, episode.status())
        if not action.tool_calls:
            episode.step(action)
        for i, call in enumerate(action.tool_calls):
            if not episode.done:
                episode.step(AgentAction(action.text if i == 0 else "", (call,)), more_calls=i > 0)
    assert episode.messages == whole.messages
    assert episode.steps == at_once.steps
    assert episode.result().explanation() == whole.result.explanation()


@pytest.mark.parametrize("env", ENVS)
@pytest.mark.parametrize("d", [33, 100, 1000])
def test_difficulty_has_no_cap_every_env_still_generates_solvable_tasks(context, env, d):
    """d has no upper bound (docs/design.md); axes saturate (B_branch stops at 12 clauses) rather than break."""
    result = run(context, env, d, 0, "oracle").result
    assert result.reward.success, f"{env} d={d}: {result.explanation()}"


@pytest.mark.parametrize("env", ENVS)
def test_every_env_has_the_three_scripted_policies(env):
    assert {"oracle", "heuristic", "random"} <= set(get_env(env).policies)
    assert get_policy(env, "oracle").reads_hidden_goal and not get_policy(env, "heuristic").reads_hidden_goal
    assert not get_policy(env, "random").reads_hidden_goal


@pytest.mark.parametrize("env", ENVS)
def test_rewards_stay_in_range_for_every_policy(context, env):
    for policy in ("heuristic", "random"):
        for d in (0, 7, 14):
            r = run(context, env, d, 0, policy).result.reward
            for value in (r.task, r.efficiency, r.hallucination, r.total):
                assert -1.0 <= value <= 1.0


@pytest.mark.parametrize("env", RANDOM_FLOOR_ENVS)
def test_random_policy_stays_under_the_floor(context, env):
    wins = sum(run(context, env, d, i, "random").result.reward.success for d in (3, 6, 12) for i in range(20))
    assert wins <= 3, f"{env}: random succeeded {wins} of 60 times"


def _digest(context, env: str) -> str:
    """Hash of the opening, the heuristic's whole transcript and its reward."""
    runs = [run(context, env, 5, i, "heuristic") for i in range(2)]
    blob = [[(m.role, m.text, [(c.name, c.arguments) for c in m.tool_calls]) for m in r.messages]
            + [r.result.reward.to_dict()] for r in runs]
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()


def test_same_task_transcript_and_score_in_a_fresh_process(context):
    here = {env: _digest(context, env) for env in ENVS}
    code = (
        "import json, sys; sys.path.insert(0, 'tests');"
        "from conftest import TEST_SPEC; from ecom_bench.envs.context import load_context;"
        "from test_envs_common import ENVS, _digest; ctx = load_context(TEST_SPEC);"
        "print(json.dumps({e: _digest(ctx, e) for e in ENVS}))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONHASHSEED": "123"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == here
    assert TEST_CATALOG_SIZE  # the child builds the same catalogue from the same spec


@pytest.mark.parametrize("env", ENVS)
def test_system_prompt_and_tools_hold_no_hidden_ids(context, env):
    from ecom_bench.envs.journey.goal import JourneyGoal  # noqa: F401  (journey hides sub-goals too)

    for i in range(3):
        episode = new_episode(env, 9, 0, i, context=context)
        hidden = json.dumps(episode.problem.hidden_state())
        told = episode.system_prompt() + json.dumps([s.openai_schema() for s in episode.tool_specs()])
        ids = {tok for tok in _id_like(hidden)}
        assert not [t for t in ids if t in told], f"{env}: hidden ids in the system prompt or tool schemas"


def _id_like(text: str) -> set[str]:
    import re

    return set(re.findall(r"\b[A-Z]{1,4}-?\d{4,}[A-Za-z0-9\-]*\b", text))


def test_explanations_read_right_in_markdown_and_agree_with_the_score(context):
    """No "*" (Markdown italics in `inspect view`); a hard fail says its -1 overrides the verdict."""
    from ecom_bench.conversation import AgentAction, ToolCallRequest

    good = run_policy(new_episode("cart", 3, 0, 0, context=context), get_policy("cart", "oracle")).result
    assert "*" not in good.explanation() and "0.75 × task" in good.explanation()
    ep = new_episode("cart", 3, 0, 0, context=context)
    ep.step(AgentAction(tool_calls=(ToolCallRequest("checkout", {}, "c", parse_error="bad JSON"),)))
    text = ep.result().explanation()
    assert text.startswith("HARD FAIL (invalid output") and "task and total -1" in text
    assert "overrides the verdict" in text and "*" not in text


def test_documented_tables_are_the_registry_listing():
    """docs/environments.md's tool and own-axes tables are `ecom-bench envs`' output, so they follow the registry."""
    from pathlib import Path

    from ecom_bench.envs.listing import axes_table, tools_table

    page = (Path(__file__).parents[1] / "docs" / "environments.md").read_text()
    assert tools_table() in page
    assert axes_table() in page
