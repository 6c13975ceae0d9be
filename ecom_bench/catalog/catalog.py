"""The catalogue: an Arrow table of products, with `Product` objects made on access.

A 2M-product catalogue as Python objects takes ~4 KB a product (the dataclass, its
attribute dict, feature tuple and three `Variant`s): ~8 GB. As Arrow columns it takes
~0.5 KB, can be memory-mapped from the on-disk cache (a cached load reads nothing until
a product is touched), and the column views the envs filter on (`prices`, `ratings`,
`leaf_categories`, `offering`, ...) are computed from the columns without one Python
object per product. `catalog[pid]`, `catalog.get(pid)`, `catalog.products[i]` and
iteration still hand out `Product`s: each is built from its row on first access and kept
in a bounded LRU cache (every product stays in it for catalogues up to that size).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from tqdm import tqdm

from ecom_bench.catalog.models import Product, Variant

log = logging.getLogger(__name__)

__all__ = ["PRODUCT_SCHEMA", "Catalog", "CatalogTooSparse", "cache_root", "draws", "fold", "products_to_table",
           "progress", "split_by_code", "table_from_chunks"]


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where built catalogues and search indexes are cached: `cache_dir`, else
    ``$ECOM_BENCH_CACHE``, else ``~/.cache/ecom_bench``."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("ECOM_BENCH_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "ecom_bench"


#: Seconds a wait lasts before its progress bar appears (shorter ones stay silent).
PROGRESS_DELAY_S = 2.0


def progress(total: int, desc: str, unit: str = "it", delay: float = PROGRESS_DELAY_S, show: bool = True) -> tqdm:
    """A progress bar on stderr for a wait that may pass ~2 s (a cold catalogue or index
    build, episode generation); it appears once `delay` seconds have passed and is cleared
    when done."""
    return tqdm(total=total, desc=desc, unit=unit, delay=delay, leave=False, file=sys.stderr,
                dynamic_ncols=True, disable=not show)


@dataclass(frozen=True)
class VariantCodes:
    """Every variant's attribute and folded value as integers, in the catalogue's flat variant order
    (`Catalog.variant_offsets`), so a wanted value is matched by comparing integers."""

    attribute: np.ndarray
    value: np.ndarray
    attribute_code: dict[str, int]
    value_code: dict[str, int]  # folded value -> code


def fold(text: Any) -> str:
    """How shoppers' words and catalogue values are compared: whitespace collapsed, case folded."""
    return " ".join(str(text).split()).casefold()


VARIANT_TYPE = pa.struct(
    [
        ("id", pa.string()),
        ("product_id", pa.string()),
        ("attribute", pa.string()),
        ("value", pa.string()),
        ("price", pa.float64()),
        ("stock", pa.int64()),
    ]
)
#: The columnar layout of a catalogue, one row per product in catalogue order (also the
#: native parquet schema `loaders.save_catalog` writes). `attributes` is a map, so its
#: key order (the order `search_text` joins the values in) survives the round trip.
PRODUCT_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("title", pa.string()),
        ("description", pa.string()),
        ("category", pa.list_(pa.string())),
        ("brand", pa.string()),
        ("attributes", pa.map_(pa.string(), pa.string())),
        ("price", pa.float64()),
        ("rating", pa.float64()),
        ("rating_count", pa.int64()),
        ("ship_days", pa.int64()),
        ("stock", pa.int64()),
        ("features", pa.list_(pa.string())),
        ("store", pa.string()),
        ("variants", pa.list_(VARIANT_TYPE)),
    ]
)

#: Bump when the table layout (`PRODUCT_SCHEMA`) or the cache file format changes: part of
#: the key of cached catalogues.
STORAGE_VERSION = 1

#: Products kept made in a catalogue's cache (~2 KB each): every product of the test and
#: default catalogues, the working set of episodes on a 2M one.
PRODUCT_CACHE_SIZE = 1 << 17
#: Ids up to this long are looked up by binary search over a numpy array, longer by a dict.
_MAX_SORTED_ID_CHARS = 64


def split_by_code(order: np.ndarray, codes: np.ndarray, n_codes: int) -> list[np.ndarray]:
    """`order` (rows sorted by their code, `codes[row]` in 0..n_codes-1) cut into one array
    per code: the rows of each group without a dict of lists."""
    counts = np.bincount(codes, minlength=n_codes)
    return np.split(order, np.cumsum(counts)[:-1])


