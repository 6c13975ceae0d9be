"""Benchmark catalogue search on the synthetic catalogue.

    python benchmarks/bench_search.py --n 20000 --queries 200 [--embedder wordllama] [--kind auto]

Times: catalogue generation, embedding, vector-index build (cold) and load (cache
hit), BM25 build, single-query latency p50/p95 (semantic only, lexical only, hybrid,
hybrid + filters), batched search, and peak RSS; plus retrieval quality on product
short names (title before the first comma), with and without a typo. Prints a table;
asserts nothing about timings. Uses a throwaway cache dir unless --cache-dir is given.
"""

from __future__ import annotations

import argparse
import atexit
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np


def _rss_mb() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024 if sys.platform != "darwin" else kb / 2**20


def _typo(query: str, rng: random.Random) -> str:
    """Swap two adjacent chars or drop one, in one word of >= 4 letters."""
    words = query.split()
    cand = [i for i, w in enumerate(words) if len(w) >= 4] or [0]
    i = rng.choice(cand)
    w = words[i]
    if len(w) >= 2:
        j = rng.randrange(len(w) - 1)
        w = w[:j] + w[j + 1] + w[j] + w[j + 2 :] if rng.random() < 0.5 else w[:j] + w[j + 1 :]
    words[i] = w
    return " ".join(words)


