"""Training-front throughput: oracle episodes/s through `EcomEnv`, the OpenEnv server, Ray, and the
async rollouts against an OpenAI-compatible server.

    .venv/bin/python benchmarks/bench_training.py [--episodes 400] [--clients 200] [--envs C8] [-d 6]
        [--paths direct server ray async] [--concurrency 64]

Needs the `train` and `ray` extras. Every path plays the same kind of episode (the oracle, sent
as raw Hermes text where the path takes text) and checks it succeeded. Prints a table; asserts
nothing. The server row's clients also generate each episode locally (the oracle's mirror: the
hidden goal stays on the server), so on one machine it measures server + client work.

The async rows play through `async_rollouts.OpenAIChatPolicy` and the real `openai.AsyncOpenAI`
client against the test suite's fake OpenAI-compatible server (tests/fake_openai_server.py), in
this process: the "model" is the oracle, answered in well under a millisecond, so the rows
measure what a rollout costs besides generation. They also print the environment's own time
per step (world, tools, customer: `AsyncRollout.env_ms_per_step`) and the wall time per step,
which adds the HTTP round trip, the client and the fake server's own work (it replays each
conversation on a mirror episode to check it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=400, help="episodes for the direct and Ray rows")
    ap.add_argument("--clients", type=int, default=200, help="concurrent sessions for the server row")
    ap.add_argument("--envs", default="C8")
    ap.add_argument("-d", "--difficulty", type=int, default=6)
    ap.add_argument("--catalog-size", type=int, default=None, help="default: the embedded 20k catalogue")
    ap.add_argument("--paths", nargs="+", default=["direct", "server", "ray", "async"],
                    choices=["direct", "server", "ray", "async"], help="which rows to measure (default: all)")
    ap.add_argument("--concurrency", type=int, default=64, help="episodes in flight on the async row")
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

    if "direct" in args.paths:
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

    if "server" in args.paths:
        with running_server(args.envs, args.difficulty, max_sessions=max(args.clients, 1),
                            catalog_size=args.catalog_size) as url:
            drive_oracle(url, 2, context=context)  # warm the server's first sessions
            run = drive_oracle(url, args.clients, context=context, seed=1000)
        rows.append((f"OpenEnv server, {args.clients} concurrent clients", run.episodes, run.successes, run.wall_s))
        if run.errors:
            print(f"server errors: {run.errors} ({run.failures[:3]})")

    if "ray" in args.paths:
        figures = throughput("oracle", args.episodes, args.envs, args.difficulty, workers=(1, 2), catalog=spec)
        for workers, f in figures.items():
            rows.append((f"Ray, {workers} worker{'s' * (workers > 1)}", args.episodes, int(f["successes"]),
                         f["episodes"]))
            print(f"(Ray {workers}: ray.init {f['ray_init']:.1f} s, worker start {f['workers']:.1f} s, not counted)")

    if "async" in args.paths:
        from ecom_bench.training.async_rollouts import rollout_async

        traces = rollout_async("oracle", args.episodes, args.envs, args.difficulty, context=context,
                               concurrency=args.concurrency)
        rows.append(("async driver, scripted oracle (no server)", len(traces), sum(t.success for t in traces),
                     traces.timings["episodes"]))
        for concurrency in (1, args.concurrency):
            traces, server_s = _async_row(args, context, concurrency)
            rows.append((f"async, OpenAI client, {concurrency} in flight", len(traces),
                         sum(t.success for t in traces), traces.timings["episodes"]))
            steps = traces.steps
            waited = sum(t.policy_seconds for t in traces)
            detail = (f"; client + HTTP {1000 * (waited - server_s) / steps:.2f} ms/step" if concurrency == 1 else "")
            print(f"(async, {concurrency} in flight: {steps} steps; per step: environment "
                  f"{traces.env_ms_per_step:.2f} ms, fake server {1000 * server_s / steps:.2f} ms{detail}, "
                  f"wall {1000 * traces.timings['episodes'] / steps:.2f} ms)")

    print(f"\noracle, {args.envs}, d={args.difficulty}, catalogue {len(context.catalog)} products, "
          f"{os.cpu_count()} CPUs\n")
    print(f"| {'path':<40} | episodes | successes | seconds | episodes/s |")
    print(f"|{'-' * 42}|---------:|----------:|--------:|-----------:|")
    for name, n, ok, secs in rows:
        print(f"| {name:<40} | {n:>8} | {ok if ok >= 0 else '-':>9} | {secs:>7.1f} | {n / secs:>10.1f} |")


def _async_row(args: argparse.Namespace, context: Any, concurrency: int) -> tuple[Any, float]:
    """The oracle's episodes through the async driver and the fake OpenAI-compatible server, and
    the seconds the fake server spent answering (its mirror and the policy: not the driver's)."""
    from openai import AsyncOpenAI

    sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
    from fake_openai_server import Served, running

    from ecom_bench.envs import resolve_envs
    from ecom_bench.training.async_rollouts import OpenAIChatPolicy, arollout

    names = resolve_envs(args.envs)
    served = [Served(env, args.difficulty, -(-args.episodes // len(names))) for env in names]

    async def play(base_url: str) -> Any:
        async with AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0) as client:
            policy = OpenAIChatPolicy(client, "oracle", logprobs=True)
            return await arollout(policy, args.episodes, args.envs, args.difficulty, context=context,
                                  concurrency=concurrency)

    with running(served, context) as fake:
        answer, spent = fake.answer, [0.0]

        def timed(body: dict[str, Any]) -> dict[str, Any]:  # the fake server's own work, to set apart
            start = time.perf_counter()
            try:
                return answer(body)
            finally:
                spent[0] += time.perf_counter() - start

        fake.answer = timed  # type: ignore[method-assign]
        traces = asyncio.run(play(fake.base_url))
        if fake.problems:
            print(f"fake server problems: {fake.problems[:3]}")
    return traces, spent[0]


if __name__ == "__main__":
    main()
