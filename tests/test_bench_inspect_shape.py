"""benchmarks/bench_scale.py's "Inspect alone" figure replays the cart samples' shape: the same
model calls per sample, each given the same tool schemas, and as many scorers, with nothing of
ours running. Were the shape smaller, the floor it reports would flatter the gap left to us."""

from __future__ import annotations

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from conftest import TEST_CATALOG_SIZE, benchmark_module
from ecom_bench.agents import get_policy
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.scorers import reward_scorers
from ecom_bench.tasks import cart
from ecom_bench.tasks._tools import episode_tools

SAMPLES = 3


def _shape(log) -> list[tuple[list[list[str]], int]]:  # noqa: ANN001
    """Per sample: the tool names given to each model call, and how many scores it got."""
    out = []
    for sample in sorted(read_eval_log(log.location).samples, key=lambda s: s.id):
        calls = [[t.name for t in e.tools] for e in sample.events if e.event == "model"]
        out.append((calls, len(sample.scores)))
    return out


def test_the_shape_task_makes_the_cart_samples_model_calls_with_their_tools_and_scorers(context, tmp_path):
    bench = benchmark_module("bench_scale")
    bench._fixed_model_api()
    runs = [run_policy(new_episode("cart", 0, 0, i, context=context), get_policy("cart", "oracle"))
            for i in range(SAMPLES)]
    schemas = episode_tools(new_episode("cart", 0, 0, 0, context=context))
    [ours] = inspect_eval(cart(samples=SAMPLES, catalog_size=TEST_CATALOG_SIZE), model="ecom/oracle",
                          log_dir=str(tmp_path / "cart"), display="none")
    [alone] = inspect_eval(bench._inspect_shape_task(runs, schemas, len(reward_scorers())),
                           model="bench-fixed/model", log_dir=str(tmp_path / "shape"), display="none")
    assert ours.status == alone.status == "success"
    cart_shape, replay_shape = _shape(ours), _shape(alone)
    assert replay_shape == cart_shape
    assert all(len(calls) >= 2 and all(len(tools) == len(schemas) for tools in calls) for calls, _ in cart_shape)
