"""Scale figures: build, load, search, resets, oracle episodes and Inspect overhead per catalogue size.

    .venv/bin/python benchmarks/bench_scale.py --out bench/scale [--sizes 20000 200000] [--huge]

For each synthetic catalogue size (20k and 200k; 2M with `--huge`), in fresh processes:

* **build**: catalogue, vector index, lexical index and the per-catalogue lookups a reset reads
  (`catalog/lookups.py`), each with its seconds and the process's peak RSS after it,
  into an empty index cache;
* **cached load**: a new process loading the same context from that cache (seconds, peak RSS);
* **search**: `catalog_search`-style hybrid search p50/p99 over `--queries` queries (product
  nouns and attribute values), and recall@10 of the vector index against exact search
  over the same vectors (1.0 for a flat index);
* **resets**: `new_episode` p50/p99 per env over `--resets` episodes at `--difficulty`, the
  first reset of each env included (the context and its indexes loaded beforehand);
* **core oracle**: episodes/s of `run_policy(new_episode(...), oracle)` per env, after
  `WARMUP_EPISODES` of another seed (a process's one-off imports and tool-schema models);
* **Inspect**: per-sample cost of `inspect_ai.eval(cart, model="ecom/oracle")`, marginal
  between two sample counts (so start-up and one-off imports cancel), beside the core
  runner's cost for the same episodes; the difference is Inspect's per-sample overhead. Beside
  it, Inspect's own floor (a fixed-answer task, no model call), Inspect alone on samples of
  the cart's shape (the same model calls on the same texts with the same tool schemas and as
  many scorers, answered by a fixed model: what no change of ours that keeps the sample's
  shape can go below), and the cart
  eval with `log_realtime=False` (a documented option a benchmark caller can choose).

Writes `<out>.json` and `<out>.md` (a markdown table). Figures, not asserts: on a shared
machine they are noisy, so compare ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ENVS = ("cart", "discovery", "substitution", "returns", "tracking", "policy", "bundle", "journey")
#: Oracle episodes of another seed run before the timed ones (see `worker_resets`).
WARMUP_EPISODES = 5
SEARCH_ENVS = ("discovery", "substitution", "journey")  # measured again without the query cache


def _rss_mb() -> float:
    """Peak resident set size of this process so far, MB (Linux reports KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _pct(xs: list[float], q: int) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1] if len(xs) > 1 else xs[0]


def _timed(fn: Any) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


# ------------------------------------------------------------------ workers (fresh processes)
def worker_build(size: int) -> dict[str, Any]:
    from ecom_bench.catalog.embedders import get_embedder
    from ecom_bench.catalog.search import SearchEngine
    from ecom_bench.catalog.synthetic import generate_synthetic_catalog
    from ecom_bench.catalog.lookups import catalog_lookups

    out: dict[str, Any] = {"rss_start_mb": _rss_mb()}
    # written to the catalogue cache too (as `ecom-bench build-index` does), so the next
    # worker's "cached load" reads it instead of generating the catalogue again
    catalog, out["catalog_s"] = _timed(lambda: generate_synthetic_catalog(size, 0, use_cache=True))
    out["catalog_rss_mb"] = _rss_mb()
    engine = SearchEngine(catalog, get_embedder("wordllama"))
    vindex, out["vector_s"] = _timed(lambda: engine.vector_index)
    out["vector_rss_mb"], out["vector_kind"], out["vector_from_cache"] = _rss_mb(), vindex.kind, vindex.from_cache
    _, out["lexical_s"] = _timed(lambda: engine.lexical)
    out["lexical_rss_mb"] = _rss_mb()
    _, out["reset_index_s"] = _timed(lambda: catalog_lookups(catalog))
    out["reset_index_rss_mb"] = _rss_mb()
    return out


def _context(size: int) -> Any:
    from ecom_bench.envs.context import CatalogSpec, load_context, prepare

    ctx = load_context(CatalogSpec(size=size))
    ctx.search_engine.warm()
    prepare(ctx.catalog)
    return ctx


