"""Scale figures of the catalogue and search storage (issue 13 part 2) for one synthetic size.

    python benchmarks/bench_scale_storage.py --n 2000000 [--cache-dir DIR] [--queries 300]

Each piece runs in its own fresh process, so its peak RSS is its own: build (catalogue,
vectors + vector index, BM25; each cached, so a rerun over the same --cache-dir measures
cached loads), then a cached load of the whole context (`load_context` + `warm`), then
search: `catalog_search`-shaped hybrid search latency p50/p99 on sampled product names and
recall@10 of the vector index against exact search over the same vectors. Prints a markdown
table; asserts nothing. The functions (`build_figures`, `load_figures`, `search_figures`)
are what a wider benchmarks/bench_scale.py can call.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = r'''
import json, os, resource, sys, time, random, statistics
import numpy as np
n, what = int(sys.argv[1]), sys.argv[2]
out = {}
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
def step(name, fn):
    t = time.perf_counter(); r = fn(); out[name + "_s"] = round(time.perf_counter() - t, 2)
    out[name + "_peak_rss_mb"] = round(peak_mb()); return r
from ecom_bench.catalog.embedders import get_embedder
from ecom_bench.catalog.search import SearchEngine
from ecom_bench.catalog.synthetic import generate_synthetic_catalog
emb = get_embedder("wordllama")
if what == "build":
    cat = step("catalogue", lambda: generate_synthetic_catalog(n, 0, use_cache=True))
    eng = SearchEngine(cat, emb)
    vi = step("vector_index", lambda: eng.vector_index)
    step("bm25", lambda: eng.lexical)
    out.update(kind=vi.kind, from_cache=vi.from_cache, nprobe=int(getattr(vi.index, "nprobe", 0)),
               tuned_recall_at_10=vi.recall_at_10)
elif what == "load":
    from ecom_bench.envs.context import CatalogSpec, load_context
    t = time.perf_counter()
    ctx = load_context(CatalogSpec(size=n))
    ctx.search_engine.warm()
    ctx.search_engine.search("wireless charger")
    out["cached_load_s"] = round(time.perf_counter() - t, 2)
    out["cached_load_peak_rss_mb"] = round(peak_mb())
else:
    from ecom_bench.catalog.index import measure_recall, recall_queries
    cat = generate_synthetic_catalog(n, 0, use_cache=True)
    eng = SearchEngine(cat, emb).warm()
    rng = random.Random(5)
    rows = rng.sample(range(len(cat)), min(int(sys.argv[3]), len(cat)))
    titles = cat.table.column("title").take(rows).to_pylist()
    queries = [t.split(",")[0] for t in titles] + [f"{t.split(',')[1].strip()} {cat.leaf_categories[r]}"
                                                   for t, r in zip(titles, rows)]
    for q in queries[:10]:
        eng.search(q)
    ts = []
    for q in queries:
        t = time.perf_counter(); eng.search(q); ts.append((time.perf_counter() - t) * 1000)
    ts.sort()
    out["search_p50_ms"] = round(statistics.median(ts), 2)
    out["search_p99_ms"] = round(ts[min(len(ts) - 1, int(0.99 * len(ts)))], 2)
    out["search_queries"] = len(ts)
    vi = eng.vector_index
    if vi._flat_view() is not None:
        out["recall_at_10"] = round(measure_recall(vi, recall_queries(cat, emb, 300, seed=11)), 4)
    out["search_peak_rss_mb"] = round(peak_mb())
print("RESULT " + json.dumps(out))
'''


def _child(n: int, what: str, cache_dir: Path, *extra: str) -> dict[str, object]:
    env = {**os.environ, "ECOM_BENCH_CACHE": str(cache_dir)}
    root = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = f"{root}{os.pathsep}{env.get('PYTHONPATH', '')}"
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(n), what, *extra], env=env, text=True,
                          stdout=subprocess.PIPE, check=True)
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def build_figures(n: int, cache_dir: Path) -> dict[str, object]:
    """Time and peak RSS of each build piece (cached pieces load instead)."""
    return _child(n, "build", cache_dir)


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
    args = ap.parse_args(argv)
    cache = Path(args.cache_dir) if args.cache_dir else Path(tempfile.mkdtemp(prefix="bench_scale_storage_"))
    figures: dict[str, object] = {"n": args.n}
    for fn in (build_figures, load_figures):
        figures.update(fn(args.n, cache))
        print(json.dumps(figures), file=sys.stderr, flush=True)
    figures.update(search_figures(args.n, cache, args.queries))
    print(f"| measure ({args.n:,} synthetic products) | value |\n|---|---|")
    for k, v in figures.items():
        print(f"| {k} | {v} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
