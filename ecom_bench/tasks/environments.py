"""The environments' Inspect tasks: `inspect eval ecom_bench/<env> -T difficulty=6`.

Every registered environment takes the same parameters, so one factory makes each task;
the env's own package holds what differs. The built-in environments' tasks are made here
from the registry; `inspect_task("my_env")` makes one for an environment registered
elsewhere, and `env_task("my_env", difficulty=3)` builds its `Task` directly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task
from inspect_ai.agent import Agent

from ecom_bench.envs import BUILTIN_ENVS, get_env
from ecom_bench.envs.context import DEFAULT_CATALOG_SIZE
from ecom_bench.tasks._builder import DEFAULT_SAMPLES, build_task, reject_unknown_params
from ecom_bench.tasks._user import USER_SIMULATOR
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
        agent: An Inspect agent taking the agent's turns, e.g. `react(tools=[ecom_tools()], submit=False)`
            (Python only; see docs/evaluation.md "Evaluating your own agent"). Default: the model under test
            drives the episode directly.
        user: The customer simulator: "template" (its own words; a `user` model role is refused) or
            "llm" (its decisions worded by the `--model-role user=` model, behind guards).
        **unknown: Refused by name (a misspelt `-T` parameter would otherwise run the default).
    """


def env_task(env: str, difficulty: int = 0, samples: int = DEFAULT_SAMPLES, seed: int = 0, strict: bool = True,
             catalog: str = "synthetic", catalog_size: int = DEFAULT_CATALOG_SIZE, catalog_seed: int = 0,
             embedder: str = "wordllama", agent: Agent | None = None, user: str = USER_SIMULATOR) -> Task:
    """The Inspect `Task` of the registered environment `env` (bad input: one readable error)."""
    with input_errors():
        get_env(env)
        return build_task(env, difficulty=difficulty, samples=samples, seed=seed, strict=strict, catalog=catalog,
                          catalog_size=catalog_size, catalog_seed=catalog_seed, embedder=embedder, agent=agent,
                          user=user)


def inspect_task(env: str) -> Callable[..., Task]:
    """The `@task` function of environment `env`, registered with Inspect under its name."""
    summary = get_env(env).summary

    def make(difficulty: int = 0, samples: int = DEFAULT_SAMPLES, seed: int = 0, strict: bool = True,
             catalog: str = "synthetic", catalog_size: int = DEFAULT_CATALOG_SIZE, catalog_seed: int = 0,
             embedder: str = "wordllama", agent: Agent | None = None, user: str = USER_SIMULATOR,
             **unknown: Any) -> Task:
        with input_errors():
            reject_unknown_params(env, unknown, make)
        return env_task(env, difficulty=difficulty, samples=samples, seed=seed, strict=strict, catalog=catalog,
                        catalog_size=catalog_size, catalog_seed=catalog_seed, embedder=embedder, agent=agent,
                        user=user)

    make.__name__ = make.__qualname__ = env
    make.__doc__ = summary + _PARAMS_DOC
    return task(name=env)(make)


#: The built-in environments' tasks, by name (also module attributes: `ecom_bench.tasks.cart`).
BUILTIN_TASKS: dict[str, Callable[..., Task]] = {name: inspect_task(name) for name in BUILTIN_ENVS}
globals().update(BUILTIN_TASKS)

__all__ = ["BUILTIN_TASKS", "env_task", "inspect_task", *BUILTIN_TASKS]
