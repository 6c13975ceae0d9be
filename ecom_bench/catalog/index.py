"""FAISS vector index over a catalogue, cached on disk.

One row per product (in catalogue order), vectors = ``embedder.encode(p.search_text())``,
inner-product metric on L2-normalised vectors (= cosine).

Cache file: ``<cache_dir>/<catalog.fingerprint>-<embedder slug>-<kind>.faiss``, where the
cache dir is the argument, else ``$ECOM_BENCH_CACHE``, else ``~/.cache/ecom_bench``.
Writes are atomic (temporary file + ``os.replace``), so concurrent builders never leave
a torn file. A cache file that cannot be read, or whose size, dimension, index type or
spot-checked vectors do not match (or, for a flat index, any of whose vectors is not unit
length: a damaged byte), is rebuilt with a logged warning.

Kinds: ``"flat"`` (exact ``IndexFlatIP``; the default for N ≤ 200k) and ``"ivf"``
(IVF-Flat, nlist ≈ 4·√N, nprobe 32; the default above). ``"auto"`` picks by size.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import faiss
import numpy as np
from tqdm import tqdm

from ecom_bench.catalog.embedders import Embedder, embedder_slug

if TYPE_CHECKING:
    from ecom_bench.catalog.catalog import Catalog

__all__ = [
    "FLAT_MAX_N",
    "IVF_NPROBE",
    "IndexKind",
    "VectorIndex",
    "build_index",
    "build_index_from_texts",
    "configure_faiss",
    "default_cache_dir",
    "index_cache_path",
    "load_or_build_index",
    "resolve_kind",
]

log = logging.getLogger(__name__)

IndexKind = Literal["auto", "flat", "ivf"]
FLAT_MAX_N = 200_000
IVF_NPROBE = 32
_IVF_TRAIN_PER_LIST = 50  # faiss warns below 39 training points per centroid
_SPOT_CHECKS = 3
_NORM_CHECK_CHUNK = 16_384  # rows per chunk when a flat cache file's vectors are checked on load
_FLAT_NUMPY_MAX_NQ = 16  # below this many queries, flat search uses numpy (see VectorIndex.search)

_faiss_configured = False
_faiss_lock = threading.Lock()


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # honours container CPU limits
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def configure_faiss() -> None:
    """Process-wide FAISS settings, applied once.

    faiss 1.15's default ``distance_compute_blas_threshold`` (128000) keeps batched flat
    search off BLAS, about 9x slower; 16 routes batches of >= 16 queries through BLAS.
    """
    global _faiss_configured
    if _faiss_configured:
        return
    with _faiss_lock:
        if not _faiss_configured:
            faiss.omp_set_num_threads(_cpu_count())
            faiss.cvar.distance_compute_blas_threshold = 16
            _faiss_configured = True


def default_cache_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("ECOM_BENCH_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "ecom_bench"


def resolve_kind(kind: str, n: int) -> Literal["flat", "ivf"]:
    k = (kind or "auto").lower()
    if k == "auto":
        return "flat" if n <= FLAT_MAX_N else "ivf"
    if k in ("flat", "ivf"):
        return k  # type: ignore[return-value]
    raise ValueError(f"unknown index kind {kind!r}: expected 'auto', 'flat' or 'ivf'")


def index_cache_path(
    catalog: Catalog, embedder: Embedder, kind: str, cache_dir: str | os.PathLike[str] | None = None
) -> Path:
    k = resolve_kind(kind, len(catalog))
    return default_cache_dir(cache_dir) / f"{catalog.fingerprint}-{embedder_slug(embedder.name)}-{k}.faiss"


def _nlist_for(n: int) -> int:
    nlist = int(round(4 * math.sqrt(max(n, 1))))
    # keep at least ~39 training points per list
    return max(1, min(nlist, n // 39 if n >= 39 else 1))


def _new_index(d: int, n: int, kind: Literal["flat", "ivf"], seed: int) -> faiss.Index:
    if kind == "flat" or n == 0:
        return faiss.IndexFlatIP(d)
    nlist = _nlist_for(n)
    quantizer = faiss.IndexFlatIP(d)
    ivf = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.cp.seed = seed
    ivf.cp.niter = 10
    ivf.cp.max_points_per_centroid = _IVF_TRAIN_PER_LIST
    return ivf


def _train_rows(n: int, nlist: int, seed: int) -> np.ndarray:
    n_train = min(n, nlist * _IVF_TRAIN_PER_LIST)
    if n_train >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=n_train, replace=False))


def _finish(index: faiss.Index) -> faiss.Index:
    if isinstance(index, faiss.IndexIVF):
        index.nprobe = min(IVF_NPROBE, index.nlist)
        index.make_direct_map()
    return index


def build_index(vectors: np.ndarray, kind: str = "auto", *, seed: int = 1234) -> faiss.Index:
    """A FAISS inner-product index over `vectors` (float32, (n, d), normalised)."""
    configure_faiss()
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"vectors must be 2-d, got shape {x.shape}")
    n, d = x.shape
    index = _new_index(d, n, resolve_kind(kind, n), seed)
    if isinstance(index, faiss.IndexIVF):
        index.train(x[_train_rows(n, index.nlist, seed)])
    if n:
        index.add(x)
    return _finish(index)


def build_index_from_texts(
    texts: list[str],
    embedder: Embedder,
    kind: str = "auto",
    *,
    batch_size: int = 256,
    chunk: int = 65_536,
    seed: int = 1234,
) -> faiss.Index:
    """Embed `texts` chunk by chunk straight into a new index (peak memory ≈ the index,
    not index + a full copy of the vectors). IVF is trained on a sample first."""
    configure_faiss()
    n, d = len(texts), int(embedder.dim)

    def enc(batch: list[str]) -> np.ndarray:
        v = embedder.encode(batch, batch_size=batch_size)
        if v.shape != (len(batch), d):
            raise RuntimeError(f"embedder {embedder.name!r} returned shape {v.shape}, expected {(len(batch), d)}")
        return np.ascontiguousarray(v, dtype=np.float32)

    index = _new_index(d, n, resolve_kind(kind, n), seed)
    # shown at once: one chunk (up to 65,536 products) is a single step, so a delayed bar
    # would first appear when the build is over
    with progress(total=n, desc=f"Embedding {n:,} products for the search index (cached afterwards)",
                  unit="product", delay=0.0) as bar:
        if isinstance(index, faiss.IndexIVF):
            rows = _train_rows(n, index.nlist, seed)
            index.train(enc([texts[i] for i in rows]))
        for s in range(0, n, chunk):
            index.add(enc(texts[s : s + chunk]))
            bar.update(min(chunk, n - s))
    return _finish(index)


#: Seconds a wait lasts before its progress bar appears (shorter ones stay silent).
PROGRESS_DELAY_S = 2.0


def progress(total: int, desc: str, unit: str = "it", delay: float = PROGRESS_DELAY_S) -> tqdm:
    """A progress bar on stderr for a wait that may pass ~2 s (a cold index build, episode
    generation); it appears once `delay` seconds have passed and is cleared when done."""
    return tqdm(total=total, desc=desc, unit=unit, delay=delay, leave=False, file=sys.stderr,
                dynamic_ncols=True)


def _write_atomic(index: faiss.Index, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        faiss.write_index(index, str(tmp))
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            try:
                tmp.unlink()
            except OSError:  # pragma: no cover
                pass


def _reconstruct(index: faiss.Index, i: int) -> np.ndarray:
    return np.asarray(index.reconstruct(int(i)), dtype=np.float32)


@dataclass
class VectorIndex:
    """A loaded FAISS index plus where it came from."""

    index: faiss.Index
    kind: Literal["flat", "ivf"]
    path: Path | None
    from_cache: bool
    _xb: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)

    @property
    def dim(self) -> int:
        return int(self.index.d)

    def _flat_view(self) -> np.ndarray | None:
        """Zero-copy (n, d) view of a flat index's vectors (None for other kinds)."""
        if not isinstance(self.index, faiss.IndexFlat) or self.ntotal == 0:
            return None
        xb = self._xb
        if xb is None or xb.shape[0] != self.ntotal:
            xb = faiss.rev_swig_ptr(self.index.get_xb(), self.ntotal * self.dim).reshape(self.ntotal, self.dim)
            self._xb = xb
        return xb

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids), each (nq, k'); k' = min(k, ntotal). Ties ordered by id.

        A few queries against a flat index go through numpy (one matrix-vector product
        over FAISS's own storage: about 2x faster than FAISS's non-BLAS path); batches
        and IVF go through FAISS. Both are exact for flat; scores agree to float rounding.
        """
        q = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        k = max(0, min(int(k), self.ntotal))
        if k == 0:
            return np.zeros((q.shape[0], 0), np.float32), np.zeros((q.shape[0], 0), np.int64)
        xb = self._flat_view() if q.shape[0] < _FLAT_NUMPY_MAX_NQ else None
        if xb is not None:
            all_scores = q @ xb.T  # (nq, n)
            out_s = np.empty((q.shape[0], k), np.float32)
            out_i = np.empty((q.shape[0], k), np.int64)
            for r in range(q.shape[0]):
                row = all_scores[r]
                top = np.argpartition(-row, k - 1)[:k] if k < row.size else np.arange(row.size)
                top = top[np.lexsort((top, -row[top]))]
                out_s[r], out_i[r] = row[top], top
            return out_s, out_i
        scores, ids = self.index.search(q, k)
        # deterministic tie order: by score desc, then catalogue index asc; -1 (IVF misses) last
        for r in range(q.shape[0]):
            valid = ids[r] >= 0
            s = np.where(valid, scores[r], -np.inf)
            order = np.lexsort((np.where(valid, ids[r], np.iinfo(np.int64).max), -s))
            scores[r], ids[r] = scores[r][order], ids[r][order]
        return scores, ids

    def vector(self, i: int) -> np.ndarray:
        return _reconstruct(self.index, i)

    def vectors(self, rows: Sequence[int]) -> np.ndarray:
        """(len(rows), d) copies of the rows' vectors: one gather from a flat index's storage."""
        xb = self._flat_view()
        if xb is not None:
            return xb[np.asarray(rows, dtype=np.int64)]
        return np.stack([self.vector(i) for i in rows]) if len(rows) else np.zeros((0, self.dim), np.float32)


def _validate(index: faiss.Index, kind: str, catalog: Catalog, embedder: Embedder) -> str | None:
    """None if `index` fits this catalogue and embedder, else the reason it does not."""
    n = len(catalog)
    if int(index.ntotal) != n:
        return f"ntotal {index.ntotal} != catalogue size {n}"
    if int(index.d) != int(embedder.dim):
        return f"dim {index.d} != embedder dim {embedder.dim}"
    want = faiss.IndexFlatIP if kind == "flat" else faiss.IndexIVF
    if not isinstance(index, want):
        return f"index type {type(index).__name__} is not {kind}"
    if index.metric_type != faiss.METRIC_INNER_PRODUCT:
        return "index metric is not inner product"
    if n == 0:
        return None
    # spot-check a few vectors against the embedder (catches a model that changed
    # under the same name, or a file written for other texts)
    picks = sorted({0, n // 2, n - 1})[:_SPOT_CHECKS]
    texts = [catalog.products[i].search_text() for i in picks]
    fresh = embedder.encode(texts)
    if isinstance(index, faiss.IndexIVF):
        index.make_direct_map()
    for j, i in enumerate(picks):
        stored = _reconstruct(index, i)
        if not np.all(np.isfinite(stored)) or float(np.max(np.abs(stored - fresh[j]))) > 1e-3:
            return f"stored vector {i} does not match the embedder"
    if isinstance(index, faiss.IndexFlat):
        # every stored row is unit-length (or zero, for a blank text): a damaged byte between
        # the spot checks shows up as NaN or a wrong norm. Chunked: bounded extra memory.
        for start in range(0, n, _NORM_CHECK_CHUNK):
            rows = index.reconstruct_n(start, min(_NORM_CHECK_CHUNK, n - start))
            norms = np.linalg.norm(rows, axis=1)
            bad = ~(np.isfinite(norms) & ((np.abs(norms - 1.0) < 1e-3) | (norms < 1e-6)))
            if bad.any():
                return f"stored vector {start + int(np.flatnonzero(bad)[0])} is damaged (not unit length)"
    return None


def load_or_build_index(
    catalog: Catalog,
    embedder: Embedder,
    *,
    kind: IndexKind | str = "auto",
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    batch_size: int = 256,
) -> VectorIndex:
    """Load the cached index for (catalogue, embedder, kind), or build and cache it."""
    configure_faiss()
    k = resolve_kind(kind, len(catalog))
    path = index_cache_path(catalog, embedder, k, cache_dir) if use_cache else None
    if path is not None and path.exists():
        try:
            index = faiss.read_index(str(path))
        except Exception as e:  # noqa: BLE001 - any unreadable file is rebuilt
            log.warning("search index cache %s is unreadable (%s); rebuilding", path, e)
        else:
            try:
                reason = _validate(index, k, catalog, embedder)
            except Exception as e:  # noqa: BLE001 - e.g. an index that cannot reconstruct
                reason = f"validation failed: {e}"
            if reason is None:
                if isinstance(index, faiss.IndexIVF):
                    index.nprobe = min(IVF_NPROBE, index.nlist)
                return VectorIndex(index, k, path, from_cache=True)
            log.warning("search index cache %s is stale (%s); rebuilding", path, reason)
    index = build_index_from_texts([p.search_text() for p in catalog.products], embedder, k, batch_size=batch_size)
    if path is not None:
        try:
            _write_atomic(index, path)
        except OSError as e:
            log.warning("could not write search index cache %s (%s); continuing uncached", path, e)
    return VectorIndex(index, k, path, from_cache=False)

