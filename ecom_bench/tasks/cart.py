"""`inspect eval ecom_bench/cart -T difficulty=6`."""

from __future__ import annotations

from inspect_ai import Task, task

from ecom_bench.tasks._builder import DEFAULT_SAMPLES, env_task


@task
def cart(difficulty: int = 0, samples: int = DEFAULT_SAMPLES, seed: int = 0, strict: bool = True,
         catalog: str = "synthetic", catalog_size: int | None = None, catalog_seed: int = 0,
         embedder: str = "wordllama") -> Task:
    """E_CART: add the exact products, variants and quantities the customer asks for.

    Args:
        difficulty: Difficulty level d >= 0; drives all 12 axes and the cart axes.
        samples: Number of procedurally generated episodes.
        seed: Dataset seed; sample i uses a seed derived from (env, seed, d, i).
        strict: Published rule: an unparseable or unknown tool call ends the episode with -1.
            false returns the error to the model instead.
        catalog: "synthetic" (default, offline) or a local parquet/jsonl file or folder.
        catalog_size: Products in the synthetic catalogue (default 20000), or a row limit for a loaded one.
        catalog_seed: Seed of the synthetic catalogue.
        embedder: "wordllama" (offline default) or "st:<model name or local path>".
    """
    return env_task("cart", difficulty=difficulty, samples=samples, seed=seed, strict=strict, catalog=catalog,
                    catalog_size=catalog_size, catalog_seed=catalog_seed, embedder=embedder)
