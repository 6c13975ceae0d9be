"""Success of the scripted agents per env and difficulty, through Inspect (the issue-3 table).

    .venv/bin/python benchmarks/sweep_inspect.py --envs C8 -d 0 3 6 9 12 --models oracle heuristic random -n 30

One process runs every (env, d) task per model, so the catalogue and index load once;
prints mean success (and errored samples) per cell, plus the wall time per model.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from inspect_ai import eval as inspect_eval

from ecom_bench import tasks
from ecom_bench.envs import resolve_envs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", default="C8")
    parser.add_argument("-d", "--difficulties", type=int, nargs="+", default=[0, 3, 6, 9, 12])
    parser.add_argument("--models", nargs="+", default=["oracle", "heuristic", "random"])
    parser.add_argument("-n", "--samples", type=int, default=30)
    parser.add_argument("--catalog-size", type=int, default=None)
    parser.add_argument("--log-dir", default=None)
    args = parser.parse_args()
    envs = resolve_envs(args.envs)
    log_dir = args.log_dir or tempfile.mkdtemp(prefix="ecom-sweep-")
    table: dict[tuple[str, str, int], str] = {}
    for model in args.models:
        start = time.perf_counter()
        jobs = [(env, d) for env in envs for d in args.difficulties]
        task_list = [getattr(tasks, env)(difficulty=d, samples=args.samples, catalog_size=args.catalog_size)
                     for env, d in jobs]
        logs = inspect_eval(task_list, model=f"ecom/{model}", log_dir=f"{log_dir}/{model}", display="none",
                            max_tasks=1)
        for (env, d), log in zip(jobs, logs):
            errors = sum(1 for s in (log.samples or []) if s.error)
            if log.status != "success" or log.results is None:
                table[(env, model, d)] = f"{'ERR':>6}"
                continue
            success = next(s for s in log.results.scores if s.name == "success").metrics["mean"].value
            table[(env, model, d)] = f"{success:6.3f}" + (f"!{errors}" if errors else "")
        print(f"# {model}: {len(jobs)} tasks x {args.samples} samples in {time.perf_counter() - start:.1f}s", flush=True)
    print(f"\n{'env':<13} {'model':<10} " + " ".join(f"{'d=' + str(d):>6}" for d in args.difficulties))
    for env in envs:
        for model in args.models:
            print(f"{env:<13} {model:<10} " + " ".join(table[(env, model, d)] for d in args.difficulties))
    print(f"\nlogs: {log_dir}")


if __name__ == "__main__":
    main()
