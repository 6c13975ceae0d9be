"""The real-catalogue path at scale: an N-row parquet file in the Amazon
Reviews 2023 metadata / Amazebay schema, read by `load_catalog`.

    python benchmarks/bench_load_parquet.py --n 2000000 [--dir DIR] [--with-index] [--json out.json]

Steps, each in a fresh child process reporting wall time, CPU time (user + sys, all threads:
on a shared machine the CPU time moves much less than the wall time) and its peak RSS (from
`os.wait4`, as `/usr/bin/time -v` reports it):

1. *writer*: N rows derived from the synthetic catalogue (realistic titles, category paths,
   details, variants as listed details) streamed through `pyarrow.parquet.ParquetWriter` in
   row groups of 64k, with ~1% malformed rows (`MALFORMED`); its file size too. Skipped when
   the file exists with N rows (pass --rewrite to redo it).
2. *first load*: `load_catalog(path, cache_dir=..., use_cache=True)` with no cached load:
   every row parsed, then the products written to the memory-mapped cache file; products
   kept and rows skipped.
3. *second load*: the same in another fresh process: the cached file opened (no row read).
4. with --with-index: the full context (`load_context(CatalogSpec(path))`: catalogue, the
   per-catalogue env indexes, vector index, BM25), then one reset per env
   (`new_episode(env, 6, 0, 0, context=ctx)`); an env the catalogue cannot serve is
   reported with its message, not a crash. Then again in another process: the catalogue,
   the vector index and BM25 now load from their caches.

Prints a markdown table (and writes JSON with --json); asserts nothing. `write_amazon_parquet`
is what tests/test_bench_load_parquet.py runs at a tiny N.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROW_GROUP_ROWS = 65_536
_SLICE_ROWS = 8_192
#: One row in MALFORMED_EVERY is malformed, its kind cycling through MALFORMED (so at N rows
#: each kind occurs about N / (MALFORMED_EVERY * 6) times).
MALFORMED_EVERY = 100
#: The malformed rows, as the loader is designed to treat them (tests/test_loaders.py covers
#: each): "title" and "price" rows are skipped, "duplicate" (the previous row's id again)
#: keeps the first, "details" (not JSON) gives no attributes, "rating" (NaN) gives 0.0,
#: "categories" (an empty list) falls back to main_category.
MALFORMED = ("title", "price", "details", "duplicate", "rating", "categories")


def malformed_kind(i: int) -> str | None:
    """The kind of malformation of row i, or None for a well-formed row."""
    if i % MALFORMED_EVERY != MALFORMED_EVERY // 3:
        return None
    return MALFORMED[(i // MALFORMED_EVERY) % len(MALFORMED)]


def amazon_schema() -> Any:
    """The Amazon Reviews 2023 item-metadata columns (as in the hub's parquet export and
    tests/data/amazon_sample.jsonl): lists stay lists, `details` is a JSON string, `price` a
    string ("12.99", "$12.99" or "None"), `bought_together` always null."""
    import pyarrow as pa

    image = pa.struct([("thumb", pa.string()), ("large", pa.string()), ("variant", pa.string()),
                       ("hi_res", pa.string())])
    video = pa.struct([("title", pa.string()), ("url", pa.string()), ("user_id", pa.string())])
    return pa.schema([
        ("main_category", pa.string()),
        ("title", pa.string()),
        ("average_rating", pa.float64()),
        ("rating_number", pa.int64()),
        ("features", pa.list_(pa.string())),
        ("description", pa.list_(pa.string())),
        ("price", pa.string()),
        ("images", pa.list_(image)),
        ("videos", pa.list_(video)),
        ("store", pa.string()),
        ("categories", pa.list_(pa.string())),
        ("details", pa.string()),
        ("parent_asin", pa.string()),
        ("bought_together", pa.string()),
    ])


def _detail_key(attribute: str) -> str:
    """"connector_type" -> "Connector Type" (the loader snake-cases it back)."""
    return " ".join(w.capitalize() for w in attribute.split("_"))


def _rows(table: Any, row0: int) -> dict[str, list[Any]]:
    """One synthetic `PRODUCT_SCHEMA` chunk as Amazon-schema columns (malformed rows included)."""
    cols: dict[str, list[Any]] = {f: [] for f in amazon_schema().names}
    d = table.to_pydict()
    for j in range(table.num_rows):
        i = row0 + j
        kind = malformed_kind(i)
        asin = f"B{i:09d}"
        category = list(d["category"][j])
        details: dict[str, Any] = {"Brand": d["brand"][j]}
        details.update((_detail_key(k), v) for k, v in d["attributes"][j])
        offered: dict[str, list[str]] = {}
        for v in d["variants"][j]:  # a product offered in several values lists them, as Amazon does
            offered.setdefault(_detail_key(v["attribute"]), []).append(v["value"])
        for key, values in offered.items():
            own = details.get(key)
            values = list(dict.fromkeys(([own] if own in values else []) + values))
            if len(values) >= 2:
                details[key] = values
        price = d["price"][j]
        cols["main_category"].append(f"All {category[0]}" if category else None)
        cols["title"].append("" if kind == "title" else d["title"][j])
        cols["average_rating"].append(math.nan if kind == "rating" else d["rating"][j])
        cols["rating_number"].append(d["rating_count"][j])
        cols["features"].append(d["features"][j])
        cols["description"].append([d["description"][j]])
        cols["price"].append("call for price" if kind == "price" else
                             (f"${price:,.2f}" if i % 2 else f"{price:g}"))
        cols["images"].append([{"thumb": f"https://m.media-amazon.com/images/I/{asin}._SS40_.jpg",
                                "large": f"https://m.media-amazon.com/images/I/{asin}.jpg",
                                "variant": "MAIN", "hi_res": None}])
        cols["videos"].append([] if i % 7 else [{"title": "Product video", "url": f"https://v.example/{asin}",
                                                 "user_id": ""}])
        cols["store"].append(d["store"][j])
        cols["categories"].append([] if kind == "categories" else category)
        cols["details"].append("{\"Brand\": " if kind == "details" else json.dumps(details, ensure_ascii=False))
        cols["parent_asin"].append(f"B{i - 1:09d}" if kind == "duplicate" else asin)
        cols["bought_together"].append(None)
    return cols


def write_amazon_parquet(path: str | os.PathLike[str], n: int, seed: int = 0) -> dict[str, int]:
    """Write `n` rows derived from synthetic products `0..n-1` (seed `seed`) to `path`,
    streamed: one 64k-product chunk is in memory at a time. Returns the rows per malformed
    kind (what a loader should skip or default)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ecom_bench.catalog.synthetic import _generate  # the generator's own stream of 64k-row chunks

    schema = amazon_schema()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    counts = {k: 0 for k in MALFORMED}
    row0 = 0
    try:
        with pq.ParquetWriter(tmp, schema, compression="snappy") as writer:
            for chunk in _generate(n, seed):
                # converted a slice at a time, so the Python objects of only one slice exist at once
                parts = []
                for start in range(0, chunk.num_rows, _SLICE_ROWS):
                    cols = _rows(chunk.slice(start, _SLICE_ROWS), row0 + start)
                    parts.append(pa.Table.from_pydict(cols, schema=schema))
                writer.write_table(pa.concat_tables(parts), row_group_size=ROW_GROUP_ROWS)
                row0 += chunk.num_rows
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    for i in range(n):
        kind = malformed_kind(i)
        if kind is not None:
            counts[kind] += 1
    return counts


