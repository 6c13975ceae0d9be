"""Episode generation cost per environment, and what `--limit 5` costs end to end.

    .venv/bin/python benchmarks/bench_generation.py [--episodes 100] [--difficulty 6] [--no-inspect]

Per env: milliseconds to generate one episode (world, hidden goal, customer, opening:
`new_episode`), p50 and p99 over `--episodes` episodes of the 20k synthetic catalogue,
with the catalogue and its index already loaded (the first episode of each env is not
timed apart: one-off per-catalogue views are part of what a first sample waits for).
Then the wall time of `inspect eval ecom_bench/discovery -T difficulty=6 --limit 5
--model ecom/heuristic` in a fresh process (index cache warm). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _percentile(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1] if len(xs) > 1 else xs[0]


def generation_times(env: str, difficulty: int, episodes: int, context) -> list[float]:
    from ecom_bench.episode import new_episode

    out = []
    for i in range(episodes):
        t = time.perf_counter()
        new_episode(env, difficulty, 0, i, context=context)
        out.append((time.perf_counter() - t) * 1000)
    return out


def limit_wall(difficulty: int, limit: int) -> float:
    """Seconds of `inspect eval ecom_bench/discovery --limit N` in a fresh process."""
    inspect = Path(sys.executable).with_name("inspect")
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory(prefix="ecom-bench-logs-") as logs:
        t = time.perf_counter()
        subprocess.run([str(inspect), "eval", "ecom_bench/discovery", "-T", f"difficulty={difficulty}",
                        "--limit", str(limit), "--model", "ecom/heuristic", "--log-dir", logs, "--display", "none"],
                       check=True, env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--difficulty", type=int, default=6)
    ap.add_argument("--env", action="append", help="only these envs (default: all eight)")
    ap.add_argument("--limit", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3, help="fresh --limit runs (the median is printed)")
    ap.add_argument("--no-inspect", action="store_true")
    args = ap.parse_args()

    from ecom_bench.envs import COLLECTIONS
    from ecom_bench.envs.context import CatalogSpec, load_context

    t = time.perf_counter()
    ctx = load_context(CatalogSpec())
    ctx.search_engine.warm()
    print(f"catalogue + index: {time.perf_counter() - t:.2f} s ({len(ctx.catalog)} products)")
    print(f"{'env':<14}{'p50 ms':>9}{'p99 ms':>9}{'total s':>9}  (d={args.difficulty}, {args.episodes} episodes)")
    for env in args.env or COLLECTIONS["C8"]:
        ms = generation_times(env, args.difficulty, args.episodes, ctx)
        print(f"{env:<14}{statistics.median(ms):9.1f}{_percentile(ms, 99):9.1f}{sum(ms) / 1000:9.2f}")
    if not args.no_inspect:
        walls = [limit_wall(args.difficulty, args.limit) for _ in range(args.repeat)]
        print(f"inspect eval ecom_bench/discovery -T difficulty={args.difficulty} --limit {args.limit}: "
              f"median {statistics.median(walls):.1f} s (runs: {', '.join(f'{w:.1f}' for w in walls)})")


if __name__ == "__main__":
    main()