def table_from_chunks(columns: dict[str, list[pa.Array]]) -> pa.Table:
    """A `PRODUCT_SCHEMA` table of single-chunk columns (what `Catalog` reads without copying)
    from each column's chunks, emptying `columns`. Joined a column at a time, each column's
    chunks freed and their pages handed back as soon as it is joined, the peak is the table
    plus one column, not two tables (1.4 GB each at 2M)."""
    if not any(columns.values()):
        return products_to_table(())
    pool = pa.default_memory_pool()
    joined = []
    for name in PRODUCT_SCHEMA.names:
        joined.append(pa.concat_arrays(columns.pop(name)))
        pool.release_unused()  # the allocator would keep the freed chunks' pages until the end
    return pa.Table.from_arrays(joined, schema=PRODUCT_SCHEMA)


def products_to_table(products: Iterable[Product]) -> pa.Table:
    """Products as a table in `PRODUCT_SCHEMA` (one record batch)."""
    cols: dict[str, list[Any]] = {f: [] for f in PRODUCT_SCHEMA.names}
    v_off = [0]
    vcols: dict[str, list[Any]] = {f.name: [] for f in VARIANT_TYPE}
    for p in products:
        cols["id"].append(p.id)
        cols["title"].append(p.title)
        cols["description"].append(p.description)
        cols["category"].append(list(p.category))
        cols["brand"].append(p.brand)
        cols["attributes"].append(list(p.attributes.items()))
        cols["price"].append(p.price)
        cols["rating"].append(p.rating)
        cols["rating_count"].append(p.rating_count)
        cols["ship_days"].append(p.ship_days)
        cols["stock"].append(p.stock)
        cols["features"].append(list(p.features))
        cols["store"].append(p.store)
        for v in p.variants:
            vcols["id"].append(v.id)
            vcols["product_id"].append(v.product_id)
            vcols["attribute"].append(v.attribute)
            vcols["value"].append(v.value)
            vcols["price"].append(v.price)
            vcols["stock"].append(v.stock)
        v_off.append(len(vcols["id"]))
    return table_from_columns(cols, v_off, vcols)


def table_from_columns(cols: dict[str, list[Any]], v_off: list[int], vcols: dict[str, list[Any]]) -> pa.Table:
    """A `PRODUCT_SCHEMA` table from per-field Python lists, variants given flat (their
    fields in `vcols`, product i's being rows v_off[i]:v_off[i+1]): how the synthetic
    generator and `products_to_table` build tables without one dict per variant."""
    arrays = []
    for f in PRODUCT_SCHEMA:
        if f.name == "variants":
            children = [pa.array(vcols[c.name], type=c.type) for c in VARIANT_TYPE]
            values = pa.StructArray.from_arrays(children, fields=list(VARIANT_TYPE))
            arrays.append(pa.ListArray.from_arrays(pa.array(v_off, pa.int32()), values, type=f.type))
        else:
            arrays.append(pa.array(cols[f.name], type=f.type))
    return pa.Table.from_arrays(arrays, schema=PRODUCT_SCHEMA)


