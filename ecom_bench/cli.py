"""`ecom-bench`: inspect tasks, run scripted agents through the core, play an episode.

    ecom-bench envs                                  the registered environments, their tools and axes
    ecom-bench show cart -d 6 --index 2 [--hidden]   print a generated task
    ecom-bench run cart -d 6 -n 50 --policy oracle   score a scripted agent (no Inspect)
    ecom-bench core-sweep C8 -d 0 6 12 -n 30         success table of the scripted agents (no Inspect)
    ecom-bench sweep --model M [--model M2] ...      models x envs x difficulties as an Inspect eval set
    ecom-bench leaderboard logs/sweep                table, CSV, plots and d50 from the logs
    ecom-bench play cart -d 3 [--strict]             be the agent yourself (/help inside)
    ecom-bench demo [--port 7860]                    be the agent in a browser (extra `demo`)
    ecom-bench build-index                           pre-build the search index cache
    ecom-bench serve --envs C8 -d adaptive           the OpenEnv server (extra `train`)

`--import MODULE` (before the command, repeatable) imports a module first, so the environments it
registers are known: `ecom-bench --import my_envs show loyalty`. Installed packages can declare
environments through the `ecom_bench.envs` entry-point group instead (docs/extending.md).

Evaluation of real models goes through Inspect: `inspect eval ecom_bench/cart ...` for one run,
`ecom-bench sweep` for a leaderboard grid.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable

from ecom_bench.agents import get_policy
from ecom_bench.difficulty import Difficulty, validate_level
from ecom_bench.envs import did_you_mean, env_names, resolve_envs
from ecom_bench.envs.context import DEFAULT_CATALOG_SIZE, CatalogSpec, load_context
from ecom_bench.episode import new_episode
from ecom_bench.play import play
from ecom_bench.runner import run_policy



def _error_reason(message: str) -> str:
    """The last non-empty line of an error message: an exception's own words, after any traceback."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return lines[-1][:200] if lines else "unknown error"

def _positive_seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {value!r}")
    return seconds


