"""Scale figures of the catalogue and search storage for one synthetic size.

    python benchmarks/bench_scale_storage.py --n 2000000 [--cache-dir DIR] [--queries 300]
        [--full-build] [--json out.json]

Every measurement runs in a fresh child process and reports wall time, CPU time (user + sys,
all threads: on a shared machine the wall time depends on the other work, the CPU time
much less) and that process's peak RSS (from `os.wait4`, as `/usr/bin/time -v` reports it):

* build, one process per piece, so each peak is the piece's own: the catalogue (generated
  and cached), the vector index (embedding, IVF training and filling, nprobe tuning; over
  the cached catalogue), BM25 (over the cached catalogue). A rerun over the same
  --cache-dir measures cached loads instead.
* with --full-build, first the whole build in one process as a user runs it
  (`ecom-bench build-index --catalog synthetic:N`, in its own cache folder DIR/full): its
  wall, CPU and peak RSS.
* a cached load of the whole context (`load_context` + `warm` + one search).
* search: `catalog_search`-shaped hybrid search latency p50/p99 over sampled product names
  and "spec + category" queries, and recall@10 of the vector index against exact search
  over the same vectors (queries the nprobe tuning did not see).

Prints a markdown table (and writes JSON with --json); asserts nothing. `build_figures`,
`full_build_figures`, `load_figures` and `search_figures` are what a wider
benchmarks/bench_scale.py can call.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = (Path(__file__).with_name("_child_timing.py").read_text() + r'''
import json, resource, sys, time, random, statistics
n, what = int(sys.argv[1]), sys.argv[2]
from ecom_bench.catalog.embedders import get_embedder
from ecom_bench.catalog.search import SearchEngine
from ecom_bench.catalog.synthetic import generate_synthetic_catalog
emb = get_embedder("wordllama")
if what == "catalogue":
    step("catalogue", lambda: generate_synthetic_catalog(n, 0, use_cache=True))
elif what == "vector_index":
    eng = SearchEngine(generate_synthetic_catalog(n, 0, use_cache=True), emb)
    vi = step("vector_index", lambda: eng.vector_index)
    out.update(kind=vi.kind, from_cache=vi.from_cache, nlist=int(getattr(vi.index, "nlist", 0)),
               nprobe=int(getattr(vi.index, "nprobe", 0)), tuned_recall_at_10=vi.recall_at_10)
elif what == "bm25":
    eng = SearchEngine(generate_synthetic_catalog(n, 0, use_cache=True), emb)
    step("bm25", lambda: eng.lexical)
elif what == "load":
    from ecom_bench.envs.context import CatalogSpec, load_context
    def load():
        ctx = load_context(CatalogSpec(size=n))
        ctx.search_engine.warm()
        ctx.search_engine.search("wireless charger")
    step("cached_load", load)
else:
    from ecom_bench.catalog.vector_index import measure_recall, recall_queries
    cat = generate_synthetic_catalog(n, 0, use_cache=True)
    eng = SearchEngine(cat, emb).warm()
    rng = random.Random(5)
    rows = rng.sample(range(len(cat)), min(int(sys.argv[3]), len(cat)))
    titles = cat.table.column("title").take(rows).to_pylist()
    queries = [t.split(",")[0] for t in titles] + [f"{t.split(',')[1].strip()} {cat.leaf_categories[r]}"
                                                   for t, r in zip(titles, rows)]
    for q in queries[:10]:
        eng.search(q)
    cold = []
    for q in queries:  # first time each: the hits' products are made from the columns
        t = time.perf_counter(); eng.search(q); cold.append((time.perf_counter() - t) * 1000)
    ts = []
    for q in queries:
        t = time.perf_counter(); eng.search(q); ts.append((time.perf_counter() - t) * 1000)
    ts.sort(); cold.sort()
    out["search_p50_ms"] = round(statistics.median(ts), 2)
    out["search_p99_ms"] = round(ts[min(len(ts) - 1, int(0.99 * len(ts)))], 2)
    out["search_first_p50_ms"] = round(statistics.median(cold), 2)
    out["search_first_p99_ms"] = round(cold[min(len(cold) - 1, int(0.99 * len(cold)))], 2)
    out["search_queries"] = len(ts)
    vi = eng.vector_index
    if vi._flat_view() is not None:
        out["recall_at_10"] = round(measure_recall(vi, recall_queries(cat, emb, 300, seed=11)), 4)
print("RESULT " + json.dumps(out))
''')


def _run(cmd: list[str], cache_dir: Path) -> tuple[str, dict[str, float]]:
    """Run a child; its stdout, and its wall time, CPU time and peak RSS (from `os.wait4`)."""
    env = {**os.environ, "ECOM_BENCH_CACHE": str(cache_dir)}
    root = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = f"{root}{os.pathsep}{env.get('PYTHONPATH', '')}"
    t = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, env=env, text=True, stdout=out)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd, text)
    return text, {"wall_s": round(time.perf_counter() - t, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
                  "peak_rss_mb": round(usage.ru_maxrss / 1024)}


def _child(n: int, what: str, cache_dir: Path, *extra: str) -> dict[str, object]:
    text, usage = _run([sys.executable, "-c", _CHILD, str(n), what, *extra], cache_dir)
    line = next(ln for ln in text.splitlines() if ln.startswith("RESULT "))
    figures: dict[str, object] = json.loads(line[len("RESULT "):])
    figures[f"{what}_process_peak_rss_mb"] = usage["peak_rss_mb"]
    return figures


def build_figures(n: int, cache_dir: Path) -> dict[str, object]:
    """Wall, CPU and peak RSS of each build piece, each in its own process (cached pieces load)."""
    figures: dict[str, object] = {}
    for piece in ("catalogue", "vector_index", "bm25"):
        figures.update(_child(n, piece, cache_dir))
        print(json.dumps(figures), file=sys.stderr, flush=True)
    return figures


def full_build_figures(n: int, cache_dir: Path) -> dict[str, object]:
    """The whole build in one process, as a user runs it: ``ecom-bench build-index``."""
    _, usage = _run([sys.executable, "-m", "ecom_bench.cli", "build-index", "--catalog", f"synthetic:{n}"],
                    cache_dir)
    return {f"full_build_{k}": v for k, v in usage.items()}


def load_figures(n: int, cache_dir: Path) -> dict[str, object]:
    """A fresh process loading the cached catalogue and both indexes (`load_context` + warm)."""
    return _child(n, "load", cache_dir)


def search_figures(n: int, cache_dir: Path, queries: int = 300) -> dict[str, object]:
    """Hybrid search p50/p99 (names and 'spec + category' queries) and vector recall@10."""
    return _child(n, "search", cache_dir, str(queries))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--cache-dir", default=None, help="reuse a cache (default: a fresh temporary one)")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--full-build", action="store_true",
                    help="first build everything in one process (`ecom-bench build-index`), then measure the pieces")
    ap.add_argument("--json", default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    cache = Path(args.cache_dir) if args.cache_dir else Path(tempfile.mkdtemp(prefix="bench_scale_storage_"))
    figures: dict[str, object] = {"n": args.n, "date": time.strftime("%Y-%m-%d"),
                                  "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
                                  "load_average_at_start": round(os.getloadavg()[0], 2)}
    if args.full_build:
        figures.update(full_build_figures(args.n, cache / "full"))
        print(json.dumps(figures), file=sys.stderr, flush=True)
    figures.update(build_figures(args.n, cache))
    figures.update(load_figures(args.n, cache))
    figures.update(search_figures(args.n, cache, args.queries))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    print(f"| measure ({args.n:,} synthetic products) | value |\n|---|---|")
    for k, v in figures.items():
        print(f"| {k} | {v} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