class _Columns:
    """One catalogue's columns as single Arrow arrays and numpy views, for fast row access."""

    def __init__(self, table: pa.Table) -> None:
        def arr(name: str) -> pa.Array:
            col = table.column(name)
            return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()

        self.n = table.num_rows
        self.id, self.title, self.description = arr("id"), arr("title"), arr("description")
        self.brand, self.store = arr("brand"), arr("store")
        self.category, self.features = arr("category"), arr("features")
        self.price = arr("price").to_numpy(zero_copy_only=False)
        self.rating = arr("rating").to_numpy(zero_copy_only=False)
        self.rating_count = arr("rating_count").to_numpy(zero_copy_only=False)
        self.ship_days = arr("ship_days").to_numpy(zero_copy_only=False)
        self.stock = arr("stock").to_numpy(zero_copy_only=False)
        attrs = arr("attributes")
        self.attr_off = np.asarray(attrs.offsets)
        self.attr_keys, self.attr_values = attrs.keys, attrs.items
        variants = arr("variants")
        self.var_off = np.asarray(variants.offsets)
        vs = variants.values
        self.v_id, self.v_pid = vs.field("id"), vs.field("product_id")
        self.v_attr, self.v_value = vs.field("attribute"), vs.field("value")
        self.v_price = vs.field("price").to_numpy(zero_copy_only=False)
        self.v_stock = vs.field("stock").to_numpy(zero_copy_only=False)
        self.cat_off = np.asarray(self.category.offsets)
        self.feat_off = np.asarray(self.features.offsets)

    def product(self, i: int) -> Product:
        a, b = int(self.attr_off[i]), int(self.attr_off[i + 1])
        va, vb = int(self.var_off[i]), int(self.var_off[i + 1])
        ca, cb = int(self.cat_off[i]), int(self.cat_off[i + 1])
        fa, fb = int(self.feat_off[i]), int(self.feat_off[i + 1])
        vs = zip(self.v_id[va:vb].to_pylist(), self.v_pid[va:vb].to_pylist(), self.v_attr[va:vb].to_pylist(),
                 self.v_value[va:vb].to_pylist(), self.v_price[va:vb].tolist(), self.v_stock[va:vb].tolist(),
                 strict=True)
        return Product(
            id=self.id[i].as_py(),
            title=self.title[i].as_py(),
            description=self.description[i].as_py(),
            category=tuple(self.category.values[ca:cb].to_pylist()),
            brand=self.brand[i].as_py(),
            attributes=dict(zip(self.attr_keys[a:b].to_pylist(), self.attr_values[a:b].to_pylist(), strict=True)),
            price=float(self.price[i]),
            rating=float(self.rating[i]),
            rating_count=int(self.rating_count[i]),
            ship_days=int(self.ship_days[i]),
            stock=int(self.stock[i]),
            features=tuple(self.features.values[fa:fb].to_pylist()),
            store=self.store[i].as_py(),
            variants=tuple(Variant(*v) for v in vs),
        )


def _row_of_id(index: tuple[np.ndarray, np.ndarray] | dict[str, int], width: int, product_id: str) -> int | None:
    """The row of `product_id` in a catalogue's id index (`Catalog._id_index`, ids at most
    `width` long), or None."""
    if isinstance(index, dict):
        return index.get(product_id)
    ids_sorted, order = index
    if len(product_id) > width:
        # longer than every id (a variant id "P0000006-v1" is asked for all the time): no
        # match, and searchsorted would first widen the whole sorted array to fit it
        return None
    j = int(np.searchsorted(ids_sorted, product_id))
    if j < len(ids_sorted) and ids_sorted[j] == product_id:
        return int(order[j])
    return None


def _maker(cols: _Columns, objects: list[Product] | None) -> Callable[[int], Product]:
    """Row -> Product for a catalogue's cache. A function of the columns, not a bound method:
    the cache holding the catalogue would be a reference cycle, and a dropped catalogue (the
    1.4 GB heap table a 2M build writes to its cache file) would live until the cyclic GC ran."""
    if objects is not None:
        return objects.__getitem__
    return cols.product


class _ProductView(Sequence[Product]):
    """`catalog.products`: a read-only sequence that makes each `Product` when indexed."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog

    def __len__(self) -> int:
        return len(self._catalog)

    @overload
    def __getitem__(self, i: int) -> Product: ...
    @overload
    def __getitem__(self, i: slice) -> list[Product]: ...
    def __getitem__(self, i: int | slice) -> Product | list[Product]:
        if isinstance(i, slice):
            return [self._catalog._product(j) for j in range(*i.indices(len(self)))]
        n = len(self)
        j = int(i)  # numpy integers index too
        if j < 0:
            j += n
        if not 0 <= j < n:
            raise IndexError(f"product index {i} out of range for {n} products")
        return self._catalog._product(j)

    def __iter__(self) -> Iterator[Product]:
        return (self._catalog._product(j) for j in range(len(self)))

    def __eq__(self, other: object) -> bool:
        """Equal to another catalogue's products, or a list or tuple of products, item by item."""
        if isinstance(other, _ProductView):
            if len(other) != len(self):
                return False
            if other._catalog.table.equals(self._catalog.table):
                return True
        elif not isinstance(other, (list, tuple)) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable-looking sequence semantics, like a list

    def __repr__(self) -> str:
        return f"<{len(self)} products of catalogue {self._catalog.name!r}>"