def _level(value: str) -> int:
    try:
        return validate_level(value)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _int_at_least(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer >= minimum (seeds and indices as the Inspect tasks accept them)."""
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            number = minimum - 1
        if number < minimum or (maximum is not None and number > maximum):
            bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
            raise argparse.ArgumentTypeError(f"must be an integer {bound}, got {value!r}")
        return number

    return parse


_count, _non_negative, _port = _int_at_least(1), _int_at_least(0), _int_at_least(0, 65535)
_listening_port = _int_at_least(1, 65535)


def _env_name(name: str) -> str:
    """An environment's name; a misspelt one is refused naming the closest (argparse's choices do not)."""
    if name not in env_names():
        raise argparse.ArgumentTypeError(f"unknown environment {name!r}{did_you_mean(name, env_names())}; "
                                         f"environments: {', '.join(env_names())}")
    return name


_INDEX_HELP = "which task of the seed's sequence: 0, 1, ... (default 0)"


def _catalog_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--catalog", default="synthetic",
                   help="'synthetic' (default, offline), 'synthetic:SIZE', a local parquet/jsonl file or folder, "
                        "or a dataset id")
    p.add_argument("--catalog-size", type=int, default=None,
                   help="products in the synthetic catalogue, or the most rows read from a loaded one")
    p.add_argument("--embedder", default="wordllama",
                   help="'wordllama' (offline default) or 'st:<model name or local path>'")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("env", type=_env_name, metavar="ENV",
                   help=f"the environment: {', '.join(env_names())} (`ecom-bench envs` lists them)")
    p.add_argument("-d", "--difficulty", type=_level, default=0,
                   help="difficulty level d >= 0 (default 0; the published scale tops at 12)")
    p.add_argument("--seed", type=_non_negative, default=0,
                   help="dataset seed: with the env, -d and the index it fixes the task (default 0)")
    _catalog_args(p)


def _context(args: argparse.Namespace):  # noqa: ANN202
    return load_context(CatalogSpec(args.catalog, args.catalog_size), args.embedder)


def cmd_show(args: argparse.Namespace) -> None:
    ep = new_episode(args.env, args.difficulty, args.seed, args.index, context=_context(args))
    print(f"# {ep.env.title}, d={args.difficulty}, seed={args.seed}, index={args.index}\n")
    print("SYSTEM:", ep.system_prompt(), "\n")
    print("USER:", ep.opening, "\n")
    if args.hidden:
        print("HIDDEN:", json.dumps(ep.problem.hidden_state(), indent=2))
        print("AXES:", json.dumps(Difficulty.from_level(args.difficulty).to_dict(), indent=2))
        print(f"{args.env.upper()} AXES:", json.dumps(ep.env.axis_values(args.difficulty), indent=2))


def cmd_envs(args: argparse.Namespace) -> None:
    from ecom_bench.envs.listing import axes_table, summary_table, tools_table

    print(summary_table(), tools_table(), axes_table(), sep="\n\n")


def cmd_run(args: argparse.Namespace) -> None:
    policy = get_policy(args.env, args.policy)
    ctx = _context(args)
    rewards = []
    start = time.perf_counter()
    for i in range(args.samples):
        run = run_policy(new_episode(args.env, args.difficulty, args.seed, i, context=ctx), policy)
        rewards.append(run.result.reward)
        if args.verbose:
            for m in run.messages[1:]:
                calls = " ".join(f"{c.name}({json.dumps(c.arguments)})" for c in m.tool_calls)
                print(f"  {m.role.upper():9} {calls or m.text}"[:400])
            print("  =>", run.result.explanation().replace("\n", "\n     "), "\n")
    elapsed = time.perf_counter() - start
    keys = ("task", "efficiency", "hallucination", "total")
    means = {k: statistics.fmean(getattr(r, k) for r in rewards) for k in keys}
    success = statistics.fmean(1.0 if r.success else 0.0 for r in rewards)
    print(f"{args.env} d={args.difficulty} policy={args.policy} n={len(rewards)}: success {success:.3f}  "
          + "  ".join(f"{k} {v:+.3f}" for k, v in means.items()) + f"  ({elapsed:.2f}s)")


def cmd_core_sweep(args: argparse.Namespace) -> None:
    """Mean success of each scripted policy per env and difficulty (the same episodes Inspect runs)."""
    envs = resolve_envs(args.envs)
    for env in envs:  # bad envs and policies fail before the (slow) catalogue and the first cell
        for name in args.policies:
            get_policy(env, name)
    ctx = _context(args)
    header = f"{'env':<13} {'policy':<10} " + " ".join(f"{'d=' + str(d):>7}" for d in args.difficulties)
    print(header)
    for env in envs:
        for name in args.policies:
            policy = get_policy(env, name)
            cells = []
            for d in args.difficulties:
                wins = [run_policy(new_episode(env, d, args.seed, i, context=ctx), policy).result.reward.success
                        for i in range(args.samples)]
                cells.append(f"{sum(wins) / len(wins):>7.3f}")
            print(f"{env:<13} {name:<10} " + " ".join(cells), flush=True)


def _generate_options(args: argparse.Namespace) -> dict[str, object]:
    """The generation settings given on the command line (Inspect's `GenerateConfig` fields)."""
    names = ("temperature", "top_p", "max_tokens", "max_retries", "timeout", "max_connections")
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def cmd_sweep(args: argparse.Namespace) -> int:
    from ecom_bench.leaderboard import ModelOptions, make_grid, parse_key_values, parse_model_roles, run_sweep
    from ecom_bench.leaderboard.sweep import default_display

    roles = parse_model_roles(args.model_role)
    grid = make_grid(args.model, args.envs, args.difficulties, args.samples, args.epochs, args.seed, args.catalog,
                     args.catalog_size, task_args=parse_key_values(args.task_arg, "-T"), model_roles=roles)
    model = ModelOptions(parse_key_values(args.model_arg, "-M"), args.model_base_url, _generate_options(args), roles)
    settings = {**grid.task_args, **model.generate, **model.model_args, **{f"role {r}": m for r, m in roles.items()}}
    print(f"sweep: {len(grid.models)} model(s) x {len(grid.envs)} env(s) x d {list(grid.difficulties)} = "
          f"{grid.tasks} tasks of {grid.samples} samples x {grid.epochs} epoch(s)"
          + (f" with {', '.join(f'{k}={v}' for k, v in settings.items())}" if settings else "")
          + f"; logs in {args.log_dir} (a rerun completes only what is missing)", file=sys.stderr, flush=True)
    done, logs = run_sweep(grid, args.log_dir, max_tasks=args.max_tasks,
                           display=args.display if args.display is not None else default_display(), model=model,
                           log_dir_allow_dirty=args.log_dir_allow_dirty)
    failed = [log for log in logs if log.status != "success"]
    if not done or failed:
        reasons = sorted({_error_reason(log.error.message) for log in failed if log.error is not None})
        why = f" ({'; '.join(reasons[:3])})" if reasons else ""
        print(f"ecom-bench: {len(failed)} of {len(logs)} tasks did not finish{why}; rerun the same command to "
              "retry them once the cause is fixed", file=sys.stderr)
        return 1
    print(f"all {len(logs)} tasks complete: ecom-bench leaderboard {args.log_dir}", file=sys.stderr)
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> None:
    from ecom_bench.leaderboard import build_leaderboard
    from ecom_bench.leaderboard.config import parse_filters

    files = build_leaderboard(args.log_dir, args.out, resamples=args.bootstrap, plots=not args.no_plots,
                              config=parse_filters(args.config))
    print(files.markdown)
    ep = files.episodes
    dropped = [f"{ep.errored} errored samples left out"] if ep.errored else []
    if ep.superseded:
        dropped.append(f"{ep.superseded} epochs replaced by newer logs of the same configuration "
                       f"({', '.join(ep.replaced)})")
    if ep.other_configs:
        dropped.append(f"{ep.other_configs} log(s) of other configurations left out by --config")
    print(f"\n{len(ep.table)} episodes from {ep.logs} logs" + (f" ({'; '.join(dropped)})" if dropped else ""))
    for path in (files.markdown_path, files.table_csv, files.by_difficulty_csv, *files.plots):
        print(f"wrote {path}")


def cmd_play(args: argparse.Namespace) -> None:
    play(lambda: new_episode(args.env, args.difficulty, args.seed, args.index, context=_context(args),
                              strict=args.strict))


def _catalog_arg(value: str) -> tuple[str, int | None]:
    """'synthetic:2000000' is 'synthetic' with --catalog-size 2000000 (the issue's spelling)."""
    source, sep, size = value.rpartition(":")
    if sep and source == "synthetic":
        try:
            return source, int(size)
        except ValueError:
            raise ValueError(f"catalog {value!r}: the size after 'synthetic:' must be an integer") from None
    return value, None


def cmd_build_index(args: argparse.Namespace) -> None:
    """Build every cached piece in turn (catalogue, vectors, vector index, BM25), each with
    its own progress bar and timing; a piece already cached loads instead, so rerunning an
    interrupted build resumes it (the embedding resumes mid-way)."""
    source, size = _catalog_arg(args.catalog)
    spec = CatalogSpec(source, args.catalog_size if args.catalog_size is not None else size)
    start = time.perf_counter()
    ctx = load_context(spec, args.embedder)
    print(f"catalogue: {len(ctx.catalog):,} products in {time.perf_counter() - start:.1f}s", file=sys.stderr)
    t = time.perf_counter()
    vi = ctx.search_engine.vector_index
    how = f"nprobe {vi.index.nprobe}, recall@10 {vi.recall_at_10:.3f}" if vi.recall_at_10 is not None else "exact"
    print(f"vector index ({vi.kind}, {how}, {'cached' if vi.from_cache else 'built'}) in "
          f"{time.perf_counter() - t:.1f}s", file=sys.stderr)
    t = time.perf_counter()
    _ = ctx.search_engine.lexical
    print(f"BM25 index in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    print(f"index ready for {len(ctx.catalog)} products ({args.embedder}) in {time.perf_counter() - start:.1f}s")


def _difficulty(value: str) -> int | str:
    return value if value == "adaptive" else _level(value)


def cmd_serve(args: argparse.Namespace) -> None:
    try:
        from ecom_bench.training.server import serve
    except ImportError as e:
        raise ImportError(f"serve needs openenv-core and uvicorn ({e.name or e} is missing): "
                          'pip install -e ".[train]"') from None
    limits = {} if args.max_sessions is None else {"max_sessions": args.max_sessions}
    if args.session_timeout is not None:
        limits["session_timeout_s"] = args.session_timeout or None
    if args.curriculum_save_every is not None:
        if args.curriculum_state is None:
            raise ValueError("--curriculum-save-every needs --curriculum-state FILE")
        limits["curriculum_save_s"] = args.curriculum_save_every
    serve(args.host, args.port, args.envs, args.difficulty, catalog=CatalogSpec(args.catalog, args.catalog_size),
          embedder=args.embedder, curriculum_state=args.curriculum_state, **limits)


def cmd_demo(args: argparse.Namespace) -> None:
    try:
        from ecom_bench.demo import check_can_listen, launch
    except ImportError as e:
        raise ImportError(f"demo needs gradio ({e.name or e} is missing): pip install -e \".[demo]\"") from None
    check_can_listen(args.host, args.port)
    page = launch(_context(args), args.host, args.port)
    print(f"ecom-bench demo: open {page.local_url} in a browser (Ctrl-C stops it)", file=sys.stderr, flush=True)
    page.block_thread()


def _import_modules(argv: list[str] | None) -> None:
    """Import the `--import` modules first: the env choices of the commands come from the registry."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--import", dest="imports", action="append", default=[])
    known, _ = pre.parse_known_args(argv)
    for module in known.imports:
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise ImportError(f"--import {module}: {e}") from None


def main(argv: list[str] | None = None) -> int:
    try:
        _import_modules(argv)
    except (ValueError, ImportError) as e:
        print(f"ecom-bench: error: {e}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog="ecom-bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (repeatable), for the environments it registers")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("envs", help="list the registered environments: tasks, tools, own difficulty axes")
    p.set_defaults(fn=cmd_envs)
    p = sub.add_parser("show", help="print a generated task")
    _common(p)
    p.add_argument("--index", type=_non_negative, default=0, help=_INDEX_HELP)
    p.add_argument("--hidden", action="store_true", help="also print the hidden goal")
    p.set_defaults(fn=cmd_show)
    p = sub.add_parser("run", help="run a scripted agent through the core")
    _common(p)
    p.add_argument("--policy", default="heuristic",
                   help="the scripted agent: oracle, heuristic, random, or an env's other agents (default heuristic)")
    p.add_argument("-n", "--samples", type=_count, default=20, help="episodes, tasks 0..n-1 of the seed (default 20)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every episode's conversation and verdict")
    p.set_defaults(fn=cmd_run)
    p = sub.add_parser("core-sweep", help="success table of the scripted agents over envs and difficulties")
    p.add_argument("envs", nargs="?", default="C8", help="a collection (C1, C2, C4, C8) or a comma list of envs")
    p.add_argument("-d", "--difficulties", type=_level, nargs="+", default=[0, 6, 12])
    p.add_argument("--policies", nargs="+", default=["oracle", "heuristic", "random"])
    p.add_argument("-n", "--samples", type=_count, default=30)
    p.add_argument("--seed", type=_non_negative, default=0, help="dataset seed (default 0)")
    _catalog_args(p)
    p.set_defaults(fn=cmd_core_sweep)
    p = sub.add_parser("sweep", help="run models over envs x difficulties as a resumable Inspect eval set")
    p.add_argument("--model", action="append", required=True,
                   help="an Inspect model (repeat for several): ecom/oracle, openai/gpt-4o-mini, ...")
    p.add_argument("--envs", default="C8", help="a collection (C1, C2, C4, C8) or a comma list of envs")
    p.add_argument("--difficulties", default="0:12:3", help="start:stop:step (stop included) or a comma list")
    p.add_argument("--samples", type=_count, default=20, help="episodes per env and difficulty")
    p.add_argument("--epochs", type=_count, default=1, help="trials per episode (pass^k and pass@k need >= 2)")
    p.add_argument("--log-dir", required=True, help="the eval set's directory (rerun to complete it)")
    p.add_argument("--seed", type=_non_negative, default=0)
    p.add_argument("--max-tasks", type=_count, default=None, help="tasks run in parallel (Inspect's default)")
    p.add_argument("--display", default=None,
                   choices=["progress", "lines", "full", "conversation", "rich", "plain", "log", "none"],
                   help="'progress' (default): one bar for the whole grid, a task that fails printed above it; "
                        "'lines': one line per finished task; or one of Inspect's own displays")
    p.add_argument("--log-dir-allow-dirty", action="store_true",
                   help="let the log dir also hold logs of other runs (e.g. the same grid with other --samples); "
                        "the leaderboard counts each episode once, from its newest log, and keeps other task "
                        "settings apart")
    p.add_argument("--catalog", default="synthetic",
                   help="'synthetic' (default, offline), a local parquet/jsonl file or folder, or a dataset id")
    p.add_argument("--catalog-size", type=_count, default=DEFAULT_CATALOG_SIZE,
                   help=f"products in the synthetic catalogue, or the most rows read from a loaded one "
                        f"(default {DEFAULT_CATALOG_SIZE})")
    p.add_argument("-T", "--task-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="a task parameter (repeatable): strict=false, embedder=st:MODEL, catalog_seed=3")
    g = p.add_argument_group("model and generation (passed to Inspect's eval_set)")
    g.add_argument("-M", "--model-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="a model arg (repeatable; a comma stays in the value)")
    g.add_argument("--model-base-url", default=None)
    g.add_argument("--model-role", action="append", default=[], metavar="ROLE=MODEL",
                   help="a model role (repeatable): user=MODEL words the customer of -T user=llm")
    g.add_argument("--temperature", type=float, default=None)
    g.add_argument("--top-p", type=float, default=None)
    g.add_argument("--max-tokens", type=_count, default=None)
    g.add_argument("--max-retries", type=_non_negative, default=None, help="retries of a failed model call")
    g.add_argument("--timeout", type=_count, default=None, help="seconds a model call may take")
    g.add_argument("--max-connections", type=_count, default=None, help="concurrent calls to a model's API")
    p.set_defaults(fn=cmd_sweep)
    p = sub.add_parser("leaderboard", help="table, CSV, plots and d50 from the logs of a sweep (or any evals)")
    p.add_argument("log_dir", help="a directory of ecom_bench Inspect logs")
    p.add_argument("--out", default=None, help="where to write the CSVs and PNGs (default LOG_DIR/leaderboard)")
    p.add_argument("--bootstrap", type=_count, default=1000, help="resamples for the d50 intervals")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--config", action="append", default=[], metavar="SETTING=VALUE",
                   help="select one configuration where the logs hold several (repeatable): catalog, catalog_size, "
                        "catalog_seed, strict, embedder, user, task_version")
    p.set_defaults(fn=cmd_leaderboard)
    p = sub.add_parser("play", help="play the agent yourself (/help inside explains how)")
    _common(p)
    p.add_argument("--index", type=_non_negative, default=0, help=_INDEX_HELP)
    p.add_argument("--strict", action="store_true",
                   help="the published rule: a tool call with bad arguments ends the game with -1 "
                        "(default: the error comes back and the game goes on)")
    p.set_defaults(fn=cmd_play)
    p = sub.add_parser("build-index", help="build and cache the catalogue and its search indexes (resumable)")
    _catalog_args(p)
    p.set_defaults(fn=cmd_build_index)
    p = sub.add_parser("serve", help="serve the environments over OpenEnv (HTTP + WebSocket sessions)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=_port, default=8000)
    p.add_argument("--envs", default="C8", help="a collection (C1, C2, C4, C8) or a comma list of envs")
    p.add_argument("-d", "--difficulty", type=_difficulty, default=6, help="a level d >= 0, or 'adaptive'")
    p.add_argument("--max-sessions", type=_count, default=None,
                   help="concurrent WebSocket sessions (default 256)")
    p.add_argument("--session-timeout", type=_non_negative, default=None,
                   help="seconds a session may sit idle before it is closed (default 600; 0: never)")
    p.add_argument("--curriculum-state", metavar="FILE", default=None,
                   help="with -d adaptive: load the curriculum from FILE if it exists, save it there every "
                        "--curriculum-save-every seconds it changed and at shutdown (atomic writes)")
    p.add_argument("--curriculum-save-every", type=_positive_seconds, default=None, metavar="SECONDS",
                   help="seconds between saves of --curriculum-state (default 30)")
    _catalog_args(p)
    p.set_defaults(fn=cmd_serve)
    p = sub.add_parser("demo", help="play the agent in a browser: pick an episode, call tools through forms, "
                       "see the reward and the hidden goal (extra `demo`)",
                       description="Serve a web page (Gradio) where a person plays an episode as the agent, "
                       "through the same episode loop as every other front. Offline: nothing is fetched.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=_listening_port, default=7860, help="port to listen on (default 7860)")
    _catalog_args(p)
    p.set_defaults(fn=cmd_demo)
    args = parser.parse_args(argv)
    try:
        return args.fn(args) or 0  # a command returns an exit code only when it has one to give
    except BrokenPipeError:  # `ecom-bench show ... | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's own flush at exit fails quietly
        return 0
    except (ValueError, OSError, ImportError) as e:  # bad values, missing files/models, missing extras
        print(f"ecom-bench: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C in `play` or a long sweep: stop quietly, with the shell's code
        print(file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
