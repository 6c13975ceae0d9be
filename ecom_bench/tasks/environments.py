"""The eight environment tasks: `inspect eval ecom_bench/<env> -T difficulty=6`.

All eight take the same parameters, so each is made by one factory rather than
eight copies of the same signature; the env's own package holds what differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task

from ecom_bench.envs.context import DEFAULT_CATALOG_SIZE
from ecom_bench.tasks._builder import DEFAULT_SAMPLES, env_task, reject_unknown_params
from ecom_bench.tasks._errors import input_errors

_PARAMS_DOC = """

    Args:
        difficulty: Difficulty level d >= 0; drives all 12 axes and the env's own axes.
        samples: Number of procedurally generated episodes.
        seed: Dataset seed; sample i uses a seed derived from (env, seed, d, i).
        strict: Published rule: an unparseable or unknown tool call ends the episode with -1.
            false returns the error to the model instead.
        catalog: "synthetic" (default, offline) or a local parquet/jsonl file or folder.
        catalog_size: Products in the synthetic catalogue, or the most rows read from a loaded one (default 20000).
        catalog_seed: Seed of the synthetic catalogue.
        embedder: "wordllama" (offline default) or "st:<model name or local path>".
        **unknown: Refused by name (a misspelt `-T` parameter would otherwise run the default).
    """


def _env_task(env_name: str, summary: str) -> Callable[..., Task]:
    def make(difficulty: int = 0, samples: int = DEFAULT_SAMPLES, seed: int = 0, strict: bool = True,
             catalog: str = "synthetic", catalog_size: int = DEFAULT_CATALOG_SIZE, catalog_seed: int = 0,
             embedder: str = "wordllama", **unknown: Any) -> Task:
        with input_errors():
            reject_unknown_params(env_name, unknown, make)
            return env_task(env_name, difficulty=difficulty, samples=samples, seed=seed, strict=strict,
                            catalog=catalog, catalog_size=catalog_size, catalog_seed=catalog_seed,
                            embedder=embedder)

    make.__name__ = make.__qualname__ = env_name
    make.__doc__ = summary + _PARAMS_DOC
    return task(name=env_name)(make)


cart = _env_task("cart", "E_CART: add the exact products, variants and quantities the customer asks for.")
discovery = _env_task("discovery", "E_PD: recommend products that satisfy all of the customer's constraints.")
substitution = _env_task("substitution", "E_SUB: the wanted item is out of stock; recommend a similar, compatible substitute.")
returns = _env_task("returns", "E_RETURN: find the right order line, start its return, recommend a replacement.")
tracking = _env_task("tracking", "E_TRACK: resolve which order the customer means and report its current status.")
policy = _env_task("policy", "E_POLICY: answer a deterministic question on store policy.")
bundle = _env_task("bundle", "E_BUNDLE: recommend a complete shopping list for a project within a budget.")
journey = _env_task("journey", "E_JOURNEY: handle a conversation chaining 2-5 of the other tasks in order.")