# ------------------------------------------------------------------ child processes

_CHILD = (Path(__file__).with_name("_child_timing.py").read_text() + r'''
import json, logging, resource, sys, time
what, path = sys.argv[1], sys.argv[2]
if what == "write":
    sys.path.insert(0, sys.argv[4])
    from bench_load_parquet import write_amazon_parquet
    out["malformed_rows"] = step("write", lambda: write_amazon_parquet(path, int(sys.argv[3])))
elif what == "load":
    skipped = {}
    class Skips(logging.Handler):
        def emit(self, record):
            if "skipped rows" in record.msg:
                skipped.update(record.args[1])
    lg = logging.getLogger("ecom_bench.catalog.loaders")
    lg.setLevel(logging.INFO); lg.addHandler(Skips())
    from ecom_bench.catalog.loaders import load_catalog
    cat = step("load", lambda: load_catalog(path, cache_dir=sys.argv[3], use_cache=True))
    out["products"] = len(cat)
    out["skipped"] = skipped
    out["variants"] = int(cat.variant_offsets[-1])
    out["leaf_categories"] = len(set(cat.leaf_categories.tolist()))
else:
    from ecom_bench.envs import ENVIRONMENTS
    from ecom_bench.envs.context import CatalogSpec, load_context
    from ecom_bench.episode import new_episode
    def build():
        ctx = load_context(CatalogSpec(path))
        ctx.search_engine.warm()
        ctx.search_engine.search("wireless charger")
        return ctx
    ctx = step("context", build)
    vi = ctx.search_engine.vector_index
    out["vector_index"] = vi.kind
    out["vector_index_from_cache"] = vi.from_cache
    resets = {}
    for env in ENVIRONMENTS:
        t = time.perf_counter()
        try:
            new_episode(env, 6, 0, 0, context=ctx)
            resets[env] = f"ok {1000 * (time.perf_counter() - t):.0f} ms"
        except Exception as e:  # what a user would see: the message, not the traceback
            resets[env] = f"{type(e).__name__}: {e}"[:200]
    out["reset_d6"] = resets
print("RESULT " + json.dumps(out))
''')


