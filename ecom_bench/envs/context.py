"""Loading the shared, read-only resources of all episodes in a process: catalogue + search.

Building the catalogue and its FAISS index is the expensive part of start-up, so a
context (`EnvContext`) is built once per (catalogue spec, embedder spec) and shared by
every episode (and every concurrent Inspect sample); episodes never mutate it.
"""

from __future__ import annotations

import gc
import threading
from dataclasses import dataclass
from pathlib import Path

from ecom_bench.catalog import Catalog
from ecom_bench.catalog.lookups import CatalogLookups, catalog_lookups
from ecom_bench.catalog.naming import product_noun
from ecom_bench.envs import ENVIRONMENTS, get_env
from ecom_bench.envs.base import EnvContext

DEFAULT_CATALOG = "synthetic"
DEFAULT_CATALOG_SIZE = 20_000
DEFAULT_EMBEDDER = "wordllama"
#: The smallest catalogue_size accepted: every env was checked to generate tasks its oracle
#: solves at this size (1,200 episodes: 5 catalogue seeds x d 0-15). At 100 products some
#: E_JOURNEY sub-tasks compete for the same few items; at 10-50 E_SUB finds no substitutes.
MIN_CATALOG_SIZE = 500


@dataclass(frozen=True)
class CatalogSpec:
    """Where the catalogue comes from: 'synthetic' (seeded) or a local path / dataset name."""

    source: str = DEFAULT_CATALOG
    size: int | None = None  # synthetic: DEFAULT_CATALOG_SIZE; a loaded catalogue: all rows
    seed: int = 0

    def __post_init__(self) -> None:
        # One key per catalogue: a synthetic spec without a size is the default-size one.
        if self.source == DEFAULT_CATALOG and self.size is None:
            object.__setattr__(self, "size", DEFAULT_CATALOG_SIZE)

    def validate(self) -> "CatalogSpec":
        if not isinstance(self.source, str) or not self.source.strip():
            # an empty source would make `datasets` load whatever the working directory holds
            raise ValueError("catalog must be 'synthetic' or a local file, folder or dataset id, "
                             f"got {self.source!r}")
        if self.size is not None and (not isinstance(self.size, int) or isinstance(self.size, bool)
                                      or self.size < MIN_CATALOG_SIZE):
            raise ValueError(f"catalog_size must be an integer >= {MIN_CATALOG_SIZE}, got {self.size!r}")
        if self.source != DEFAULT_CATALOG:
            p = Path(self.source).expanduser()
            looks_like_path = p.suffix or self.source.startswith((".", "/", "~")) or p.exists()
            if looks_like_path and not p.exists():
                raise ValueError(f"catalog path does not exist: {self.source!r}")
        return self


_CONTEXTS: dict[tuple[CatalogSpec, str], EnvContext] = {}
_LOCK = threading.Lock()


def load_context(spec: CatalogSpec | None = None, embedder: str = DEFAULT_EMBEDDER) -> EnvContext:
    """The process-wide context for this catalogue and embedder (built on first use)."""
    spec = (spec or CatalogSpec()).validate()
    key = (spec, embedder)
    with _LOCK:
        ctx = _CONTEXTS.get(key)
        if ctx is None:
            from ecom_bench.catalog.embedders import get_embedder
            from ecom_bench.catalog.search import SearchEngine

            emb = get_embedder(embedder)
            try:
                _ = emb.dim  # loads a sentence-transformers model now: a missing one fails before any sample
            except OSError as e:  # Hugging Face's "not found / not cached" errors do not name the model
                raise ValueError(f"embedder {embedder!r} could not be loaded: {e}") from e
            if spec.source == DEFAULT_CATALOG:
                from ecom_bench.catalog.synthetic import generate_synthetic_catalog

                # cached on disk (memory-mapped Arrow): a later process loads it instead of regenerating
                catalog = generate_synthetic_catalog(spec.size or DEFAULT_CATALOG_SIZE, spec.seed, use_cache=True)
            else:
                from ecom_bench.catalog.loaders import load_catalog

                # its products cached on disk too (memory-mapped Arrow, keyed by the files' size and mtime)
                catalog = load_catalog(spec.source, limit=spec.size, use_cache=True)
            prepare(catalog)  # the catalogue's lookups and the env modules now, not in the first reset
            ctx = EnvContext(catalog, SearchEngine(catalog, emb))
            _CONTEXTS[key] = ctx
            # What was just loaded lives as long as the process: keep the cyclic GC from walking
            # it on every full collection (40-150 ms pauses that landed inside resets).
            gc.collect()
            gc.freeze()
        return ctx


def prepare(catalog: Catalog) -> CatalogLookups:
    """Load now what the first reset would otherwise load: the catalogue's lookups, every
    environment's modules and the naming engine (imports and the inflect engine are ~50-150 ms
    each, once per process). `load_context` calls it; it is cheap when already done."""
    lookups = catalog_lookups(catalog)
    for name in ENVIRONMENTS:
        get_env(name)
    if len(catalog):
        product_noun(catalog.products[0]).a("thing")
    return lookups
