"""Every environment and the collections through Inspect, with our scripted models."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval

from conftest import TEST_CATALOG_SIZE
from ecom_bench import tasks
from ecom_bench.envs import COLLECTIONS, ENVIRONMENTS
from ecom_bench.scorers.reward_scorers import DISPLAY_DECIMALS


def run(task, model, log_dir, **task_args):
    args = {"catalog_size": TEST_CATALOG_SIZE, **task_args}
    [log] = inspect_eval(task(**args), model=model, log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    assert not [s for s in log.samples if s.error]
    return log


@pytest.mark.parametrize("env", list(ENVIRONMENTS))
def test_oracle_succeeds_on_every_env_through_inspect(tmp_path, env):
    log = run(getattr(tasks, env), "ecom/oracle", tmp_path, difficulty=6, samples=3)
    for s in log.samples:
        score = s.scores["total"]
        assert s.scores["success"].value == 1.0, score.explanation
        assert score.metadata["env"] == env and score.explanation
    assert log.eval.task_args["difficulty"] == 6


@pytest.mark.parametrize("model", ["ecom/heuristic", "ecom/random"])
def test_collection_c8_runs_all_eight_and_splits_per_env(tmp_path, model):
    log = run(tasks.collection, model, tmp_path, envs="C8", difficulty=3, samples=16)
    envs = [s.metadata["env"] for s in log.samples]
    assert sorted(set(envs)) == sorted(COLLECTIONS["C8"]) and all(envs.count(e) == 2 for e in set(envs))
    assert all(s.id.startswith(s.metadata["env"] + "-d3-s0-") for s in log.samples)
    # every reward part reports its overall mean and its mean per env (mean_<env>)
    by_key: dict = {}
    for s in log.results.scores:  # success has a second view (pass^k over epochs), empty here
        by_key.setdefault(s.name, {}).update(s.metrics)
    # `solved` (a C/I mark per sample) has no metric: its mean would be success's
    assert set(by_key) == {"task", "efficiency", "hallucination", "total", "success"}
    for metrics in by_key.values():
        assert {f"mean_{e}" for e in COLLECTIONS["C8"]} <= set(metrics) and "mean" in metrics
    samples_success = {e: [s.scores["success"].value for s in log.samples
                           if s.metadata["env"] == e] for e in COLLECTIONS["C8"]}
    for e, values in samples_success.items():
        assert by_key["success"][f"mean_{e}"].value == pytest.approx(sum(values) / len(values))


def test_collection_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown environment 'carts'"):
        tasks.collection(envs="cart,carts", samples=2, catalog_size=TEST_CATALOG_SIZE)
    with pytest.raises(ValueError, match="envs must name a collection"):
        tasks.collection(envs=" , ", samples=2, catalog_size=TEST_CATALOG_SIZE)


@pytest.mark.parametrize("model", ["heuristic", "random", "answer_now"])
def test_inspect_and_core_fronts_give_the_same_scores(tmp_path, context, model):
    """One loop: every sample's total, success and turns match the core runner's episode."""
    from ecom_bench.agents import get_policy
    from ecom_bench.episode import new_episode
    from ecom_bench.runner import run_policy

    log = run(tasks.collection, f"ecom/{model}", tmp_path, envs="C8", difficulty=6, samples=16)
    for s in log.samples:
        m = s.metadata
        core = run_policy(new_episode(m["env"], 6, 0, m["index"], context=context), get_policy(m["env"], model))
        score = s.scores["total"]
        assert score.metadata["exact"] == core.result.reward.total, s.id
        assert score.value == round(core.result.reward.total, DISPLAY_DECIMALS), s.id
        assert s.scores["success"].value == float(core.result.reward.success), s.id
        assert score.metadata["turns"] == core.result.turns, s.id


def test_each_world_is_generated_once_per_sample(tmp_path, monkeypatch):
    """The dataset builder's episode is the one the solver plays (no second generation)."""
    from ecom_bench.envs import get_env

    env = get_env("cart")
    calls = []
    original = type(env).generate
    monkeypatch.setattr(type(env), "generate", lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    run(tasks.cart, "ecom/oracle", tmp_path, difficulty=3, samples=4)
    assert len(calls) == 4


class _Thorough:
    """An agent that spends each turn's whole tool budget, one call a generation, before every
    message, and never answers: the longest conversation the customer's patience allows."""

    name = "thorough"
    reads_hidden_goal = False

    def act(self, messages, hidden, status):  # noqa: ANN001, ANN201
        from ecom_bench.conversation import AgentAction, ToolCallRequest

        if status.calls_left:
            return AgentAction("", (ToolCallRequest("cart_view", {}, f"call-{status.step}"),))
        return AgentAction("Could you tell me a little more, please?")


@pytest.mark.parametrize("env", list(ENVIRONMENTS))
def test_no_message_limit_binds_before_the_episode_ends(env):
    """Inspect's message limit never ends a sample the episode would go on with: at d = 12 it is
    at least the messages of an episode running to its step cap, one call a generation (none: no limit)."""
    from ecom_bench.episode import new_episode

    task = getattr(tasks, env)(difficulty=12, samples=1, catalog_size=TEST_CATALOG_SIZE)
    most = 2 + 2 * new_episode(env, 12, 0, 0).status().max_steps  # system + opening, then call + result per step
    assert task.message_limit is None or task.message_limit >= most


def test_a_long_journey_runs_to_the_customers_patience_through_inspect(tmp_path, monkeypatch):
    """A journey at d = 12 holds 50 turns of 7 calls: ~800 messages for an agent making one call a
    generation. It ends on the customer's patience, not on a message count."""
    from ecom_bench.providers import scripted

    monkeypatch.setattr(scripted, "get_policy", lambda env, name: _Thorough())
    log = run(tasks.journey, "ecom/oracle", tmp_path, difficulty=12, samples=1)
    [sample] = log.samples
    assert len(sample.messages) > 400 and sample.limit is None
    assert sample.store["EpisodeStore:outcome"]["end"] == "user_quit"