def _run(args: list[str], cache_dir: Path) -> dict[str, Any]:
    """Run one child step; its RESULT figures plus wall time, CPU time and peak RSS (`os.wait4`)."""
    env = {**os.environ, "ECOM_BENCH_CACHE": str(cache_dir)}
    root = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = f"{root}{os.pathsep}{env.get('PYTHONPATH', '')}"
    t = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, *args], env=env, text=True, stdout=out)
        _, status, usage = os.wait4(proc.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if code:
        raise subprocess.CalledProcessError(code, args, text)
    line = next(ln for ln in text.splitlines() if ln.startswith("RESULT "))
    figures: dict[str, Any] = json.loads(line[len("RESULT "):])
    figures.update(process_wall_s=round(time.perf_counter() - t, 2),
                   process_cpu_s=round(usage.ru_utime + usage.ru_stime, 2),
                   peak_rss_mb=round(usage.ru_maxrss / 1024))
    return figures


def _rows_in(path: Path) -> int | None:
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).metadata.num_rows
    except Exception:  # absent or unreadable: write it
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--dir", default=None, help="where the parquet file and caches go (default: a temporary folder)")
    ap.add_argument("--rewrite", action="store_true", help="write the file even if it exists")
    ap.add_argument("--with-index", action="store_true", help="also build the full context and reset every env")
    ap.add_argument("--json", default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench_load_parquet_"))
    base.mkdir(parents=True, exist_ok=True)
    path = base / f"amazebay-{args.n}.parquet"
    cache = base / "cache"
    figures: dict[str, Any] = {"n": args.n, "date": time.strftime("%Y-%m-%d"),
                               "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
                               "load_average_at_start": round(os.getloadavg()[0], 2)}
    steps: dict[str, dict[str, Any]] = {}
    if args.rewrite or _rows_in(path) != args.n:
        steps["writer"] = _run(["write", str(path), str(args.n), str(Path(__file__).resolve().parent)], cache)
        print(json.dumps(steps["writer"]), file=sys.stderr, flush=True)
    figures["file_mb"] = round(path.stat().st_size / 2**20, 1)
    for stale in (cache / "catalog").glob("loaded-*.arrow"):  # the first load parses the file
        stale.unlink()
    for name in ("first_load", "second_load"):
        steps[name] = _run(["load", str(path), str(cache / "hf")], cache)
        print(json.dumps(steps[name]), file=sys.stderr, flush=True)
    if args.with_index:  # built (or loaded, when --dir already holds them), then loaded from the cache
        for name in ("context", "context_again"):
            steps[name] = _run(["context", str(path)], cache)
            print(json.dumps(steps[name]), file=sys.stderr, flush=True)
    figures["steps"] = steps
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    print(f"| {args.n:,}-row Amazon-schema parquet ({figures['file_mb']} MB) | wall s | CPU s | peak RSS MB | notes |")
    print("|---|---|---|---|---|")
    for name, s in steps.items():
        notes = {k: v for k, v in s.items() if k not in ("process_wall_s", "process_cpu_s", "peak_rss_mb")}
        print(f"| {name} | {s['process_wall_s']} | {s['process_cpu_s']} | {s['peak_rss_mb']:,} | {json.dumps(notes)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
