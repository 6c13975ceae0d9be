"""Training-front throughput: oracle episodes/s through `EcomEnv`, the OpenEnv server and Ray.

    .venv/bin/python benchmarks/bench_training.py [--episodes 400] [--clients 200] [--envs C8] [-d 6]

Needs the `train` and `ray` extras. Every path plays the same kind of episode (the oracle, sent
as raw Hermes text where the path takes text) and checks it succeeded. Prints a table; asserts
nothing. The server row's clients also generate each episode locally (the oracle's mirror: the
hidden goal stays on the server), so on one machine it measures server + client work.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=400, help="episodes for the direct and Ray rows")
    ap.add_argument("--clients", type=int, default=200, help="concurrent sessions for the server row")
    ap.add_argument("--envs", default="C8")
    ap.add_argument("-d", "--difficulty", type=int, default=6)
    ap.add_argument("--catalog-size", type=int, default=None, help="default: the embedded 20k catalogue")
    args = ap.parse_args()
    os.environ.setdefault("ECOM_BENCH_CACHE", tempfile.mkdtemp(prefix="ecom-bench-bench-"))

    from ecom_bench.envs.context import CatalogSpec, load_context
    from ecom_bench.training import EcomEnv, to_hermes
    from ecom_bench.training.client import drive_oracle
    from ecom_bench.training.rollouts import throughput
    from ecom_bench.training.server import running_server

    spec = CatalogSpec(size=args.catalog_size)
    context = load_context(spec)
    context.search_engine.warm()
    rows: list[tuple[str, int, int, float]] = []

    env = EcomEnv(args.envs, args.difficulty, context=context)
    env.reset(seed=0)
    start, wins = time.perf_counter(), 0
    for _ in range(args.episodes):
        done = False
        while not done:
            *_, terminated, truncated, info = env.step(to_hermes(env.scripted_action("oracle")))
            done = terminated or truncated
        wins += info["success"]
        env.reset()
    rows.append(("EcomEnv, in process (raw text)", args.episodes, wins, time.perf_counter() - start))

    with running_server(args.envs, args.difficulty, max_sessions=max(args.clients, 1),
                        catalog_size=args.catalog_size) as url:
        drive_oracle(url, 2, context=context)  # warm the server's first sessions
        run = drive_oracle(url, args.clients, context=context, seed=1000)
    rows.append((f"OpenEnv server, {args.clients} concurrent clients", run.episodes, run.successes, run.wall_s))
    if run.errors:
        print(f"server errors: {run.errors} ({run.failures[:3]})")

    figures = throughput("oracle", args.episodes, args.envs, args.difficulty, workers=(1, 2), catalog=spec)
    for workers, f in figures.items():
        rows.append((f"Ray, {workers} worker{'s' * (workers > 1)}", args.episodes, int(f["successes"]),
                     f["episodes"]))
        print(f"(Ray {workers}: ray.init {f['ray_init']:.1f} s, worker start {f['workers']:.1f} s, not counted)")

    print(f"\noracle, {args.envs}, d={args.difficulty}, catalogue {len(context.catalog)} products, "
          f"{os.cpu_count()} CPUs\n")
    print(f"| {'path':<40} | episodes | successes | seconds | episodes/s |")
    print(f"|{'-' * 42}|---------:|----------:|--------:|-----------:|")
    for name, n, ok, secs in rows:
        print(f"| {name:<40} | {n:>8} | {ok if ok >= 0 else '-':>9} | {secs:>7.1f} | {n / secs:>10.1f} |")


if __name__ == "__main__":
    main()
