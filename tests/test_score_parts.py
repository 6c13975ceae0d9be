"""The five reward scorers: numeric columns for the analysis tools, pass^k / pass@k over epochs."""

from __future__ import annotations

import itertools
import math

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.analysis import evals_df, samples_df
from inspect_ai.model import GenerateConfig, ModelAPI, modelapi
from inspect_ai.scorer import SampleScore, Score

from conftest import TEST_CATALOG_SIZE
from ecom_bench.providers.scripted import ScriptedModelAPI
from ecom_bench.scorers import SCORE_PARTS, pass_k, pass_k_estimates
from ecom_bench.tasks import cart


def test_pass_k_estimators_match_their_definitions():
    # k = n: pass^k is 'all trials succeeded', pass@k 'at least one did'
    assert pass_k_estimates({"a": [1, 0, 1, 0]}) == (4, 0.0, 1.0)
    k, hat, at = pass_k_estimates({"a": [1, 1, 0, 0], "b": [1, 1, 1]})  # k = the fewest trials
    assert k == 3
    assert hat == pytest.approx((0 + 1) / 2)
    assert at == pytest.approx((1 + 1) / 2)
    k, hat, at = pass_k_estimates({"a": [1, 0, 1, 0, 0, 1], "b": [1, 1, 0, 0, 0, 0]})
    assert k == 6 and hat == 0 and at == 1
    assert pass_k_estimates({"a": [1.0], "b": [0.0]}) == (1, 0.5, 0.5)  # one epoch: pass^1 = mean
    assert pass_k_estimates({}) is None
    # against brute force over every k-subset of each sample's trials (unequal trial counts)
    trials = {"a": [1, 0, 1], "b": [0, 0, 1, 0], "c": [1, 1, 1], "d": [1, 0, 1, 1]}
    k, hat, at = pass_k_estimates(trials)
    assert k == 3
    subsets = [list(itertools.combinations(v, k)) for v in trials.values()]
    assert hat == pytest.approx(sum(sum(all(c) for c in ss) / len(ss) for ss in subsets) / len(subsets))
    assert at == pytest.approx(sum(sum(any(c) for c in ss) / len(ss) for ss in subsets) / len(subsets))


def test_pass_k_metric_labels_k():
    def scores(values_by_sample):
        return [SampleScore(score=Score(value=float(v)), sample_id=sid)
                for sid, values in values_by_sample.items() for v in values]

    metric = pass_k()
    assert metric(scores({"a": [1, 0, 1, 1], "b": [0, 0, 0, 1]})) == pytest.approx(
        {"pass^4": 0.0, "pass@4": 1.0})
    assert metric(scores({"a": [1], "b": [0]})) == {"pass^1": 0.5, "pass@1": 0.5}


_episodes = itertools.count()


@modelapi(name="ecomflaky")
def _flaky():
    class FlakyAPI(ModelAPI):
        """The oracle on four of every five episodes, the give-up agent on the fifth."""

        def __init__(self, model_name, base_url=None, api_key=None, config=None, **kw):
            super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
            self.agents = {name: ScriptedModelAPI(name) for name in ("oracle", "answer_now")}

        async def generate(self, input, tools, tool_choice, config):
            if sum(m.role == "assistant" for m in input) == 0:
                self.current = "answer_now" if next(_episodes) % 5 == 4 else "oracle"
            return await self.agents[self.current].generate(input, tools, tool_choice, config)

    return FlakyAPI


def test_epochs_give_pass_k_of_success_and_numeric_columns(tmp_path):
    task = cart(difficulty=3, samples=6, catalog_size=TEST_CATALOG_SIZE)
    [log] = inspect_eval(task, model="ecomflaky/x", epochs=4, max_samples=1, log_dir=str(tmp_path),
                         display="none")
    assert log.status == "success", log.error
    trials: dict[str, list[float]] = {}
    for s in log.samples:
        trials.setdefault(s.id, []).append(s.scores["success"].value)
    assert all(len(v) == 4 for v in trials.values()) and {0.0, 1.0} <= {x for v in trials.values() for x in v}
    k, hat, at = pass_k_estimates(trials)
    success = {m.name: m.value for s in log.results.scores if s.name == "success" for m in s.metrics.values()}
    mean_success = sum(map(sum, trials.values())) / 24
    assert success["pass^4"] == pytest.approx(hat) and success["pass@4"] == pytest.approx(at)
    assert success["mean"] == pytest.approx(mean_success)
    assert success["pass^4"] < success["mean"] < success["pass@4"]
    # pass^k only on success: every other part is reduced by mean and nothing else
    for s in log.results.scores:
        if s.name != "success":
            assert set(s.metrics) == {"mean", "stderr"}, s.name
    assert log.eval.task_args["catalog_size"] == TEST_CATALOG_SIZE

    samples = samples_df(str(tmp_path), quiet=True)
    assert len(samples) == 24
    for part in SCORE_PARTS:
        column = samples[f"score_{part}"]
        assert column.dtype.kind == "f" or "double" in str(column.dtype), (part, column.dtype)
        assert column.notna().all() and column.between(-1, 1).all()
    evals = evals_df(str(tmp_path), quiet=True)
    assert evals["score_success_pass^4"].iloc[0] == pytest.approx(hat)
    assert evals["score_total_mean"].iloc[0] == pytest.approx(samples["score_total"].mean())
    assert evals["score_headline_name"].iloc[0] == "total"
    assert math.isclose(evals["score_headline_value"].iloc[0], evals["score_total_mean"].iloc[0])


def test_default_task_args_record_the_effective_catalogue_size():
    task = cart(samples=1, catalog_size=TEST_CATALOG_SIZE)
    assert task.metadata["catalog_products"] == TEST_CATALOG_SIZE
    from inspect_ai._eval.loader import resolve_task_args  # what Inspect writes as eval.task_args

    assert resolve_task_args(cart(samples=1, catalog_size=TEST_CATALOG_SIZE))["catalog_size"] == TEST_CATALOG_SIZE
    import inspect as pyinspect

    assert pyinspect.signature(cart).parameters["catalog_size"].default == 20000


def test_store_helpers_use_the_keys_store_as_uses():
    """The solver writes and the scorers read EpisodeStore's keys directly (no model per read):
    they must stay the keys `store_as(EpisodeStore)` binds, or every sample would score as a failure."""
    from inspect_ai.util import Store

    from ecom_bench.scorers._store import EpisodeStore, read_episode, write_episode

    store = Store()
    bound = EpisodeStore(store=store)  # what store_as(EpisodeStore) builds over the sample's store
    assert read_episode(store, "outcome") is None and read_episode(store, "hidden") == {}
    write_episode(store, env="cart", difficulty=3, outcome={"reward": {"total": 1.0}})
    assert (bound.env, bound.difficulty, bound.outcome) == ("cart", 3, {"reward": {"total": 1.0}})
    bound.turns = 7
    assert read_episode(store, "turns") == 7
    assert read_episode(Store(), "user_acts") == []  # absent: the field's default
    with pytest.raises(KeyError):
        write_episode(store, instance="x")