def _lat(fn: Callable[[str], object], queries: list[str]) -> tuple[float, float, float]:
    ts = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        ts.append((time.perf_counter() - t) * 1000)
    ts.sort()
    return statistics.median(ts), ts[min(len(ts) - 1, int(0.95 * len(ts)))], statistics.fmean(ts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20000, help="catalogue size")
    ap.add_argument("--queries", type=int, default=200, help="number of sampled products/queries")
    ap.add_argument("--embedder", default="wordllama", help="'wordllama' or 'st:<name-or-path>'")
    ap.add_argument("--kind", default="auto", choices=["auto", "flat", "ivf"], help="FAISS index kind")
    ap.add_argument("--depth", type=int, default=200, help="retrieval depth")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache-dir", default=None, help="index cache dir (default: a temp dir)")
    args = ap.parse_args(argv)

    from ecom_bench.catalog.embedders import get_embedder
    from ecom_bench.catalog.vector_index import load_or_build_index
    from ecom_bench.catalog.search import SearchEngine, SearchFilters, _Lexical
    from ecom_bench.catalog.synthetic import generate_synthetic_catalog

    rows: list[tuple[str, str]] = []

    def row(name: str, value: str) -> None:
        rows.append((name, value))
        print(f"  {name:<44} {value}", flush=True)

    print(f"bench_search: n={args.n} queries={args.queries} embedder={args.embedder} kind={args.kind}")
    t = time.perf_counter()
    catalog = generate_synthetic_catalog(n_products=args.n, seed=args.seed)
    row("generate catalogue", f"{time.perf_counter() - t:.2f} s ({len(catalog)} products)")
    t = time.perf_counter()
    _ = catalog.fingerprint
    row("catalogue fingerprint", f"{time.perf_counter() - t:.2f} s")

    emb = get_embedder(args.embedder)
    texts = [p.search_text() for p in catalog.products]
    emb.encode(texts[:8])  # model load
    t = time.perf_counter()
    vecs = emb.encode(texts)
    dt = time.perf_counter() - t
    row("embed search texts", f"{dt:.2f} s ({len(texts) / dt:,.0f} texts/s, dim {vecs.shape[1]})")
    del vecs

    cache_dir = Path(args.cache_dir) if args.cache_dir else Path(tempfile.mkdtemp(prefix="bench_search_"))
    if not args.cache_dir:
        atexit.register(shutil.rmtree, cache_dir, True)
    t = time.perf_counter()
    vi = load_or_build_index(catalog, emb, kind=args.kind, cache_dir=cache_dir)
    row(f"index build cold ({vi.kind}, incl. embedding)", f"{time.perf_counter() - t:.2f} s (from_cache={vi.from_cache})")
    if vi.path is not None and vi.path.exists():
        row("index file size", f"{vi.path.stat().st_size / 2**20:.1f} MiB")
    t = time.perf_counter()
    vi2 = load_or_build_index(catalog, emb, kind=args.kind, cache_dir=cache_dir)
    row("index load (cache hit)", f"{(time.perf_counter() - t) * 1000:.0f} ms (from_cache={vi2.from_cache})")
    t = time.perf_counter()
    lex = _Lexical(texts)
    row("BM25 build", f"{time.perf_counter() - t:.2f} s (vocab {len(lex.vocab):,})")

    engine = SearchEngine(catalog, embedder=emb, cache_dir=cache_dir, index_kind=args.kind)
    engine._vindex, engine._lexical = vi2, lex  # reuse what was just timed
    rss_built = _rss_mb()

    rng = random.Random(args.seed + 1)
    sample = rng.sample(catalog.products, min(args.queries, len(catalog)))
    names = [p.title.split(",")[0] for p in sample]
    typos = [_typo(q, rng) for q in names]
    typos2 = [_typo(_typo(q, rng), rng) for q in names]
    generic = [
        f"{p.attributes.get(next(iter(p.attributes), ''), '')} {p.leaf_category}".strip() for p in sample
    ]
    for q in names[:5]:
        engine.search(q)  # warm-up

    d = args.depth
    qv = emb.encode(names)
    p50, p95, _ = _lat(lambda q: emb.encode([q]), names)
    row("query embedding", f"p50 {p50:.2f} ms  p95 {p95:.2f} ms")
    it = iter(range(len(names)))
    p50, p95, _ = _lat(lambda q: vi2.search(qv[next(it)][None, :], d), names)
    row(f"FAISS search only (k={d})", f"p50 {p50:.2f} ms  p95 {p95:.2f} ms")
    p50, p95, _ = _lat(lambda q: lex.top(q, d), names)
    row(f"BM25 only (k={d})", f"p50 {p50:.2f} ms  p95 {p95:.2f} ms")
    p50, p95, _ = _lat(lambda q: engine.search(q, depth=d), names)
    row("hybrid search, names", f"p50 {p50:.2f} ms  p95 {p95:.2f} ms")
    p50, p95, _ = _lat(lambda q: engine.search(q, depth=d), generic)
    row("hybrid search, generic 'attr + category'", f"p50 {p50:.2f} ms  p95 {p95:.2f} ms")
    filt = SearchFilters(max_price=float(np.median(catalog.prices)), min_rating=3.5, max_ship_days=5)
    p50, p95, _ = _lat(lambda q: engine.search(q, filters=filt, depth=d), generic)
    row("hybrid search + 3 filters", f"p50 {p50:.2f} ms  p95 {p95:.2f} ms")
    for bs in (16, 64):
        batch = (generic * (bs // max(1, len(generic)) + 1))[:bs]
        t = time.perf_counter()
        reps = 3
        for _ in range(reps):
            engine.search_batch(batch, depth=d)
        per = (time.perf_counter() - t) * 1000 / (reps * bs)
        row(f"search_batch({bs}) per query", f"{per:.2f} ms")

    # retrieval quality on product short names
    def rank_of(pid: str, q: str) -> int:
        got = [h.product.id for h in engine.search(q, depth=d, limit=10)]
        return got.index(pid) if pid in got else 99

    r_names = [rank_of(p.id, q) for p, q in zip(sample, names, strict=True)]
    r_typos = [rank_of(p.id, q) for p, q in zip(sample, typos, strict=True)]
    r_typos2 = [rank_of(p.id, q) for p, q in zip(sample, typos2, strict=True)]
    dup = sum(1 for q in names if sum(1 for x in catalog.products if x.title.split(",")[0] == q) > 1)
    k = len(sample)
    row("short name -> product in top 1 / 3 / 10", "{:.1%} / {:.1%} / {:.1%}".format(
        *(sum(r < c for r in r_names) / k for c in (1, 3, 10))))
    row("short name + 1 typo -> top 1 / 3 / 10", "{:.1%} / {:.1%} / {:.1%}".format(
        *(sum(r < c for r in r_typos) / k for c in (1, 3, 10))))
    row("short name + 2 typos -> top 1 / 3 / 10", "{:.1%} / {:.1%} / {:.1%}".format(
        *(sum(r < c for r in r_typos2) / k for c in (1, 3, 10))))
    row("sampled short names shared by >1 product", f"{dup}/{k}")
    row("peak RSS (after build / end)", f"{rss_built:.0f} MiB / {_rss_mb():.0f} MiB")

    print()
    w = max(len(n) for n, _ in rows)
    print(f"| {'measure':<{w}} | value |")
    print(f"|{'-' * (w + 2)}|-------|")
    for n, v in rows:
        print(f"| {n:<{w}} | {v} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
