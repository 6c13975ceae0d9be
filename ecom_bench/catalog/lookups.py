"""Per-catalogue row lookups, built once per catalogue: in-memory numpy arrays aligned with
`Catalog.products` (rows are indices into it).

Not the search index (`catalog/vector_index.py`, FAISS vectors cached on disk): these are
the exact lookups a reset and a search's distractors need. A reset must not walk the
catalogue: at 200k products one Python pass over a leaf category (~2,700 products) costs
milliseconds, and a generator makes several. What does not depend on the episode is
computed here once: each leaf category's rows (also by price), folded-brand rows, a
product's stock before any episode touched it, its rank by id (for "(price, id)" orders).
An episode's own stock changes are applied on top by the world (`world.state.in_stock_mask`).

The lookups are built on first use and kept for the catalogue's lifetime; loading a
catalogue (`envs.context.load_context`) builds them so that no reset pays for it.
Only `Catalog`'s public API is read.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ecom_bench.catalog import Catalog, Product
from ecom_bench.catalog.catalog import fold, split_by_code

_EMPTY = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class CatalogLookups:
    """Episode-independent lookups over one catalogue (rows are indices into `catalog.products`)."""

    leaf_rows: dict[str, np.ndarray]  # leaf category -> its rows, ascending
    #: leaf category -> its rows cheapest first, ties by id (a bundle's choices: sorting a
    #: leaf per episode grew with the catalogue, ~20 ms a reset at 2M)
    leaf_rows_by_price: dict[str, np.ndarray]
    leaf_in_stock: dict[str, int]  # leaf category -> how many of its products are in stock (no episode changes)
    brand_rows: dict[str, np.ndarray]  # folded brand -> its rows, ascending
    base_in_stock: np.ndarray  # World.in_stock(p) with no per-episode stock changes
    has_variants: np.ndarray  # bool per product
    brand_code: np.ndarray  # each product's brand (exact, not folded) as a small integer
    #: variant id -> its product's row, for the variants whose id is not "<product id>-<suffix>"
    #: (the rest are found from their id: a 2M catalogue has ~6M variants, too many for a dict)
    odd_variant_rows: dict[str, int]
    id_rank: np.ndarray  # each product's position in the catalogue sorted by id
    path_code: np.ndarray  # each product's category path, as an index into `paths`
    paths: tuple[tuple[str, ...], ...]
    leaf_top: dict[str, str]  # leaf category -> its top category (of its first product), e.g. return windows

    def variant_owner(self, catalog: Catalog, variant_id: str) -> int | None:
        """The row of the product that has variant `variant_id`, or None."""
        row = catalog.index_of(variant_id.rpartition("-")[0])
        if row is not None and variant_id in catalog.variant_ids_at(row):
            return row
        return self.odd_variant_rows.get(variant_id)

    def leaf(self, category: str) -> np.ndarray:
        return self.leaf_rows.get(category, _EMPTY)

    def leaf_by_price(self, category: str) -> np.ndarray:
        return self.leaf_rows_by_price.get(category, _EMPTY)

    def brand(self, folded_brand: str) -> np.ndarray:
        return self.brand_rows.get(folded_brand, _EMPTY)


def _groups(codes: np.ndarray, names: list[str]) -> dict[str, np.ndarray]:
    """Rows by name (`names[codes[r]]` is row r's; names may repeat), names sorted, rows
    ascending: one stable sort of small integers rather than of 2M strings."""
    unique = sorted(set(names))
    rank = {name: i for i, name in enumerate(unique)}
    keys = np.array([rank[name] for name in names] or [0], dtype=np.int64)[np.asarray(codes, dtype=np.int64)]
    groups = split_by_code(np.argsort(keys, kind="stable"), keys, len(unique))
    return {unique[k]: groups[k] for k in range(len(unique)) if len(groups[k])}


def _id_rank(catalog: Catalog) -> np.ndarray:
    """Each product's position in the catalogue sorted by id (from the catalogue's sorted id index)."""
    n = len(catalog)
    rank = np.empty(n, dtype=np.int64)
    order = catalog.id_order
    rank[order] = np.arange(n)
    return rank


def _by_price(catalog: Catalog, leaf_rows: dict[str, np.ndarray], id_rank: np.ndarray) -> dict[str, np.ndarray]:
    """Each leaf's rows ordered by (price, id): one sort of the whole catalogue by (leaf, price, id)."""
    if not leaf_rows:
        return {}
    leaf_code = np.full(len(catalog), len(leaf_rows), dtype=np.int64)  # a row in no leaf sorts last
    for code, rows in enumerate(leaf_rows.values()):
        leaf_code[rows] = code
    groups = split_by_code(np.lexsort((id_rank, catalog.prices, leaf_code)), leaf_code, len(leaf_rows) + 1)
    return dict(zip(leaf_rows, groups[:-1], strict=True))


