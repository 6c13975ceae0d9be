"""`inspect eval ecom_bench/collection -T envs=C4`: several environments in one run.

The nested collections of docs/design.md §Environments (C1 ⊂ C2 ⊂ C4 ⊂ C8) or any comma list of envs; samples
are spread evenly and tagged with their env, and the scorer reports every metric per
env as well as overall.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.agent import Agent

from ecom_bench.envs import COLLECTIONS, resolve_envs
from ecom_bench.envs.context import DEFAULT_CATALOG_SIZE
from ecom_bench.tasks._builder import DEFAULT_SAMPLES, build_task, reject_unknown_params
from ecom_bench.tasks._user import USER_SIMULATOR
from ecom_bench.tasks._errors import input_errors


@task
def collection(envs: str = "C8", difficulty: int = 0, samples: int = DEFAULT_SAMPLES, seed: int = 0,
               strict: bool = True, catalog: str = "synthetic", catalog_size: int = DEFAULT_CATALOG_SIZE,
               catalog_seed: int = 0, embedder: str = "wordllama", agent: Agent | None = None,
               user: str = USER_SIMULATOR, **unknown: Any) -> Task:
    """A collection of environments: C1, C2, C4, C8 or a comma list such as "cart,policy".

    Args:
        envs: "C1" (cart), "C2" (+ substitution), "C4" (+ discovery, returns), "C8" (all eight),
            or a comma-separated list of environment names.
        difficulty: Difficulty level d >= 0, the same for every env.
        samples: Total episodes, spread evenly over the envs (sample i belongs to env i mod n).
        seed: Dataset seed.
        strict: Published rule: an unparseable or unknown tool call ends the episode with -1.
        catalog: "synthetic" (default, offline) or a local parquet/jsonl file or folder.
        catalog_size: Products in the synthetic catalogue, or the most rows read from a loaded one (default 20000).
        catalog_seed: Seed of the synthetic catalogue.
        embedder: "wordllama" (offline default) or "st:<model name or local path>".
        agent: An Inspect agent taking the agent's turns (see the environments' tasks).
        user: The customer simulator: "template" (its own words; a `user` model role is refused) or
            "llm" (its decisions worded by the `--model-role user=` model, behind guards).
        **unknown: Refused by name (a misspelt `-T` parameter would otherwise run the default).
    """
    with input_errors():
        reject_unknown_params("collection", unknown, collection)
        if isinstance(envs, (list, tuple)) and all(isinstance(e, str) for e in envs):
            envs = ",".join(envs)  # Inspect's `-T envs=cart,policy` arrives split at the commas
        if not isinstance(envs, str):  # `-T envs=` arrives as None, `-T envs=5` as an int
            raise ValueError(f"envs must name a collection ({', '.join(COLLECTIONS)}) or a comma list of "
                             f"environments, got {envs!r}")
        names = resolve_envs(envs)
        label = envs.strip().upper() if envs.strip().upper() in COLLECTIONS else "+".join(names)
        return build_task(label, difficulty=difficulty, samples=samples, seed=seed, strict=strict, catalog=catalog,
                        catalog_size=catalog_size, catalog_seed=catalog_seed, embedder=embedder, envs=names,
                          agent=agent, user=user)