class Catalog:
    """Immutable product collection shared by every episode.

    Episodes never mutate it: per-episode stock changes live in the world state.
    Stored as an Arrow table (`table`, `PRODUCT_SCHEMA`); `products` is a sequence of
    `Product`s made on access, and the column arrays (`prices`, `ratings`, ...) are
    aligned with it so search filters and task generators use numpy masks rather than
    Python loops. `Catalog(products)` keeps the given objects; `Catalog.from_table` and
    `Catalog.open` (a memory-mapped cache file) hold no product objects up front.
    """

    def __init__(self, products: Iterable[Product] = (), name: str = "catalog", *,
                 table: pa.Table | None = None) -> None:
        objects: list[Product] | None = None
        if table is None:
            objects = list(products)
            table = products_to_table(objects)
        elif not table.schema.equals(PRODUCT_SCHEMA):
            table = table.select(PRODUCT_SCHEMA.names).cast(PRODUCT_SCHEMA)
        self.table: pa.Table = table
        self.name = name
        self._cols = _Columns(table)
        self._product = functools.lru_cache(maxsize=PRODUCT_CACHE_SIZE)(_maker(self._cols, objects))
        self._ids = self._id_index()
        # A binary search over numpy unicode costs ~12 µs a call (the str is converted each
        # time) and order histories look up the same few hundred ids thousands of times.
        self._row_of = functools.lru_cache(maxsize=PRODUCT_CACHE_SIZE)(functools.partial(_row_of_id, self._ids, self.id_width))

    @classmethod
    def from_table(cls, table: pa.Table, name: str = "catalog") -> Catalog:
        """A catalogue over an Arrow table in `PRODUCT_SCHEMA` (no Product objects made)."""
        return cls(name=name, table=table)

    # -- storage ------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the table as an uncompressed Arrow IPC file (atomic replace), for `open`."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        table = self.table.combine_chunks().replace_schema_metadata(
            {"ecom_bench.catalog_name": self.name, "ecom_bench.fingerprint": self.fingerprint})
        try:
            with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table, max_chunksize=max(1, table.num_rows))
            os.replace(tmp, path)
        finally:
            if tmp.exists():
                tmp.unlink()
        return path

    def mapped_from(self, path: str | os.PathLike[str], what: str = "catalogue") -> Catalog:
        """This catalogue written to the cache file `path` and opened from it memory-mapped (the
        in-memory table is freed), or itself, with a warning, when the file cannot be written."""
        cat = self
        try:
            self.save(path)
            cat = Catalog.open(path, name=self.name)
        except OSError as e:
            log.warning("could not write %s cache %s (%s); continuing uncached", what, path, e)
        pa.default_memory_pool().release_unused()  # its pages back to the system, not kept by the allocator
        return cat

    @classmethod
    def open(cls, path: str | os.PathLike[str], name: str | None = None) -> Catalog:
        """A catalogue over a file `save` wrote, memory-mapped: pages are read when touched."""
        with pa.memory_map(str(path), "r") as source:
            table = pa.ipc.open_file(source).read_all()
        meta = table.schema.metadata or {}
        stored = meta.get(b"ecom_bench.catalog_name", b"catalog").decode()
        cat = cls.from_table(table.replace_schema_metadata(None), name=name or stored)
        if b"ecom_bench.fingerprint" in meta:  # computed when saved: a 2M catalogue need not rehash
            cat.__dict__["fingerprint"] = meta[b"ecom_bench.fingerprint"].decode()
        return cat

    # -- products -------------------------------------------------------------------
    @cached_property
    def products(self) -> _ProductView:
        """Every product in catalogue order (a sequence; each made when first indexed)."""
        return _ProductView(self)

    def __len__(self) -> int:
        return self._cols.n

    def __iter__(self) -> Iterator[Product]:
        return iter(self.products)

    def __contains__(self, product_id: object) -> bool:
        return isinstance(product_id, str) and self.index_of(product_id) is not None

    def __getitem__(self, product_id: str) -> Product:
        p = self.get(product_id)
        if p is None:
            raise KeyError(product_id)
        return p

    def get(self, product_id: str) -> Product | None:
        i = self.index_of(product_id)
        return None if i is None else self._product(i)

    def _id_index(self) -> tuple[np.ndarray, np.ndarray] | dict[str, int]:
        """Ids sorted (numpy unicode) with their rows: a lookup is a binary search, and 2M ids
        take ~40 MB instead of a ~250 MB dict. A dict when some id is long (a numpy unicode
        array is as wide as its longest string)."""
        ids = self._cols.id.to_numpy(zero_copy_only=False)
        lengths = pc.utf8_length(self._cols.id)
        if len(self) and pc.max(lengths).as_py() > _MAX_SORTED_ID_CHARS:
            by_id: dict[str, int] = {}
            for i, pid in enumerate(ids.tolist()):
                if by_id.setdefault(pid, i) != i:
                    raise ValueError(f"duplicate product id {pid!r} in catalogue {self.name!r}")
            return by_id
        ids_u = ids.astype(str) if len(self) else np.zeros(0, "U1")
        order = np.argsort(ids_u, kind="stable")
        ids_sorted = ids_u[order]
        dup = np.flatnonzero(ids_sorted[1:] == ids_sorted[:-1])
        if dup.size:
            raise ValueError(f"duplicate product id {str(ids_sorted[dup[0]])!r} in catalogue {self.name!r}")
        return ids_sorted, order

    @cached_property
    def id_order(self) -> np.ndarray:
        """The rows in order of their ids (what sorting by id gives: int64)."""
        index = self._ids
        if isinstance(index, dict):
            return np.argsort(np.asarray(self.ids.to_pylist(), dtype=object), kind="stable").astype(np.int64)
        return np.asarray(index[1], dtype=np.int64)

    @cached_property
    def id_width(self) -> int:
        """The length of the longest product id: a longer string is no product's id."""
        index = self._ids
        if isinstance(index, dict):
            return max(map(len, index), default=0)
        return index[0].dtype.itemsize // 4

    def index_of(self, product_id: str) -> int | None:
        if not isinstance(product_id, str):
            return None
        return self._row_of(product_id)

    # -- derived columns --------------------------------------------------------------
    @cached_property
    def ids(self) -> pa.Array:
        """Each product's id (an Arrow string array)."""
        return self._cols.id

    def search_texts(self) -> pa.Array:
        """Each product's `Product.search_text()`, computed over the columns (Arrow strings)."""
        paths = pa.array([" > ".join(p) for p in self.category_paths], pa.string())
        c = self._cols
        values = pa.ListArray.from_arrays(pa.array(c.attr_off, pa.int32()), c.attr_values)
        attrs = pc.fill_null(pc.binary_join(values, " "), "")
        return pc.binary_join_element_wise(c.title, c.brand, paths.take(pa.array(self.category_codes)), attrs, ". ")

    @cached_property
    def fingerprint(self) -> str:
        """Content hash: the key of on-disk search-index caches (sha256 over each product's id
        and search text, computed on whole columns)."""
        h = hashlib.sha256()
        texts = self.search_texts()
        step = 1 << 16
        for s in range(0, len(self), step):
            e = min(len(self), s + step)
            ended = pc.binary_join_element_wise(texts[s:e], "", "\x01")  # text \1
            joined = pc.binary_join_element_wise(self.ids[s:e], ended, "\x00")  # id \0 text \1
            bufs = joined.buffers()
            offsets = np.frombuffer(bufs[1], np.int32)[joined.offset:joined.offset + len(joined) + 1]
            h.update(memoryview(bufs[2])[int(offsets[0]):int(offsets[-1])])
        return h.hexdigest()[:16]

    @cached_property
    def prices(self) -> np.ndarray:
        return np.ascontiguousarray(self._cols.price, dtype=np.float64)

    @cached_property
    def ratings(self) -> np.ndarray:
        return np.ascontiguousarray(self._cols.rating, dtype=np.float64)

    @cached_property
    def ship_days(self) -> np.ndarray:
        return np.ascontiguousarray(self._cols.ship_days, dtype=np.int64)

    @cached_property
    def _category_encoding(self) -> tuple[np.ndarray, list[tuple[str, ...]]]:
        joined = pc.binary_join(self.table.column("category"), "\x1f")
        enc = pc.dictionary_encode(joined).combine_chunks() if len(self) else None
        if enc is None:
            return np.zeros(0, np.int32), []
        codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int32)
        paths = [tuple(s.split("\x1f")) if s else () for s in enc.dictionary.to_pylist()]
        return codes, paths

    @property
    def category_codes(self) -> np.ndarray:
        """Each product's index into `category_paths` (int32)."""
        return self._category_encoding[0]

    @property
    def category_paths(self) -> list[tuple[str, ...]]:
        """The distinct category paths, in order of first appearance."""
        return self._category_encoding[1]

    def id_at(self, row: int) -> str:
        """Row `row`'s product id, without making its Product."""
        return self._cols.id[row].as_py()

    def title_at(self, row: int) -> str:
        """Row `row`'s title, without making its Product (an order listing names ~100 products)."""
        return self._cols.title[row].as_py()

    # A product's variants without making the Product (order lines of a history, ~100 a reset):
    # row r's variants are positions variant_offsets[r]:variant_offsets[r + 1] of these columns.
    @property
    def variant_offsets(self) -> np.ndarray:
        return self._cols.var_off

    @property
    def variant_prices(self) -> np.ndarray:
        return self._cols.v_price

    @property
    def variant_stocks(self) -> np.ndarray:
        return self._cols.v_stock

    @cached_property
    def variant_codes(self) -> VariantCodes:
        """Every variant's attribute and folded value as integers, aligned with `variant_prices`
        (built once from the Arrow columns: each distinct value is folded once, no `Product` made)."""
        attributes = pc.dictionary_encode(self._cols.v_attr)
        values = pc.dictionary_encode(self._cols.v_value)
        folded = [fold(v) for v in values.dictionary.to_pylist()]
        value_code = {v: i for i, v in enumerate(dict.fromkeys(folded))}
        code_of_entry = np.array([value_code[v] for v in folded] or [0], dtype=np.int32)
        return VariantCodes(
            attribute=np.asarray(attributes.indices.to_numpy(zero_copy_only=False), dtype=np.int32),
            value=code_of_entry[np.asarray(values.indices.to_numpy(zero_copy_only=False), dtype=np.int64)],
            attribute_code={a: i for i, a in enumerate(attributes.dictionary.to_pylist())},
            value_code=value_code)

    def variants_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The variants of the products at `rows`, flattened in order: (each one's index into
        `rows`, its position in the variant columns `variant_prices` / `variant_stocks`)."""
        offsets = np.asarray(self._cols.var_off, dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        starts, counts = offsets[rows], offsets[rows + 1] - offsets[rows]
        owner = np.repeat(np.arange(len(rows)), counts)
        return owner, np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(starts - (np.cumsum(counts) - counts), counts)

    def variant_ids_at(self, row: int) -> list[str]:
        """Row `row`'s variant ids, in catalogue order."""
        a, b = int(self._cols.var_off[row]), int(self._cols.var_off[row + 1])
        return self._cols.v_id[a:b].to_pylist() if b > a else []

    def variant_value_at(self, row: int, variant_id: str) -> str | None:
        """The value ("Black") of row `row`'s variant `variant_id`, or None if it has no such variant."""
        ids = self.variant_ids_at(row)
        if variant_id not in ids:
            return None
        return self._cols.v_value[int(self._cols.var_off[row]) + ids.index(variant_id)].as_py()

    @cached_property
    def leaf_categories(self) -> np.ndarray:
        """Each product's leaf category (object array), for vectorised category tests."""
        leaves = np.array([p[-1] if p else "" for p in self.category_paths] or [""], dtype=object)
        return leaves[self.category_codes]

    @cached_property
    def folded_brands(self) -> np.ndarray:
        """Each product's brand, `fold`ed (object array)."""
        return _folded(self.table.column("brand"))

    @cached_property
    def _offers(self) -> dict[str, dict[str, np.ndarray]]:
        """attribute -> folded value -> rows (ascending) that can be bought with it: one
        vectorised pass over the attribute and variant columns."""
        c = self._cols
        rows = [np.repeat(np.arange(len(self), dtype=np.int64), np.diff(c.attr_off)),
                np.repeat(np.arange(len(self), dtype=np.int64), np.diff(c.var_off))]
        keys = pa.chunked_array([c.attr_keys, c.v_attr], pa.string()).combine_chunks()
        values = pa.chunked_array([c.attr_values, c.v_value], pa.string()).combine_chunks()
        row = np.concatenate(rows)
        if row.size == 0:
            return {}
        kenc, venc = pc.dictionary_encode(keys), pc.dictionary_encode(values)
        key_names = kenc.dictionary.to_pylist()
        folded = [fold(v) for v in venc.dictionary.to_pylist()]
        fold_names = list(dict.fromkeys(folded))
        fold_code = np.array(_codes(folded, fold_names), dtype=np.int64)
        kc = np.asarray(kenc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        vc = fold_code[np.asarray(venc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)]
        n, nv = len(self), len(fold_names)
        # sorted by key, value, then row, and deduplicated (a sort, not np.unique: numpy 2's
        # hash-based unique took 8 of a 2M catalogue's 20 s load)
        combined = np.sort((kc * nv + vc) * n + row)
        combined = combined[np.r_[True, combined[1:] != combined[:-1]]]
        pair, r = combined // n, combined % n
        cuts = np.flatnonzero(np.diff(pair)) + 1
        out: dict[str, dict[str, np.ndarray]] = {}
        for ps, rs in zip(np.split(pair, cuts), np.split(r, cuts), strict=True):
            k, v = divmod(int(ps[0]), nv)
            out.setdefault(key_names[k], {})[fold_names[v]] = rs
        return out

    def offering(self, attribute: str, value: str) -> np.ndarray:
        """Mask of the products that can be bought with `attribute` = `value` (folded): their own
        attribute or one of their variants'. One pass over the catalogue builds every
        attribute's index, so a constraint costs a lookup rather than a walk of the products."""
        mask = np.zeros(len(self), dtype=bool)
        mask[self._offers.get(attribute, {}).get(fold(value), np.zeros(0, np.int64))] = True
        return mask

    def offering_any(self, value: str) -> np.ndarray:
        """`offering` for `value` along any attribute: the products that can be bought with it
        (a shopper's "USB-C" or "Black", whatever the attribute is called)."""
        mask = np.zeros(len(self), dtype=bool)
        folded = fold(value)
        for values in self._offers.values():
            rows = values.get(folded)
            if rows is not None:
                mask[rows] = True
        return mask

    @cached_property
    def leaf_rows(self) -> dict[str, np.ndarray]:
        """Leaf category -> its products' rows (ascending int64), keys in order of first
        appearance: `by_leaf_category` as arrays."""
        leaves = [p[-1] if p else "" for p in self.category_paths]
        leaf_names = list(dict.fromkeys(leaves))
        leaf_of_code = np.array(_codes(leaves, leaf_names), dtype=np.int64)
        per_row = leaf_of_code[self.category_codes] if len(self) else np.zeros(0, np.int64)
        groups = split_by_code(np.argsort(per_row, kind="stable"), per_row, len(leaf_names))
        first = [int(g[0]) for g in groups]
        return {leaf_names[k]: groups[k] for k in sorted(range(len(leaf_names)), key=first.__getitem__)}

    @cached_property
    def by_leaf_category(self) -> dict[str, list[int]]:
        return {leaf: rows.tolist() for leaf, rows in self.leaf_rows.items()}

    @cached_property
    def categories(self) -> list[str]:
        """Every category path prefix present, e.g. 'Electronics' and 'Electronics > Chargers'."""
        seen: set[str] = set()
        for path in self.category_paths:
            for k in range(1, len(path) + 1):
                seen.add(" > ".join(path[:k]))
        return sorted(seen)


def _codes(values: Sequence[str], names: Sequence[str]) -> list[int]:
    where = {v: k for k, v in enumerate(names)}
    return [where[v] for v in values]


def _folded(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """`fold` of each string of a column, folding each distinct value once (object array)."""
    enc = pc.dictionary_encode(column)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks() if enc.num_chunks else pa.DictionaryArray.from_arrays(
            pa.array([], pa.int32()), pa.array([], pa.string()))
    names = np.array([fold(v) for v in enc.dictionary.to_pylist()] or [""], dtype=object)
    return names[np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)]


#: Random draws a task generator makes before concluding the catalogue lacks what it needs.
MAX_DRAWS = 20_000


class CatalogTooSparse(ValueError):
    """The catalogue lacks what a task generator needs (too few products, categories or variants)."""

    @classmethod
    def lacking(cls, catalog: Catalog, need: str, detail: str = "") -> "CatalogTooSparse":
        return cls(f"catalogue {catalog.name!r} ({len(catalog)} products) has no {need}{detail}")


def draws(catalog: Catalog, need: str, limit: int = MAX_DRAWS) -> Iterator[int]:
    """Bounded rejection sampling: ``for _ in draws(catalog, "what"): ... break`` instead of ``while True``.

    A generator that keeps drawing until a product fits would hang on a catalogue that has
    no such product (a tiny or uniform one); after `limit` draws this names what is missing.
    """
    yield from range(limit)
    raise CatalogTooSparse.lacking(catalog, need, f" (none in {limit} random draws): use a larger or more "
                                                  "varied catalogue")
