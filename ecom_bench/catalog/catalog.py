"""An in-memory catalogue: products by id plus column arrays for fast filtering."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Iterator
from functools import cached_property
from typing import Any

import numpy as np

from ecom_bench.catalog.models import Product


def fold(text: Any) -> str:
    """How shoppers' words and catalogue values are compared: whitespace collapsed, case folded."""
    return " ".join(str(text).split()).casefold()


class Catalog:
    """Immutable product collection shared by every episode.

    Episodes never mutate it: per-episode stock changes live in the world state.
    The column arrays (`prices`, `ratings`, ...) are aligned with `products` so
    search filters are numpy masks rather than Python loops.
    """

    def __init__(self, products: Iterable[Product], name: str = "catalog") -> None:
        self.products: list[Product] = list(products)
        self.name = name
        self._by_id: dict[str, int] = {}
        for i, p in enumerate(self.products):
            if p.id in self._by_id:
                raise ValueError(f"duplicate product id {p.id!r} in catalogue {name!r}")
            self._by_id[p.id] = i

    def __len__(self) -> int:
        return len(self.products)

    def __iter__(self) -> Iterator[Product]:
        return iter(self.products)

    def __contains__(self, product_id: object) -> bool:
        return product_id in self._by_id

    def get(self, product_id: str) -> Product | None:
        i = self._by_id.get(product_id)
        return None if i is None else self.products[i]

    def index_of(self, product_id: str) -> int | None:
        return self._by_id.get(product_id)

    @cached_property
    def fingerprint(self) -> str:
        """Content hash: the key of on-disk search-index caches."""
        h = hashlib.sha256()
        for p in self.products:
            h.update(p.id.encode())
            h.update(b"\x00")
            h.update(p.search_text().encode())
            h.update(b"\x01")
        return h.hexdigest()[:16]

    @cached_property
    def prices(self) -> np.ndarray:
        return np.array([p.price for p in self.products], dtype=np.float64)

    @cached_property
    def ratings(self) -> np.ndarray:
        return np.array([p.rating for p in self.products], dtype=np.float64)

    @cached_property
    def ship_days(self) -> np.ndarray:
        return np.array([p.ship_days for p in self.products], dtype=np.int64)

    @cached_property
    def leaf_categories(self) -> np.ndarray:
        """Each product's leaf category (object array), for vectorised category tests."""
        return np.array([p.leaf_category for p in self.products], dtype=object)

    @cached_property
    def folded_brands(self) -> np.ndarray:
        """Each product's brand, `fold`ed (object array)."""
        return np.array([fold(p.brand) for p in self.products], dtype=object)

    @cached_property
    def _offers(self) -> dict[str, dict[str, np.ndarray]]:
        rows: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for i, p in enumerate(self.products):
            offered = {(a, fold(v)) for a, v in p.attributes.items()}
            offered.update((v.attribute, fold(v.value)) for v in p.variants)
            for attribute, value in offered:
                rows[attribute][value].append(i)
        return {a: {v: np.array(ix, dtype=np.int64) for v, ix in by.items()} for a, by in rows.items()}

    def offering(self, attribute: str, value: str) -> np.ndarray:
        """Mask of the products that can be bought with `attribute` = `value` (folded): their own
        attribute or one of their variants'. One pass over the catalogue builds every
        attribute's index, so a constraint costs a lookup rather than a walk of the products."""
        mask = np.zeros(len(self.products), dtype=bool)
        mask[self._offers.get(attribute, {}).get(fold(value), np.zeros(0, np.int64))] = True
        return mask

    @cached_property
    def by_leaf_category(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = defaultdict(list)
        for i, p in enumerate(self.products):
            out[p.leaf_category].append(i)
        return dict(out)

    @cached_property
    def categories(self) -> list[str]:
        """Every category path prefix present, e.g. 'Electronics' and 'Electronics > Chargers'."""
        seen: set[str] = set()
        for p in self.products:
            for k in range(1, len(p.category) + 1):
                seen.add(" > ".join(p.category[:k]))
        return sorted(seen)


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
