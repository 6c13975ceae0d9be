"""Soundness table: how far scripted non-solvers get, per policy x env x d (reliability suite).

    .venv/bin/python benchmarks/soundness.py [-n 30] [--order-n 100] [-d 3 6 9 12] [--envs C8]
                                             [--policies random recommend_all ...] [--jobs 2]

For every cell it prints success (with a 95% Wilson upper bound, so "0 of 30" is read as
"< 11%", not "0%") and the mean reward parts. The bar (docs/soundness.md): success <= 5% at
d >= 3. E_TRACK and E_RETURN get `--order-n` episodes: their cheapest guess ("the
newest order") is right a few percent of the time, which 30 episodes cannot resolve.

`all_variants` on an order env is "list the orders and ask which one": when the
customer's own words hold the target order id that is honest clarification, so those
wins are counted apart (`honest`) and the success column excludes them.

Prints figures; asserts nothing (tests/test_adversarial.py checks the bar).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

ORDER_ENVS = ("tracking", "returns")
DEFAULT_POLICIES = ("random", "recommend_all", "all_variants", "answer_now", "invent_ids")


def wilson_upper(wins: int, n: int, z: float = 1.96) -> float:
    """Upper end of the 95% Wilson score interval of a proportion."""
    if n == 0:
        return 1.0
    p = wins / n
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return min(1.0, (centre + margin) / (1 + z * z / n))


def run_cell(env: str, policy_name: str, d: int, n: int, seed: int, catalog_size: int) -> dict:
    """One cell: n episodes of (env, d) played by the policy through the core runner."""
    from ecom_bench.agents import get_policy
    from ecom_bench.envs.context import CatalogSpec, load_context
    from ecom_bench.episode import new_episode
    from ecom_bench.runner import run_policy

    ctx = load_context(CatalogSpec(size=catalog_size))
    policy = get_policy(env, policy_name)
    rewards, honest = [], 0
    for i in range(n):
        run = run_policy(new_episode(env, d, seed, i, context=ctx), policy)
        r = run.result.reward
        if (r.success and env in ORDER_ENVS and policy_name == "all_variants"
                and run.result.hidden["goal"]["order_id"] in run.customer_words()):
            honest += 1
            continue
        rewards.append(r)
    wins = sum(r.success for r in rewards)
    mean = {k: statistics.fmean(getattr(r, k) for r in rewards) if rewards else float("nan")
            for k in ("total", "task", "efficiency", "hallucination")}
    return {"env": env, "policy": policy_name, "d": d, "n": len(rewards), "wins": wins, "honest": honest,
            "upper": wilson_upper(wins, len(rewards)), **mean}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--samples", type=int, default=30)
    ap.add_argument("--order-n", type=int, default=100, help="episodes per cell for tracking and returns")
    ap.add_argument("-d", "--difficulties", type=int, nargs="+", default=[3, 6, 9, 12])
    ap.add_argument("--envs", default="C8")
    ap.add_argument("--policies", nargs="+", default=list(DEFAULT_POLICIES))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--catalog-size", type=int, default=20_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    os.environ.setdefault("ECOM_BENCH_CACHE", tempfile.mkdtemp(prefix="ecom-bench-soundness-"))

    from ecom_bench.envs import resolve_envs
    from ecom_bench.envs.context import CatalogSpec, load_context

    load_context(CatalogSpec(size=args.catalog_size)).search_engine.warm()  # build the cache once
    envs = resolve_envs(args.envs)
    cells = [(env, p, d, args.order_n if env in ORDER_ENVS else args.samples, args.seed, args.catalog_size)
             for env in envs for p in args.policies for d in args.difficulties]
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(run_cell, *zip(*cells, strict=True)))
    print(f"{'env':<13} {'policy':<14} {'d':>3} {'n':>4} {'success':>8} {'95% up':>7} {'r_total':>8} "
          f"{'r_task':>7} {'r_eff':>6} {'r_hall':>7} {'honest':>6}")
    worst = 0.0
    for r in rows:
        rate = r["wins"] / r["n"] if r["n"] else 0.0
        worst = max(worst, rate)
        print(f"{r['env']:<13} {r['policy']:<14} {r['d']:>3} {r['n']:>4} {rate:>8.3f} {r['upper']:>7.3f} "
              f"{r['total']:>+8.3f} {r['task']:>+7.3f} {r['efficiency']:>+6.2f} {r['hallucination']:>+7.2f} "
              f"{r['honest'] or '':>6}")
    episodes = sum(r["n"] + r["honest"] for r in rows)
    over = [f"{r['env']}/{r['policy']}/d={r['d']}" for r in rows if r["n"] and r["wins"] / r["n"] > 0.05]
    print(f"\n{episodes} episodes in {time.perf_counter() - start:.0f} s; highest cell success {worst:.3f}; "
          f"cells over 5%: {', '.join(over) or 'none'}")


if __name__ == "__main__":
    main()