def worker_load(size: int) -> dict[str, Any]:
    ctx, seconds = _timed(lambda: _context(size))
    return {"load_s": seconds, "load_rss_mb": _rss_mb(), "products": len(ctx.catalog),
            "vector_kind": ctx.search_engine.vector_index.kind,
            "vector_from_cache": ctx.search_engine.vector_index.from_cache}


def _all_vectors(vindex: Any) -> Any:
    import faiss
    import numpy as np

    index = vindex.index
    try:
        faiss.extract_index_ivf(index).make_direct_map()
    except RuntimeError:
        pass  # not an IVF index
    return np.asarray(index.reconstruct_n(0, index.ntotal), dtype=np.float32)


def worker_search(size: int, queries: int) -> dict[str, Any]:
    import numpy as np

    from ecom_bench.catalog.naming import product_noun

    ctx = _context(size)
    engine, catalog = ctx.search_engine, ctx.catalog
    rng = np.random.default_rng(0)
    texts = []
    for i in rng.choice(len(catalog), queries, replace=False).tolist():
        p = catalog.products[i]
        value = next(iter(p.attributes.values()), "")
        texts.append(f"{product_noun(p).one} {value}".strip())
    ms = []
    for q in texts:
        _, s = _timed(lambda q=q: engine.search(q, depth=100, limit=10))
        ms.append(s * 1000)
    qv = engine.embedder.encode(texts)
    vindex = engine.vector_index
    _, ann = vindex.search(qv, 10)
    xb = _all_vectors(vindex)
    hits = 0
    for r in range(len(texts)):
        scores = xb @ qv[r]
        exact = np.argpartition(-scores, 9)[:10]
        hits += len(set(exact.tolist()) & set(ann[r].tolist()))
    return {"search_p50_ms": statistics.median(ms), "search_p99_ms": _pct(ms, 99),
            "recall_at_10": hits / (10 * len(texts)), "queries": len(texts)}


def _oracle_run(ctx: Any, env: str, difficulty: int, seed: int, episodes: int) -> tuple[float, float]:
    """(episodes/s, success rate) of the env's oracle over `episodes` episodes of `seed`."""
    from ecom_bench.agents import get_policy
    from ecom_bench.episode import new_episode
    from ecom_bench.runner import run_policy

    policy = get_policy(env, "oracle")
    wins = 0
    t = time.perf_counter()
    for i in range(episodes):
        wins += run_policy(new_episode(env, difficulty, seed, i, context=ctx), policy).result.reward.success
    return episodes / (time.perf_counter() - t), wins / episodes


def worker_resets(size: int, resets: int, episodes: int, difficulty: int) -> dict[str, Any]:
    from ecom_bench.episode import new_episode

    ctx = _context(size)
    out: dict[str, Any] = {}
    for env in ENVS:
        ms = []
        for i in range(resets):
            _, s = _timed(lambda env=env, i=i: new_episode(env, difficulty, 0, i, context=ctx))
            ms.append(s * 1000)
        # Warm-up on other episodes (seed 0): the env's one-off costs in a process (its tool-schema
        # models, lazily imported modules: ~30-50 ms, a sixth of 50 episodes) are not per-episode.
        _oracle_run(ctx, env, difficulty, 0, WARMUP_EPISODES)
        eps, success = _oracle_run(ctx, env, difficulty, 1, episodes)
        out[env] = {"reset_p50_ms": statistics.median(ms), "reset_p99_ms": _pct(ms, 99), "reset_first_ms": ms[0],
                    "oracle_eps_per_s": eps, "oracle_success": success}
    # The search engine keeps recent queries' candidate pools, and the oracle repeats queries
    # across episodes more than most agents: the search-heavy envs again without that cache.
    from ecom_bench.catalog import search

    kept, search.POOL_CACHE = search.POOL_CACHE, 0
    ctx.search_engine.clear_query_cache()
    try:
        for env in SEARCH_ENVS:
            out[env]["oracle_eps_per_s_no_query_cache"] = _oracle_run(ctx, env, difficulty, 2, episodes)[0]
    finally:
        search.POOL_CACHE = kept
    return out


