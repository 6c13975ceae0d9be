"""Episode throughput: catalogue + index start-up, task generation, scripted episodes, Inspect eval.

    .venv/bin/python benchmarks/bench_episodes.py [--samples 100] [--difficulty 6] [--no-inspect]

Prints figures; asserts nothing (tests check behaviour, this script measures speed).
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", default="cart")
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--difficulty", type=int, default=6)
    ap.add_argument("--catalog-size", type=int, default=20_000)
    ap.add_argument("--no-inspect", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("ECOM_BENCH_CACHE", tempfile.mkdtemp(prefix="ecom-bench-bench-"))

    from ecom_bench.agents import get_policy
    from ecom_bench.envs.context import CatalogSpec, load_context
    from ecom_bench.episode import new_episode
    from ecom_bench.runner import run_policy

    rows: list[tuple[str, str]] = []
    t = time.perf_counter()
    ctx = load_context(CatalogSpec(size=args.catalog_size))
    rows.append(("catalogue generation", f"{time.perf_counter() - t:.2f} s ({len(ctx.catalog)} products)"))
    t = time.perf_counter()
    ctx.search_engine.warm()
    rows.append(("index build (cold cache)", f"{time.perf_counter() - t:.2f} s"))

    t = time.perf_counter()
    for i in range(args.samples):
        new_episode(args.env, args.difficulty, 0, i, context=ctx)
    gen = (time.perf_counter() - t) / args.samples
    rows.append(("task generation", f"{gen * 1000:.2f} ms / task"))

    for name in ("oracle", "heuristic"):
        policy = get_policy(args.env, name)
        t = time.perf_counter()
        ok = 0
        for i in range(args.samples):
            ok += run_policy(new_episode(args.env, args.difficulty, 0, i, context=ctx), policy).result.reward.success
        dt = time.perf_counter() - t
        rows.append((f"{name} episodes (core)", f"{args.samples / dt:.1f} episodes/s, success {ok / args.samples:.2f}"))

    if not args.no_inspect:
        from inspect_ai import eval as inspect_eval

        from ecom_bench.tasks import cart

        t = time.perf_counter()
        [log] = inspect_eval(cart(difficulty=args.difficulty, samples=args.samples, catalog_size=args.catalog_size),
                             model="ecom/oracle", log_dir=tempfile.mkdtemp(), display="none")
        rows.append((f"inspect eval, {args.samples} oracle samples", f"{time.perf_counter() - t:.1f} s ({log.status})"))

    rows.append(("peak RSS", f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"))
    width = max(len(k) for k, _ in rows)
    print(f"env={args.env} d={args.difficulty} samples={args.samples} catalog={args.catalog_size}")
    for k, v in rows:
        print(f"  {k:<{width}}  {v}")


if __name__ == "__main__":
    main()