def _column(catalog: Catalog, name: str) -> Any:
    col = catalog.table.column(name)
    return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()


def _build(catalog: Catalog) -> CatalogLookups:
    """From the catalogue's Arrow columns: no `Product` is made (at 2M that is most of the cost)."""
    # The catalogue's own column views and attribute-offer index are built on first use too:
    # build them now, with these lookups, rather than inside some episode's reset.
    for column in (catalog.prices, catalog.ratings, catalog.ship_days):
        assert len(column) == len(catalog)
    catalog.offering("", "")
    n = len(catalog)
    offsets = np.asarray(catalog.variant_offsets, dtype=np.int64)
    per_product = offsets[1:] - offsets[:-1]
    has_variants = per_product > 0
    # in stock: any variant with stock when the product has variants, else the product's own stock
    variant_stocked = catalog.variant_stocks > 0
    owners = np.repeat(np.arange(n, dtype=np.int64), per_product)  # each variant's product row
    any_variant = np.zeros(n, dtype=bool)
    any_variant[owners[variant_stocked]] = True
    own_stock = np.asarray(_column(catalog, "stock").to_numpy(zero_copy_only=False)) > 0
    base = np.where(has_variants, any_variant, own_stock)
    variant_ids = _column(catalog, "variants").values.field("id")
    # variants whose id is not "<owner's id>-<suffix>" go in a (usually empty) dict
    heads = pc.replace_substring_regex(variant_ids, r"-[^-]*$", "")
    odd = np.flatnonzero(~np.asarray(pc.fill_null(pc.equal(heads, catalog.ids.take(pa.array(owners))), False)))
    odd_variant_rows = dict(zip(variant_ids.take(pa.array(odd)).to_pylist(), owners[odd].tolist(), strict=True))
    brands = pc.dictionary_encode(_column(catalog, "brand"))
    brand_code = np.asarray(brands.indices, dtype=np.int64)
    leaf_rows = dict(sorted(catalog.leaf_rows.items()))
    id_rank = _id_rank(catalog)
    return CatalogLookups(
        leaf_rows=leaf_rows, leaf_rows_by_price=_by_price(catalog, leaf_rows, id_rank),
        leaf_in_stock={k: int(np.count_nonzero(base[v])) for k, v in leaf_rows.items()},
        brand_rows=_groups(brand_code, [fold(b) for b in brands.dictionary.to_pylist()]) if n else {},
        base_in_stock=base, has_variants=has_variants, brand_code=brand_code, odd_variant_rows=odd_variant_rows,
        id_rank=id_rank, path_code=np.asarray(catalog.category_codes, dtype=np.int64),
        paths=tuple(catalog.category_paths),
        leaf_top={k: _top(catalog.category_paths[int(catalog.category_codes[v[0]])]) for k, v in leaf_rows.items()})


def _top(path: Sequence[str]) -> str:
    """`Product.top_category` of a category path."""
    return path[0] if path else ""


_LOOKUPS: "weakref.WeakKeyDictionary[Catalog, CatalogLookups]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def catalog_lookups(catalog: Catalog) -> CatalogLookups:
    """The catalogue's lookups (built once, thread-safe; dropped with the catalogue)."""
    lookups = _LOOKUPS.get(catalog)
    if lookups is None:
        with _LOCK:
            lookups = _LOOKUPS.get(catalog)
            if lookups is None:
                lookups = _LOOKUPS[catalog] = _build(catalog)
    return lookups


class RowProducts(Sequence[Product]):
    """A read-only sequence of catalogue products by row, built without materialising a list,
    for `random.choice`, which only indexes into its population. (`random.sample` copies a
    population of 21 or fewer whole, making every product: sample positions, then index.)"""

    def __init__(self, catalog: Catalog, rows: np.ndarray) -> None:
        self._products = catalog.products
        self.rows = np.asarray(rows, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> Product: ...

    @overload
    def __getitem__(self, i: slice) -> list[Product]: ...

    def __getitem__(self, i: int | slice) -> Product | list[Product]:
        if isinstance(i, slice):
            return [self._products[r] for r in self.rows[i].tolist()]
        return self._products[int(self.rows[i])]


def rows_of(catalog: Catalog, ids: Iterable[str]) -> np.ndarray:
    """Catalogue rows of `ids` (unknown ids skipped), in order."""
    found = (catalog.index_of(i) for i in ids)
    return np.array([r for r in found if r is not None], dtype=np.int64)


__all__ = ["CatalogLookups", "RowProducts", "catalog_lookups", "rows_of"]
