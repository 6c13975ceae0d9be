"""Load catalogues from local files or the Hugging Face hub; save them as parquet.

`load_catalog(source)` accepts

* a local ``.parquet`` / ``.jsonl`` / ``.json`` file, or a directory of them (parquet
  preferred when a directory holds both; searched recursively, sorted by path);
* a hub dataset id such as ``"owlgebra-ai/Amazebay-catalog-2M"``, passed to
  ``datasets.load_dataset`` (which honours ``HF_HUB_OFFLINE`` / ``HF_DATASETS_OFFLINE``:
  offline, only an already-cached copy loads).

Columns are read through Arrow in record batches (never ``list(ds[col])``, which is
~70x slower in datasets 5.x).

Schemas
-------
*Native*: a file written by `save_catalog` (exactly its 14 columns) is restored
exactly, including products without variants.

*Other* (Amazon-like) schemas are mapped tolerantly, the first present column winning
(names compared case-insensitively):

=============  ===========================================================  ==============================
field          columns                                                      when missing / malformed
=============  ===========================================================  ==============================
id             id, parent_asin, asin, product_id, item_id, sku               ``row-<n>`` (row number)
title          title, name, product_name, product_title                     row skipped
description    description, desc, product_description (str or list)         ""
category       category_path, categories, category, main_category            ("Uncategorized",)
brand          brand, manufacturer; else details["brand"]; else store        ""
store          store, seller, manufacturer                                  ""
price          price, final_price, sale_price, list_price ("$12.99" or num)  row skipped (`missing_price`)
rating         average_rating, rating, avg_rating, stars                     0.0 (clipped to [0, 5])
rating_count   rating_number, rating_count, num_ratings, review_count        0
features       features, feature, bullet_points (list or str)                ()
attributes     attributes, details, specs, specifications (dict/JSON str)    {}
ship_days      ship_days, shipping_days, delivery_days                       1-7, hashed from the id
stock          stock, quantity, inventory, stock_quantity                    5-200, hashed from the id
variants       variants (list of dicts or JSON string)                       `variants_from_details(...)`
=============  ===========================================================  ==============================

Category values may be a list, a list of lists (Amazon 2014: the first non-empty
path), an ``"A > B"`` string (also ``|`` or ``/`` separated; or a JSON list string).
``categories`` (the path) wins over ``main_category`` (a store-front label such as
"All Electronics"), which is used only when no path is given. Attribute keys of
non-native schemas are normalised to snake_case (``"Connector Type"`` →
``connector_type``), values to strings; a detail given as a list (``"Size": ["S", "M"]``)
lists the values the product is offered in: its first value is the attribute, and the
product's variants are those values (`variants_from_details`; a product whose details list
nothing has one variant, its own stated value, never an invented one). Duplicate ids keep
the first row. docs/catalogue.md has this table for users.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from ecom_bench.catalog.catalog import PRODUCT_SCHEMA, Catalog, cache_root, products_to_table, table_from_chunks
from ecom_bench.catalog.models import Product, Variant

__all__ = ["LOADER_VERSION", "NATIVE_COLUMNS", "load_catalog", "loaded_cache_path", "save_catalog"]

log = logging.getLogger(__name__)

NATIVE_COLUMNS = (
    "id",
    "title",
    "description",
    "category",
    "brand",
    "attributes",
    "price",
    "rating",
    "rating_count",
    "ship_days",
    "stock",
    "features",
    "store",
    "variants",
)

_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "parent_asin", "asin", "product_id", "item_id", "sku"),
    "title": ("title", "name", "product_name", "product_title"),
    "description": ("description", "desc", "product_description"),
    "category_path": ("category_path", "categories", "category"),
    "main_category": ("main_category",),
    "brand": ("brand", "manufacturer"),
    "store": ("store", "seller", "manufacturer"),
    "price": ("price", "final_price", "sale_price", "list_price"),
    "rating": ("average_rating", "rating", "avg_rating", "stars"),
    "rating_count": ("rating_number", "rating_count", "num_ratings", "review_count", "ratings_count"),
    "features": ("features", "feature", "bullet_points"),
    "attributes": ("attributes", "details", "specs", "specifications"),
    "ship_days": ("ship_days", "shipping_days", "delivery_days"),
    "stock": ("stock", "quantity", "inventory", "stock_quantity"),
    "variants": ("variants",),
}

_LOCAL_SUFFIXES = {".parquet": "parquet", ".jsonl": "json", ".json": "json"}
_HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")  # owner/name
#: Rows per record batch. A batch's Python objects (its column lists, Products, variants) are
#: what the load holds besides the growing table: ~4 KB a row, ~280 MB at 65,536 rows and
#: ~70 MB at 16,384, read no slower.
_BATCH_ROWS = 16_384
_SHIP_DAYS_CHOICES = (1, 2, 2, 3, 3, 3, 4, 5, 5, 7)
_UNCATEGORIZED = ("Uncategorized",)

# ------------------------------------------------------------------ value parsing


def _h(product_id: str, salt: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{salt}:{product_id}".encode(), digest_size=8).digest(), "big")


def default_ship_days(product_id: str) -> int:
    """Deterministic shipping days (1-7, mostly 2-3) for records that lack them."""
    return _SHIP_DAYS_CHOICES[_h(product_id, "ship_days") % len(_SHIP_DAYS_CHOICES)]


def default_stock(product_id: str) -> int:
    """Deterministic in-stock quantity (5-200) for records that lack one."""
    return 5 + _h(product_id, "stock") % 196


_MISSING_STRINGS = frozenset(("", "none", "null", "nan", "n/a"))


def _is_missing(v: Any) -> bool:
    if v is None:
        return True
    t = type(v)
    if t is str:
        return len(v) < 12 and v.strip().lower() in _MISSING_STRINGS
    if t is float:
        return v != v  # NaN
    return False


_NUM_RE = re.compile(r"\d+(?:\.\d+)?")


def parse_price(v: Any) -> float | None:
    """12.99, "$12.99", "1,299.00", "$10 - $20" (first figure) → float; else None."""
    if _is_missing(v) or isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        x = float(v)
    else:
        m = _NUM_RE.search(str(v).replace(",", ""))
        if m is None:
            return None
        x = float(m.group(0))
    if not math.isfinite(x) or x < 0:
        return None
    return x


def _to_float(v: Any, default: float) -> float:
    if _is_missing(v) or isinstance(v, bool):
        return default
    try:
        x = float(str(v).replace(",", "")) if isinstance(v, str) else float(v)
    except (TypeError, ValueError):
        return default
    return x if math.isfinite(x) else default


def _to_int(v: Any, default: int) -> int:
    x = _to_float(v, math.nan)
    return default if math.isnan(x) else int(x)


def _maybe_json(v: Any) -> Any:
    if type(v) is str and v[:1] in ("[", "{", " "):
        s = v.strip()
        if s[:1] in ("[", "{"):
            try:
                return json.loads(s)
            except ValueError:
                return v
    return v


def _text(v: Any) -> str:
    if type(v) is str and v[:1] not in ("[", "{", " "):
        return "" if _is_missing(v) else v.strip()
    v = _maybe_json(v)
    if _is_missing(v):
        return ""
    if isinstance(v, (list, tuple)):
        return " ".join(t for t in (_text(x) for x in v) if t)
    return str(v).strip()


def _str_list(v: Any) -> tuple[str, ...]:
    v = _maybe_json(v)
    if _is_missing(v):
        return ()
    if isinstance(v, (list, tuple)):
        return tuple(s for s in (_text(x) for x in v) if s)
    s = str(v).strip()
    return (s,) if s else ()


def _category(v: Any) -> tuple[str, ...]:
    v = _maybe_json(v)
    if _is_missing(v):
        return ()
    if isinstance(v, (list, tuple)):
        if v and all(isinstance(x, (list, tuple)) for x in v if x is not None):
            for inner in v:  # list of paths (Amazon 2014): the first non-empty one
                path = _category(inner)
                if path:
                    return path
            return ()
        return tuple(s for s in (str(x).strip() for x in v if not _is_missing(x)) if s)
    s = str(v)
    for sep in (">", "|", "/"):
        if sep in s:
            return tuple(p.strip() for p in s.split(sep) if p.strip())
    return (s.strip(),) if s.strip() else ()


@functools.lru_cache(maxsize=65_536)
def _snake(key: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", str(key).strip().lower()).strip("_")


def _attr_value(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return ", ".join(_attr_value(x) for x in v if not _is_missing(x))
    if isinstance(v, dict):
        return json.dumps(v, sort_keys=True, ensure_ascii=False)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip()


def _options(val: Any) -> tuple[str, ...]:
    """The distinct values of a listed detail (["S", "M", "L"]); () unless it lists two or more."""
    if not isinstance(val, (list, tuple)) or any(isinstance(x, (dict, list, tuple)) for x in val):
        return ()
    out = tuple(dict.fromkeys(s for s in (_attr_value(x) for x in val if not _is_missing(x)) if s))
    return out if len(out) >= 2 else ()


def _attributes(v: Any, *, normalise_keys: bool,
                options: dict[str, tuple[str, ...]] | None = None) -> dict[str, str]:
    """The details as {key: value}. With `options`, a detail listing several values (a JSON
    list: "Size": ["S", "M", "L"]) is recorded there, and its first value is the attribute."""
    v = _maybe_json(v)
    if _is_missing(v) or not isinstance(v, Mapping):
        if isinstance(v, list):  # [{"name": .., "value": ..}] or [(k, v)]
            out: dict[str, Any] = {}
            for item in v:
                if isinstance(item, Mapping) and "name" in item and "value" in item:
                    out[str(item["name"])] = item["value"]
                elif isinstance(item, (list, tuple)) and len(item) == 2:
                    out[str(item[0])] = item[1]
            v = out
        else:
            return {}
    attrs: dict[str, str] = {}
    for k, val in v.items():
        if _is_missing(val):
            continue
        key = _snake(k) if normalise_keys else str(k)
        listed = _options(val) if options is not None else ()
        sval = listed[0] if listed else _attr_value(val)
        if key and sval and key not in attrs:
            attrs[key] = sval
            if listed and options is not None:
                options[key] = listed
    return attrs


def _variants(v: Any, product_id: str) -> tuple[Variant, ...]:
    v = _maybe_json(v)
    if _is_missing(v) or not isinstance(v, (list, tuple)):
        return ()
    out = []
    for j, item in enumerate(v):
        if not isinstance(item, Mapping):
            continue
        out.append(
            Variant(
                id=str(item.get("id") or f"{product_id}-v{j}"),
                product_id=str(item.get("product_id") or product_id),
                attribute=str(item.get("attribute") or ""),
                value=str(item.get("value") or ""),
                price=_to_float(item.get("price"), 0.0),
                stock=_to_int(item.get("stock"), 0),
            )
        )
    return tuple(out)


# ------------------------------------------------------------------ row mapping


def _pick(columns: Sequence[str], field: str) -> str | None:
    lower = {c.lower(): c for c in reversed(list(columns))}  # first spelling wins
    for alias in _ALIASES[field]:
        if alias in lower:
            return lower[alias]
    return None


def _synth() -> Callable[..., tuple[Variant, ...]]:
    from ecom_bench.catalog.variants import variants_from_details

    return variants_from_details


class _Mapper:
    """Turns columnar record batches into Products (native or tolerant mapping)."""

    def __init__(self, columns: Sequence[str], missing_price: str | float) -> None:
        self.native = set(NATIVE_COLUMNS) <= set(columns) and len(set(columns)) == len(NATIVE_COLUMNS)
        self.missing_price = missing_price
        self.cols: dict[str, str | None]  # field -> the column that holds it (None: no such column)
        if self.native:
            self.cols = {f: f for f in NATIVE_COLUMNS}
        else:
            self.cols = {f: _pick(columns, f) for f in _ALIASES}
            if self.cols["title"] is None:
                raise ValueError(
                    f"no title column found (tried {', '.join(_ALIASES['title'])}); columns: {list(columns)}"
                )
        self._synthesize: Callable[..., tuple[Variant, ...]] | None = None
        self.skipped: dict[str, int] = {"title": 0, "price": 0, "duplicate": 0}

    @property
    def needed(self) -> list[str]:
        return sorted({c for c in self.cols.values() if c is not None})

    def products(self, batch: dict[str, list[Any]], n: int, row0: int) -> Iterator[Product]:
        def col(field: str) -> list[Any]:
            name = self.cols.get(field)
            return batch[name] if name is not None else [None] * n

        if self.native:
            yield from self._native(batch, n)
            return
        ids, titles, descs = col("id"), col("title"), col("description")
        cats, mains, brands, stores = col("category_path"), col("main_category"), col("brand"), col("store")
        prices, ratings, counts = col("price"), col("rating"), col("rating_count")
        feats, attrs, ships, stocks, variants = (
            col("features"),
            col("attributes"),
            col("ship_days"),
            col("stock"),
            col("variants"),
        )
        for r in range(n):
            title = _text(titles[r])
            if not title:
                self.skipped["title"] += 1
                continue
            price = parse_price(prices[r])
            if price is None:
                if self.missing_price == "skip":
                    self.skipped["price"] += 1
                    continue
                price = float(self.missing_price)
            pid = "" if _is_missing(ids[r]) else str(ids[r]).strip()
            pid = pid or f"row-{row0 + r}"
            category = _category(cats[r]) or _category(mains[r]) or _UNCATEGORIZED
            options: dict[str, tuple[str, ...]] = {}
            attributes = _attributes(attrs[r], normalise_keys=True, options=options)
            brand = _text(brands[r]) or attributes.get("brand", "") or _text(stores[r])
            store = _text(stores[r])
            stock = _to_int(stocks[r], -1)
            stock = stock if stock >= 0 else default_stock(pid)
            ship = _to_int(ships[r], 0)
            ship = ship if ship >= 1 else default_ship_days(pid)
            vs = _variants(variants[r], pid)
            if not vs:
                if self._synthesize is None:
                    self._synthesize = _synth()
                vs = tuple(self._synthesize(pid, category, attributes, price, stock, options))
            yield Product(
                id=pid,
                title=title,
                description=_text(descs[r]),
                category=category,
                brand=brand,
                attributes=attributes,
                price=price,
                rating=min(5.0, max(0.0, _to_float(ratings[r], 0.0))),
                rating_count=max(0, _to_int(counts[r], 0)),
                ship_days=ship,
                stock=stock,
                features=_str_list(feats[r]),
                store=store,
                variants=vs,
            )

    @staticmethod
    def _native(b: dict[str, list[Any]], n: int) -> Iterator[Product]:
        for r in range(n):
            pid = str(b["id"][r])
            attrs = b["attributes"][r]
            attrs = json.loads(attrs) if isinstance(attrs, str) else dict(attrs or {})
            yield Product(
                id=pid,
                title=b["title"][r] or "",
                description=b["description"][r] or "",
                category=tuple(b["category"][r] or ()),
                brand=b["brand"][r] or "",
                attributes={str(k): str(v) for k, v in attrs.items()},
                price=float(b["price"][r]),
                rating=float(b["rating"][r]),
                rating_count=int(b["rating_count"][r]),
                ship_days=int(b["ship_days"][r]),
                stock=int(b["stock"][r]),
                features=tuple(b["features"][r] or ()),
                store=b["store"][r] or "",
                variants=tuple(Variant(**v) for v in (b["variants"][r] or ())),
            )


# ------------------------------------------------------------------ sources


def _looks_local(source: str | Path) -> bool:
    """Whether a missing `source` was meant as a local path (else: a hub "owner/name")."""
    if isinstance(source, Path):
        return True
    s = str(source)
    return (
        s.startswith(("/", ".", "~", "\\"))
        or Path(s).suffix.lower() in _LOCAL_SUFFIXES
        or _HUB_ID_RE.match(s) is None
        or Path(s).expanduser().parent.is_dir()  # "mydata/products" with a folder mydata here: a mistyped path
    )


def _local_files(path: Path) -> tuple[str, list[str]]:
    if path.is_file():
        builder = _LOCAL_SUFFIXES.get(path.suffix.lower())
        if builder is None:
            raise ValueError(f"unsupported catalogue file type {path.suffix!r} ({path}); use .parquet/.jsonl/.json")
        return builder, [str(path)]
    for suffixes, builder in (((".parquet",), "parquet"), ((".jsonl", ".json"), "json")):
        files = sorted(
            str(p)
            for p in path.rglob("*")
            if p.is_file() and p.suffix.lower() in suffixes and not p.name.startswith(".")
        )
        if files:
            return builder, files
    raise FileNotFoundError(f"no .parquet, .jsonl or .json files under {path}")


def _load_dataset(source: str | Path, split: str, cache_dir: str | os.PathLike[str] | None) -> Any:
    from datasets import load_dataset
    from datasets.exceptions import DatasetGenerationError
    from pyarrow import ArrowException

    kw: dict[str, Any] = {}
    if cache_dir is not None:
        kw["cache_dir"] = str(cache_dir)
    path = Path(source).expanduser()
    if path.exists():
        builder, files = _local_files(path)
        empty = ValueError(f"catalogue {path} is empty: no products to read")
        if all(os.path.getsize(f) == 0 for f in files):  # datasets fails on these with a bare StopIteration
            raise empty
        try:
            return load_dataset(builder, data_files={split: files}, split=split, **kw)
        except (DatasetGenerationError, ArrowException) as e:  # unparseable JSON, not parquet, mixed schemas
            cause = e.__cause__ or e
            raise ValueError(f"could not read catalogue {path}: {type(cause).__name__}: {cause}") from e
        except ValueError as e:  # after ArrowInvalid, which is a ValueError too
            if "corresponds to no data" in str(e):  # blank lines only
                raise empty from e
            raise
    if _looks_local(source):
        raise FileNotFoundError(f"catalogue source not found: {path}")
    try:
        return load_dataset(str(source), split=split, **kw)
    except FileNotFoundError as e:  # datasets' DatasetNotFoundError is one
        raise FileNotFoundError(
            f"catalogue source {str(source)!r} is neither a local path nor a loadable hub dataset: {e}"
        ) from e


def _batches(ds: Any, columns: list[str]) -> Iterator[tuple[dict[str, list[Any]], int, int]]:
    """Column lists per record batch, via Arrow (datasets' indices mapping honoured)."""
    n = len(ds)
    arrow = ds.select_columns(columns).with_format("arrow")
    for start in range(0, n, _BATCH_ROWS):
        table = arrow[start : min(n, start + _BATCH_ROWS)]
        yield {c: table.column(c).to_pylist() for c in columns}, table.num_rows, start


#: Bump when the mapping from a file's rows to products changes: cached loads (`use_cache`)
#: made by an older mapping are then ignored.
LOADER_VERSION = 1


def loaded_cache_path(source: str | Path, *, limit: int | None, missing_price: str | float,
                      cache_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """Where `load_catalog(..., use_cache=True)` keeps a local source's products (None for a
    hub dataset id): named after every file's path, size and modification time, the options
    and LOADER_VERSION, so an edited file or a changed option is loaded afresh."""
    local = Path(source).expanduser()
    if not local.exists():
        return None
    stats = [(str(Path(f).resolve()), os.stat(f)) for f in sorted(_local_files(local)[1])]
    key = json.dumps([LOADER_VERSION, limit, missing_price, [(f, st.st_size, st.st_mtime_ns) for f, st in stats]])
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_root(cache_dir) / "catalog" / f"loaded-{local.stem}-{digest}.arrow"


def load_catalog(
    source: str | Path,
    *,
    split: str = "train",
    limit: int | None = None,
    name: str | None = None,
    missing_price: str | float = "skip",
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = False,
) -> Catalog:
    """Load a catalogue from local parquet/JSON(L) files or a hub dataset.

    `limit` caps the number of products kept (rows skipped for a missing title or
    price do not count). `missing_price` is ``"skip"`` (drop the row, the default:
    price constraints must be verifiable) or a float to use instead. `cache_dir` is
    passed to `datasets.load_dataset` (its Arrow cache); `name` names the Catalog
    (default: the file/directory stem or the dataset id). With `use_cache`, a local
    source's products are kept as a memory-mapped Arrow file (`loaded_cache_path`, in
    the index cache) and a later process opens that instead of reading every row again
    (a 2M-row parquet: ~145 s of parsing).
    """
    if limit is not None and (isinstance(limit, bool) or limit < 0):
        raise ValueError(f"limit must be >= 0 or None, got {limit!r}")
    if not (missing_price == "skip" or isinstance(missing_price, (int, float))):
        raise ValueError(f"missing_price must be 'skip' or a number, got {missing_price!r}")
    cached = loaded_cache_path(source, limit=limit, missing_price=missing_price) if use_cache else None
    if cached is not None and cached.exists():
        try:
            return Catalog.open(cached, name=name or _default_name(source))
        except (OSError, ValueError, pa.ArrowException) as e:
            log.warning("catalogue cache %s is unreadable (%s); loading %s again", cached, e, source)
    catalog = _load(source, split=split, limit=limit, name=name, missing_price=missing_price, cache_dir=cache_dir)
    return catalog.mapped_from(cached) if cached is not None else catalog


def _default_name(source: str | Path) -> str:
    p = Path(str(source))
    return p.stem if (isinstance(source, Path) or Path(source).expanduser().exists()) else str(source)


def _load(source: str | Path, *, split: str, limit: int | None, name: str | None, missing_price: str | float,
          cache_dir: str | os.PathLike[str] | None) -> Catalog:
    local = Path(source).expanduser()
    parquet = _local_files(local)[1] if local.exists() and _local_files(local)[0] == "parquet" else None
    if parquet is not None:  # read in record batches straight from the files (no Arrow cache copy)
        ds = None
        columns, total_rows = _parquet_columns(parquet)
        mapper = _Mapper(columns, missing_price)
        batches = _parquet_batches(parquet, mapper.needed)
    else:
        ds = _load_dataset(source, split, cache_dir)
        mapper = _Mapper(list(ds.column_names), missing_price)
        total_rows = len(ds)
        batches = _batches(ds, mapper.needed)
    # Products exist one record batch at a time: each batch becomes Arrow columns at once,
    # so a 2M-row file never holds 2M Product objects.
    tables: list[Any] = []
    kept = 0
    seen: set[str] = set()
    done = limit == 0
    if not done:
        for batch, n, row0 in batches:
            chunk: list[Product] = []
            for p in mapper.products(batch, n, row0):
                if p.id in seen:
                    mapper.skipped["duplicate"] += 1
                    continue
                seen.add(p.id)
                chunk.append(p)
                if limit is not None and kept + len(chunk) >= limit:
                    done = True
                    break
            if chunk:
                tables.append(products_to_table(chunk))
                kept += len(chunk)
            if done:
                break
    skipped = {k: v for k, v in mapper.skipped.items() if v}
    if skipped:
        log.info("load_catalog(%s): skipped rows %s", source, skipped)
    if not kept and limit != 0:
        raise ValueError(f"catalogue {source} has no usable products: {total_rows} rows, skipped {skipped or 'none'} "
                         "(every product needs a title and a price)")
    chunks = {column: [c for t in tables for c in t.column(column).chunks] for column in PRODUCT_SCHEMA.names}
    tables.clear()  # the batches' tables: their chunks are freed column by column as they are joined
    return Catalog.from_table(table_from_chunks(chunks), name=name or _default_name(source))


def _parquet_columns(files: list[str]) -> tuple[list[str], int]:
    """The column names of the first file (its schema decides the mapping) and the total rows."""
    import pyarrow.parquet as pq
    from pyarrow import ArrowException

    try:
        metas = [pq.ParquetFile(f) for f in files]
    except (ArrowException, OSError) as e:
        raise ValueError(f"could not read catalogue {files[0]}: {type(e).__name__}: {e}") from e
    return list(metas[0].schema_arrow.names), sum(m.metadata.num_rows for m in metas)


def _parquet_batches(files: list[str], columns: list[str]) -> Iterator[tuple[dict[str, list[Any]], int, int]]:
    """Column lists per record batch of each parquet file in turn (`pyarrow.parquet.iter_batches`);
    a column a later file lacks reads as missing values."""
    import pyarrow.parquet as pq
    from pyarrow import ArrowException

    row0 = 0
    for f in files:
        try:
            pf = pq.ParquetFile(f)
            have = [c for c in columns if c in pf.schema_arrow.names]
            for rb in pf.iter_batches(batch_size=_BATCH_ROWS, columns=have):
                n = rb.num_rows
                batch = {c: (rb.column(c).to_pylist() if c in have else [None] * n) for c in columns}
                yield batch, n, row0
                row0 += n
        except ArrowException as e:
            raise ValueError(f"could not read catalogue {f}: {type(e).__name__}: {e}") from e


def save_catalog(catalog: Catalog, path: str | Path) -> Path:
    """Write `catalog` as one parquet file in the native schema (atomic replace).

    `load_catalog(path)` restores it exactly (same products, order, variants).
    Attributes are stored as JSON strings (keys differ across products).
    """
    import pyarrow.parquet as pq

    path = Path(path).expanduser()
    if path.suffix.lower() != ".parquet":
        raise ValueError(f"save_catalog writes parquet; use a .parquet path, got {path}")
    # The catalogue's own columns (`PRODUCT_SCHEMA`), with the attributes map as JSON text: no
    # Product is made, and the field list lives once, in catalog.py.
    table = catalog.table.combine_chunks()
    column = table.schema.get_field_index("attributes")
    attributes = [json.dumps(dict(items), ensure_ascii=False) for items in table.column(column).to_pylist()]
    table = (table.set_column(column, pa.field("attributes", pa.string()), pa.array(attributes, pa.string()))
             .replace_schema_metadata({"ecom_bench.catalog_name": catalog.name}))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path