def _fixed_scorer(name: str) -> Any:
    """A scorer that gives every sample 1.0 (nothing read, nothing computed)."""
    from inspect_ai.scorer import Score, mean, scorer

    @scorer(metrics=[mean()], name=name)
    def fixed_score() -> Any:
        async def score(state: Any, target: Any) -> Score:
            return Score(value=1.0)
        return score

    return fixed_score()


def _inspect_floor_task(samples: int) -> Any:
    """Inspect's own per-sample floor: a task whose solver returns a fixed answer and whose one
    scorer a fixed score (no model call, no tools, no store), logged the same way."""
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput
    from inspect_ai.solver import solver

    @solver
    def fixed_answer() -> Any:
        async def solve(state: Any, generate: Any) -> Any:
            state.output = ModelOutput.from_content("none", "done")
            return state
        return solve

    return Task(dataset=MemoryDataset([Sample(id=i, input="hi") for i in range(samples)]),
                solver=fixed_answer(), scorer=_fixed_scorer("fixed_score"))


def _inspect_shape_task(runs: list[Any], tools: list[Any], n_scorers: int) -> Any:
    """Inspect's own cost for a sample shaped like a cart sample, with nothing of ours in it:
    the same number of model calls as each core run made, on the same message texts, each
    given the cart's tool schemas, answered by a fixed-output model (`_fixed_model_api`), then
    as many no-op scorers as the cart task has. What the cart eval costs beyond this is ours."""
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model
    from inspect_ai.solver import solver

    @solver
    def replay() -> Any:
        async def solve(state: Any, generate: Any) -> Any:
            run = runs[int(state.sample_id)]
            model = get_model()
            state.messages = [ChatMessageSystem(content=run.messages[0].text)]
            for message in run.messages[1:]:
                if message.role == "assistant":
                    state.output = await model.generate(state.messages, tools)
                    state.messages.append(state.output.message)
                else:
                    state.messages.append(ChatMessageUser(content=message.text or "."))
            return state
        return solve

    return Task(dataset=MemoryDataset([Sample(id=i, input="hi") for i in range(len(runs))]),
                solver=replay(), scorer=[_fixed_scorer(f"part{i}") for i in range(n_scorers)])


def _fixed_model_api() -> None:
    """Register `bench-fixed/model`: answers every call with one short text (no tokenizer, no I/O)."""
    from inspect_ai.model import ModelAPI, ModelOutput, modelapi

    @modelapi(name="bench-fixed")
    def bench_fixed() -> Any:
        class Fixed(ModelAPI):
            async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
                return ModelOutput.from_content("bench-fixed", "ok")
        return Fixed


def worker_inspect(size: int, samples: int) -> dict[str, Any]:
    import inspect_ai

    from ecom_bench import tasks
    from ecom_bench.agents import get_policy
    from ecom_bench.episode import new_episode
    from ecom_bench.runner import run_policy

    ctx = _context(size)
    t = time.perf_counter()
    runs = [run_policy(new_episode("cart", 0, 0, i, context=ctx), get_policy("cart", "oracle"))
            for i in range(samples)]
    core_ms = (time.perf_counter() - t) / samples * 1000
    lo, hi = samples // 5, samples

    def marginal_ms(make_task: Any, model: str, **options: Any) -> float:
        walls = {}
        with tempfile.TemporaryDirectory(prefix="ecom-bench-scale-logs-") as logs:
            for n in (5, lo, hi):  # the first run takes Inspect's one-off imports
                task = make_task(n)  # episodes built here, outside the timing
                _, walls[n] = _timed(lambda task=task: inspect_ai.eval(task, model=model, display="none",
                                                                       log_dir=logs, **options))
        return (walls[hi] - walls[lo]) / (hi - lo) * 1000

    per_sample = marginal_ms(lambda n: tasks.cart(samples=n, catalog_size=size), "ecom/oracle")
    # Inspect's floor on this machine (a fixed-answer task), and the cart eval without the realtime
    # sample buffer (`log_realtime=False`: the full log is still written, only live viewing is lost).
    floor = marginal_ms(_inspect_floor_task, "none/none")
    no_realtime = marginal_ms(lambda n: tasks.cart(samples=n, catalog_size=size), "ecom/oracle", log_realtime=False)
    # Inspect alone on the cart samples' shape (model calls, message texts, tool schemas, scorers)
    from ecom_bench.scorers import reward_scorers
    from ecom_bench.tasks._tools import episode_tools

    _fixed_model_api()
    schemas = episode_tools(new_episode("cart", 0, 0, 0, context=ctx))
    shape = marginal_ms(lambda n: _inspect_shape_task(runs[:n], schemas, len(reward_scorers())), "bench-fixed/model")
    return {"inspect_ms_per_sample": per_sample, "core_ms_per_episode": core_ms,
            "inspect_overhead_ms": per_sample - core_ms, "samples": [lo, hi],
            "inspect_floor_ms_per_sample": floor, "inspect_ms_per_sample_log_realtime_off": no_realtime,
            "inspect_shape_floor_ms_per_sample": shape,
            "model_calls_per_sample": sum(m.role == "assistant" for r in runs for m in r.messages) / len(runs),
            "tools_per_call": len(schemas), "scorers": len(reward_scorers())}


