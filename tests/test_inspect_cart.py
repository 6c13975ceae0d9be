"""E_CART through Inspect, end to end, with our own scripted model provider."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessageTool, GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi

from conftest import TEST_CATALOG_SIZE, score_parts
from ecom_bench.tasks import cart

SIZE = TEST_CATALOG_SIZE


def run(model, log_dir, **task_args):
    args = {"samples": 6, "catalog_size": SIZE, **task_args}
    [log] = inspect_eval(cart(**args), model=model, log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    return log


def sample_values(log):
    return {s.id: score_parts(s) for s in log.samples}


@pytest.mark.parametrize("d", [0, 6, 12])
def test_oracle_succeeds_through_inspect(tmp_path, d):
    log = run("ecom/oracle", tmp_path, difficulty=d)
    values = sample_values(log)
    assert all(v["task"] == 1.0 and v["success"] == 1.0 for v in values.values())
    assert not [s for s in log.samples if s.error]


def test_scores_explanations_and_metadata(tmp_path):
    log = run("ecom/heuristic", tmp_path, difficulty=3, samples=4)
    s = log.samples[0]
    assert set(s.scores) == {"task", "efficiency", "hallucination", "total", "success", "solved"}
    score = s.scores["total"]
    assert "Unit F1" in score.explanation and "Turns" in score.explanation
    md = score.metadata
    assert md["hidden_goal"]["goal"]["targets"] and "cart" in md["final_state"]
    names = {m.name for m in log.results.scores[0].metrics.values()}
    assert log.results.scores[0].name == "total"
    assert {"mean", "stderr"} <= names
    assert s.id == "cart-d3-s0-0000"
    headline = log.results.headline
    assert (headline.scorer, headline.score, headline.metric) == ("total", "total", "mean")
    # the user's replies are tagged in the transcript
    acts = [m.metadata["act"] for m in s.messages if m.role == "user"]
    assert acts[0] == "opening" and acts[1:] == md["user_acts"][1:]


class _BadIdAPI(ModelAPI):
    """Calls cart_add with an id that does not exist, then gives up."""

    def __init__(self, model_name, base_url=None, api_key=None, config=None, **kw):
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())

    async def generate(self, input, tools, tool_choice, config):
        n = sum(1 for m in input if getattr(m, "role", "") == "assistant")
        if n == 0:
            out = ModelOutput.for_tool_call(self.model_name, "cart_add", {"product_id": "P-NOPE", "quantity": 1})
        elif n == 1 and self.model_name == "malformed":
            out = ModelOutput.for_tool_call(self.model_name, "cart_add", {"quantity": "lots"})
        elif n == 1 and self.model_name == "unknowntool":
            out = ModelOutput.for_tool_call(self.model_name, "teleport_order", {"to": "moon"})
        else:
            out = ModelOutput.from_content(self.model_name, "Sorry, I can't find that.")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out


@modelapi(name="ecomtest")
def _ecomtest():
    return _BadIdAPI


def test_nonexistent_product_id_is_a_readable_tool_error(tmp_path):
    log = run("ecomtest/badid", tmp_path, difficulty=2, samples=2)
    s = log.samples[0]
    errors = [m for m in s.messages if isinstance(m, ChatMessageTool) and m.error]
    assert errors and "No product with id 'P-NOPE'" in errors[0].error.message
    score = s.scores["total"]
    assert score.value == -1.0  # never checked out: no answer
    # the refused call acted on nothing: its invented id is not a hallucination, only a wasted call
    assert "P-NOPE" not in score.explanation and s.scores["hallucination"].value == 0.0


@pytest.mark.parametrize("model", ["malformed", "unknowntool"])
@pytest.mark.parametrize("strict,ends", [(True, True), (False, False)])
def test_strict_rule_on_schema_failures(tmp_path, model, strict, ends):
    log = run(f"ecomtest/{model}", tmp_path, difficulty=2, samples=1, strict=strict)
    s = log.samples[0]
    score = s.scores["total"]
    assert score.value == -1.0
    # the core validates the arguments (one loop for every front): an invalid tool call
    assert ("invalid tool call" in score.explanation) is ends


def test_epochs_with_pass_k(tmp_path):
    from inspect_ai import Epochs

    [log] = inspect_eval(cart(samples=3, difficulty=1, catalog_size=SIZE), model="ecom/oracle",
                         epochs=Epochs(4, ["mean", "pass_k_4"]), log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    pass_k = {s.name: s.metrics["mean"].value for s in log.results.scores if s.reducer == "pass_k_4"}
    assert pass_k["success"] == 1.0  # the oracle succeeds in every epoch
    assert len(log.samples) == 12


def test_bad_task_parameters_fail_fast():
    with pytest.raises(ValueError, match="difficulty must be a non-negative integer, got -1"):
        cart(difficulty=-1)
    with pytest.raises(ValueError, match="samples must be an integer >= 1, got 0"):
        cart(samples=0)
    with pytest.raises(ValueError, match="catalog path does not exist: '/no/such/file.parquet'"):
        cart(catalog="/no/such/file.parquet")


CLI = [str(Path(sys.executable).parent / "inspect"), "eval", "ecom_bench/cart"]


def _cli(tmp_path, *args):
    return subprocess.run(CLI + list(args) + ["--log-dir", str(tmp_path), "--display", "none"],
                          capture_output=True, text=True, timeout=300)


def _read_log(path):
    from inspect_ai.log import read_eval_log
    return read_eval_log(str(path))


def test_cli_runs_and_is_reproducible_across_processes(tmp_path):
    results = []
    for k in range(2):
        out = tmp_path / f"run{k}"
        proc = _cli(out, "-T", "difficulty=5", "-T", "samples=4", "-T", f"catalog_size={SIZE}",
                    "--model", "ecom/heuristic")
        assert proc.returncode == 0, proc.stderr[-2000:]
        [logfile] = list(out.glob("*.eval"))
        log = _read_log(logfile)
        results.append({s.id: (s.input, score_parts(s),
                               [m.text for m in s.messages]) for s in log.samples})
    assert results[0] == results[1]


def test_cli_rejects_bad_difficulty(tmp_path):
    proc = _cli(tmp_path, "-T", "difficulty=-3", "--model", "ecom/oracle")
    assert proc.returncode != 0
    assert "difficulty must be a non-negative integer, got -3" in proc.stderr + proc.stdout