WORKERS = {"build": worker_build, "load": worker_load, "search": worker_search, "resets": worker_resets,
           "inspect": worker_inspect}


# -------------------------------------------------------------------------- orchestration
def _run_worker(name: str, cache: str, *args: Any) -> dict[str, Any]:
    env = {**os.environ, "ECOM_BENCH_CACHE": cache,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    cmd = [sys.executable, __file__, "--worker", name, "--args", json.dumps(args)]
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": (done.stderr or done.stdout).strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(size: int, args: argparse.Namespace) -> dict[str, Any]:
    cache = args.cache or tempfile.mkdtemp(prefix=f"ecom-bench-scale-{size}-")
    print(f"== {size:,} products (index cache {cache})", flush=True)
    out: dict[str, Any] = {"size": size, "cache": cache}
    for name, extra in (("build", ()), ("load", ()), ("search", (args.queries,)),
                        ("resets", (args.resets, args.episodes, args.difficulty)), ("inspect", (args.samples,))):
        if name == "inspect" and args.no_inspect:
            continue
        runs = [_run_worker(name, cache, size, *extra)
                for _ in range(args.repeats if name in ("search", "resets", "inspect") else 1)]
        out[name] = _median_of(runs)
        print(f"   {name}: {json.dumps(out[name])}", flush=True)
    return out


def _median_of(runs: list[Any]) -> Any:
    """Figure by figure, the median over repeated runs of one worker (a shared VM's speed
    drifts by a third between minutes); a non-numeric figure is taken from the first run."""
    first = runs[0]
    if isinstance(first, dict):
        return {k: _median_of([r[k] for r in runs if isinstance(r, dict) and k in r]) for k in first}
    if isinstance(first, (int, float)) and not isinstance(first, bool) and len(runs) > 1:
        return statistics.median(runs)
    return first


def _f(x: Any, fmt: str = ".1f") -> str:
    return "n/a" if x is None else format(x, fmt)


def markdown(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    sizes = [r["size"] for r in results]
    head = "| | " + " | ".join(f"{s:,}" for s in sizes) + " |\n|---|" + "---:|" * len(sizes) + "\n"

    def row(label: str, get: Any) -> str:
        cells = []
        for r in results:
            try:
                cells.append(get(r))
            except (KeyError, TypeError):
                cells.append("n/a")
        return f"| {label} | " + " | ".join(cells) + " |\n"

    rows = [
        row("catalogue build s (peak RSS MB)", lambda r: f"{_f(r['build']['catalog_s'])} ({_f(r['build']['catalog_rss_mb'], '.0f')})"),
        row("vector index build s (peak RSS MB)", lambda r: f"{_f(r['build']['vector_s'])} ({_f(r['build']['vector_rss_mb'], '.0f')}, {r['build']['vector_kind']})"),
        row("lexical index build s (peak RSS MB)", lambda r: f"{_f(r['build']['lexical_s'])} ({_f(r['build']['lexical_rss_mb'], '.0f')})"),
        row("reset index build s (peak RSS MB)", lambda r: f"{_f(r['build']['reset_index_s'], '.2f')} ({_f(r['build']['reset_index_rss_mb'], '.0f')})"),
        row("cached load s (peak RSS MB)", lambda r: f"{_f(r['load']['load_s'])} ({_f(r['load']['load_rss_mb'], '.0f')})"),
        row("catalog_search p50 / p99 ms", lambda r: f"{_f(r['search']['search_p50_ms'])} / {_f(r['search']['search_p99_ms'])}"),
        row("vector recall@10 vs exact", lambda r: _f(r['search']['recall_at_10'], '.3f')),
    ]
    for env in ENVS:
        rows.append(row(f"{env}: reset p50 / p99 ms", lambda r, e=env: f"{_f(r['resets'][e]['reset_p50_ms'])} / {_f(r['resets'][e]['reset_p99_ms'])}"))
    for env in ENVS:
        rows.append(row(f"{env}: oracle episodes/s (success)", lambda r, e=env: f"{_f(r['resets'][e]['oracle_eps_per_s'], '.0f')} ({_f(r['resets'][e]['oracle_success'], '.2f')})"))
    for env in SEARCH_ENVS:
        rows.append(row(f"{env}: oracle episodes/s, query cache off",
                        lambda r, e=env: _f(r['resets'][e]['oracle_eps_per_s_no_query_cache'], '.0f')))
    rows.append(row("Inspect cart oracle ms/sample (core ms)", lambda r: f"{_f(r['inspect']['inspect_ms_per_sample'])} ({_f(r['inspect']['core_ms_per_episode'])})"))
    rows.append(row("Inspect per-sample overhead ms", lambda r: _f(r['inspect']['inspect_overhead_ms'])))
    rows.append(row("Inspect's own floor ms/sample (fixed answer, no model)",
                    lambda r: _f(r['inspect']['inspect_floor_ms_per_sample'])))
    rows.append(row("Inspect alone, a sample of the cart's shape: ms/sample (calls x tools, scorers)",
                    lambda r: f"{_f(r['inspect']['inspect_shape_floor_ms_per_sample'])} "
                              f"({_f(r['inspect']['model_calls_per_sample'])} x {r['inspect']['tools_per_call']}, "
                              f"{r['inspect']['scorers']})"))
    rows.append(row("Inspect cart oracle ms/sample, log_realtime=False",
                    lambda r: _f(r['inspect']['inspect_ms_per_sample_log_realtime_off'])))
    note = (f"{date.today().isoformat()}, {platform.node()} ({os.cpu_count()} CPUs, {platform.platform()}), "
            f"d={args.difficulty}, {args.resets} resets and {args.episodes} oracle episodes per env, "
            f"median of {args.repeats} run(s) of the search, reset and Inspect workers, "
            f"{args.queries} queries, Inspect marginal over {args.samples // 5}->{args.samples} cart samples.\n\n")
    return note + head + "".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write <out>.json and <out>.md")
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000])
    ap.add_argument("--huge", action="store_true", help="also 2,000,000 products")
    ap.add_argument("--resets", type=int, default=100)
    ap.add_argument("--episodes", type=int, default=50, help="oracle episodes per env")
    ap.add_argument("--difficulty", type=int, default=6)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--samples", type=int, default=200, help="Inspect cart samples (the marginal is from a fifth)")
    ap.add_argument("--no-inspect", action="store_true")
    ap.add_argument("--repeats", type=int, default=1,
                    help="run the search, resets and Inspect workers this many times; report each figure's median")
    ap.add_argument("--cache", help="index cache dir (default: a fresh one per size, so builds are timed)")
    ap.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    ap.add_argument("--args", default="[]", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(WORKERS[args.worker](*json.loads(args.args))))
        return
    if not args.out:
        ap.error("--out is required")
    sizes = args.sizes + ([2_000_000] if args.huge and 2_000_000 not in args.sizes else [])
    results = [measure(size, args) for size in sizes]
    out = Path(args.out).with_suffix("")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"args": vars(args), "results": results}, indent=1) + "\n")
    table = markdown(results, args)
    out.with_suffix(".md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
