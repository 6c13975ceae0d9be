"""FAISS vector index over a catalogue, cached on disk.

One row per product (in catalogue order), vectors = ``embedder.encode(p.search_text())``,
inner-product metric on L2-normalised vectors (= cosine).

Cache file: ``<cache_dir>/<catalog.fingerprint>-<embedder slug>-<kind>.faiss``, where the
cache dir is the argument, else ``$ECOM_BENCH_CACHE``, else ``~/.cache/ecom_bench``.
Writes are atomic (temporary file + ``os.replace``), so concurrent builders never leave
a torn file. A cache file that cannot be read, or whose size, dimension, index type or
spot-checked vectors do not match (or, for a flat index, any of whose vectors is not unit
length: a damaged byte), is rebuilt with a logged warning.

Kinds: ``"flat"`` (exact ``IndexFlatIP``; the default for N ≤ 50k) and ``"ivf"``
(IVF with 8-bit scalar-quantised lists, nlist ≈ √N, trained on a sample; the default
above). ``"auto"`` picks by size. An IVF index keeps the exact vectors beside it
(``<...>.vectors.npy``, memory-mapped: in the page cache, not the heap): its candidates are
re-scored exactly, `vector()` reads them, and `nprobe` is the smallest that reaches
``IVF_TARGET_RECALL`` recall@10 against exact search over those vectors on sampled product
names, measured at build time and stored in ``<...>.json``. The vectors are embedded chunk
by chunk with the rows done recorded, so an interrupted build resumes where it stopped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

# faiss's OpenMP threads spin while they wait for work; on a shared machine the spinning takes
# the cores the other thread needs (a 2M IVF build: 25 s wall on 2 spinning threads, 11 s
# passive, 17 s on one). Set before faiss loads libgomp; an explicit setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import faiss  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa

from ecom_bench.catalog.catalog import cache_root, progress
from ecom_bench.catalog.embedders import Embedder, embedder_slug
from ecom_bench.catalog.prescan import Prescan

if TYPE_CHECKING:
    from ecom_bench.catalog.catalog import Catalog

__all__ = [
    "FLAT_MAX_N",
    "IVF_NPROBE",
    "IVF_TARGET_RECALL",
    "PRESCAN_MIN_N",
    "IndexKind",
    "VectorIndex",
    "build_index",
    "build_index_from_texts",
    "configure_faiss",
    "default_cache_dir",
    "embed_to_file",
    "measure_recall",
    "recall_queries",
    "tune_nprobe",
    "index_cache_path",
    "load_or_build_index",
    "resolve_kind",
]

log = logging.getLogger(__name__)

IndexKind = Literal["auto", "flat", "ivf"]
FLAT_MAX_N = 50_000
IVF_NPROBE = 32  # the starting point when no measured value is stored
#: recall@10 against exact search that the tuned nprobe must reach (the target is 0.95)
IVF_TARGET_RECALL = 0.97
_NPROBE_LADDER = (4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256)
_RECALL_QUERIES = 300
_IVF_TRAIN_PER_LIST = 40  # faiss warns below 39 training points per centroid
_EMBED_CHUNK = 1 << 16
_SPOT_CHECKS = 3
_NORM_CHECK_CHUNK = 16_384  # rows per chunk when a flat cache file's vectors are checked on load
_FLAT_NUMPY_MAX_NQ = 16  # below this many queries, flat search uses numpy (see VectorIndex.search)
#: Flat indexes from this size answer one query through `Prescan` (an fp16 pre-scan, then the
#: exact re-score of the rows near the cut: the full scan's answer, read from half the bytes).
#: Below it the vectors sit in cache and the plain scan is as fast.
PRESCAN_MIN_N = 8192

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
    Searches run on one OpenMP thread: a single query has nothing to split, and on a busy
    machine the idle threads' spin-waits cost more than the search (IVF at 200k: 13 ms a
    query on 2 threads, 0.6 ms on 1, measured). Builds use every core (`build_threads`).
    """
    global _faiss_configured
    if _faiss_configured:
        return
    with _faiss_lock:
        if not _faiss_configured:
            faiss.omp_set_num_threads(1)
            faiss.cvar.distance_compute_blas_threshold = 16
            _faiss_configured = True


@contextlib.contextmanager
def build_threads() -> Iterator[None]:
    """Every core for FAISS while an index is trained or filled, one thread again after."""
    configure_faiss()
    faiss.omp_set_num_threads(_cpu_count())
    try:
        yield
    finally:
        faiss.omp_set_num_threads(1)


def default_cache_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    return cache_root(cache_dir)


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
    """√N lists: at 2M, 1,414 lists reach recall@10 0.974 at nprobe 8 in 0.6 ms a query, and
    train and fill in half the time of 2√N (the assignment is N x nlist dot products)."""
    nlist = int(round(math.sqrt(max(n, 1))))
    # keep at least ~39 training points per list
    return max(1, min(nlist, n // 39 if n >= 39 else 1))


def _new_index(d: int, n: int, kind: Literal["flat", "ivf"], seed: int) -> faiss.Index:
    if kind == "flat" or n == 0:
        return faiss.IndexFlatIP(d)
    nlist = _nlist_for(n)
    quantizer = faiss.IndexFlatIP(d)
    ivf = faiss.IndexIVFScalarQuantizer(quantizer, d, nlist, faiss.ScalarQuantizer.QT_8bit,
                                        faiss.METRIC_INNER_PRODUCT)
    ivf.cp.seed = seed
    ivf.cp.niter = 10
    ivf.cp.max_points_per_centroid = _IVF_TRAIN_PER_LIST
    return ivf


def _train_rows(n: int, nlist: int, seed: int) -> np.ndarray:
    n_train = min(n, nlist * _IVF_TRAIN_PER_LIST)
    if n_train >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=n_train, replace=False))


_I = TypeVar("_I", bound=faiss.Index)


def _finish(index: _I) -> _I:
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
    with build_threads():
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
                  unit="product", delay=0.0) as bar, build_threads():
        if isinstance(index, faiss.IndexIVF):
            rows = _train_rows(n, index.nlist, seed)
            index.train(enc([texts[i] for i in rows]))
        for s in range(0, n, chunk):
            index.add(enc(texts[s : s + chunk]))
            bar.update(min(chunk, n - s))
    return _finish(index)


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
    #: an IVF index's exact vectors (memory-mapped), for re-scoring and `vector()`
    exact: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: recall@10 against exact search measured when nprobe was chosen (IVF only)
    recall_at_10: float | None = None
    _xb: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)
    #: the flat index's `Prescan` (built on first use), or False where it does not apply
    _prescan: Prescan | bool | None = field(default=None, init=False, repr=False, compare=False)
    _prescan_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)

    @property
    def dim(self) -> int:
        return int(self.index.d)

    def _flat_view(self) -> np.ndarray | None:
        """Zero-copy (n, d) view of the exact vectors: a flat index's storage or an IVF index's
        memory-mapped file (None for an IVF index without one)."""
        if not isinstance(self.index, faiss.IndexFlat) or self.ntotal == 0:
            return self.exact
        xb = self._xb
        if xb is None or xb.shape[0] != self.ntotal:
            xb = faiss.rev_swig_ptr(self.index.get_xb(), self.ntotal * self.dim).reshape(self.ntotal, self.dim)
            self._xb = xb
        return xb

    def prescan(self) -> Prescan | None:
        """The flat index's `Prescan` (built once, on first use), or None: an IVF index, one
        under PRESCAN_MIN_N vectors, or a machine where it would not reproduce the full scan."""
        pre = self._prescan
        if pre is None or (isinstance(pre, Prescan) and pre.n != self.ntotal):
            with self._prescan_lock:
                pre = self._prescan
                if pre is None or (isinstance(pre, Prescan) and pre.n != self.ntotal):
                    xb = self._flat_view() if isinstance(self.index, faiss.IndexFlat) else None
                    built = (Prescan.build(xb, owner=self.index)
                             if xb is not None and self.ntotal >= PRESCAN_MIN_N else None)
                    pre = self._prescan = built if built is not None else False
        return pre if isinstance(pre, Prescan) else None

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids), each (nq, k'); k' = min(k, ntotal). Ties ordered by id.

        One query against a large flat index goes through `Prescan` (the same answer as the
        full scan, bit for bit, from half the memory traffic). A few queries against a flat
        index go through numpy (one matrix-vector product over FAISS's own storage: about 2x
        faster than FAISS's non-BLAS path); batches and IVF go through FAISS. Both are exact
        for flat; scores agree to float rounding.
        """
        q = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        k = max(0, min(int(k), self.ntotal))
        if k == 0:
            return np.zeros((q.shape[0], 0), np.float32), np.zeros((q.shape[0], 0), np.int64)
        flat = isinstance(self.index, faiss.IndexFlat)
        if flat and q.shape[0] == 1 and k < self.ntotal and (pre := self.prescan()) is not None:
            got = pre.search(q[0], k)
            if got is not None:
                return got[0][None], got[1][None]
        xb = self._flat_view() if flat and q.shape[0] < _FLAT_NUMPY_MAX_NQ else None
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
        if not flat and self.exact is not None:  # re-score the candidates exactly
            for r in range(q.shape[0]):
                valid = ids[r] >= 0
                scores[r][valid] = self.exact[ids[r][valid]] @ q[r]
        # deterministic tie order: by score desc, then catalogue index asc; -1 (IVF misses) last
        for r in range(q.shape[0]):
            valid = ids[r] >= 0
            s = np.where(valid, scores[r], -np.inf)
            order = np.lexsort((np.where(valid, ids[r], np.iinfo(np.int64).max), -s))
            scores[r], ids[r] = scores[r][order], ids[r][order]
        return scores, ids

    def vector(self, i: int) -> np.ndarray:
        if self.exact is not None:
            return np.array(self.exact[int(i)], dtype=np.float32)
        return _reconstruct(self.index, i)

    def vectors(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """(len(rows), d) copies of the rows' vectors: one gather from a flat index's storage."""
        xb = self._flat_view()
        if xb is not None:
            return xb[np.asarray(rows, dtype=np.int64)]
        return np.stack([self.vector(i) for i in rows]) if len(rows) else np.zeros((0, self.dim), np.float32)


def _validate(index: faiss.Index, kind: str, catalog: Catalog, embedder: Embedder,
              exact: np.ndarray | None = None) -> str | None:
    """None if `index` fits this catalogue and embedder, else the reason it does not
    (for IVF, `exact` are its stored exact vectors: those are spot-checked)."""
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
        if exact is None or exact.shape != (n, int(embedder.dim)):
            return "its exact vectors are missing or of the wrong shape"
    for j, i in enumerate(picks):
        stored = np.asarray(exact[i], dtype=np.float32) if exact is not None else _reconstruct(index, i)
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


def _sidecar(path: Path, suffix: str) -> Path:
    return path.with_name(path.name.removesuffix(".faiss") + suffix)


def _encoder(embedder: Embedder, batch_size: int) -> Callable[[Sequence[str]], np.ndarray]:
    d = int(embedder.dim)

    def enc(batch: Sequence[str]) -> np.ndarray:
        v = embedder.encode(list(batch), batch_size=batch_size)
        if v.shape != (len(batch), d):
            raise RuntimeError(f"embedder {embedder.name!r} returned shape {v.shape}, expected {(len(batch), d)}")
        return np.ascontiguousarray(v, dtype=np.float32)

    return enc


def embed_to_file(texts: pa.Array, embedder: Embedder, path: Path, *, batch_size: int = 256,
                  chunk: int = _EMBED_CHUNK) -> np.ndarray:
    """The texts' embeddings in a memory-mapped ``.npy`` file, written chunk by chunk. The rows
    done are recorded beside it (``.rows``) after each chunk, so a build that is interrupted
    resumes at the next chunk; a finished file is opened read-only and not re-embedded.

    Chunks are written with plain file writes, not through a writable mapping: written
    pages then sit in the page cache, not in this process's resident set (2 GB at 2M)."""
    n, d = len(texts), int(embedder.dim)
    rows_path = path.with_name(path.name + ".rows")
    done = 0
    fresh = True
    if path.exists():
        try:
            mm = np.load(path, mmap_mode="r")
            done = int(rows_path.read_text()) if rows_path.exists() else n
            fresh = mm.shape != (n, d) or mm.dtype != np.float32 or not 0 <= done <= n
            if fresh:
                log.warning("embedding file %s does not fit (shape %s); re-embedding", path, mm.shape)
            del mm
        except (OSError, ValueError) as e:
            log.warning("embedding file %s is unreadable (%s); re-embedding", path, e)
    if fresh:
        path.parent.mkdir(parents=True, exist_ok=True)
        rows_path.write_text("0")
        np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, d)).flush()  # header, sparse body
        done = 0
    if done < n:
        offset = int(np.load(path, mmap_mode="r").offset)
        enc = _encoder(embedder, batch_size)
        with progress(total=n, desc=f"Embedding {n:,} products (resumable, cached)", unit="product",
                      delay=0.0) as bar, open(path, "r+b") as f:
            bar.update(done)
            for s in range(done, n, chunk):
                end = min(n, s + chunk)
                f.seek(offset + s * d * 4)
                f.write(enc(texts[s:end].to_pylist()).tobytes())
                f.flush()
                os.fsync(f.fileno())  # the rows are on disk before `.rows` says so
                rows_path.write_text(str(end))
                bar.update(end - s)
    if rows_path.exists():
        rows_path.unlink()
    return np.load(path, mmap_mode="r")


def _row_chunks(vectors: np.ndarray, chunk: int = _EMBED_CHUNK) -> Iterator[tuple[int, np.ndarray]]:
    """(first row, rows) of `vectors`, `chunk` rows at a time, as fresh arrays. A memory-mapped
    file is read with plain reads: pages read through the mapping would stay in the resident
    set (the whole 2 GB of a 2M catalogue's vectors by the end of a pass)."""
    n, d = vectors.shape
    name = getattr(vectors, "filename", None)
    if not isinstance(vectors, np.memmap) or name is None or not vectors.flags.c_contiguous:
        for s in range(0, n, chunk):
            yield s, np.ascontiguousarray(vectors[s : s + chunk], dtype=np.float32)
        return
    with open(name, "rb") as f:
        f.seek(int(vectors.offset))
        for s in range(0, n, chunk):
            rows = np.fromfile(f, dtype=vectors.dtype, count=min(chunk, n - s) * d).reshape(-1, d)
            yield s, rows.astype(np.float32, copy=False)


def _exact_top(exact: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Exact top-k rows by inner product for each query: FAISS brute force (BLAS) over `exact`
    a chunk at a time, the running best merged. Ties by row."""
    configure_faiss()
    q = np.ascontiguousarray(queries, dtype=np.float32)
    best_s = np.full((len(q), 0), -np.inf, np.float32)
    best_i = np.zeros((len(q), 0), np.int64)
    for s, rows in _row_chunks(exact, 1 << 17):
        sc, ids = faiss.knn(q, rows, min(k, len(rows)), metric=faiss.METRIC_INNER_PRODUCT)
        all_s, all_i = np.concatenate([best_s, sc], 1), np.concatenate([best_i, ids + s], 1)
        top = np.lexsort((all_i, -all_s))[:, :k] if all_s.size else np.zeros((len(q), 0), np.int64)
        best_s, best_i = np.take_along_axis(all_s, top, 1), np.take_along_axis(all_i, top, 1)
    return best_i


def measure_recall(vi: VectorIndex, queries: np.ndarray, k: int = 10, truth: np.ndarray | None = None) -> float:
    """Mean recall@k of `vi.search` against exact search over its exact vectors.

    For IVF, the rows FAISS returns: `search`'s exact re-scoring only reorders them, and it
    reads each row through the mapping, where the page cache's large folios (up to 2 MB)
    would make most of a 2 GB vectors file resident for 300 queries (in a build's peak)."""
    exact = vi._flat_view()
    if exact is None or len(queries) == 0:
        raise ValueError("recall needs the index's exact vectors and at least one query")
    truth = _exact_top(exact, queries, k) if truth is None else truth
    if isinstance(vi.index, faiss.IndexIVF):
        configure_faiss()
        _, got = vi.index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
    else:
        _, got = vi.search(queries, k)
    return float(np.mean([len(set(t.tolist()) & set(g.tolist())) / k for t, g in zip(truth, got, strict=True)]))


def recall_queries(catalog: Catalog, embedder: Embedder, n: int = _RECALL_QUERIES, seed: int = 7) -> np.ndarray:
    """Embedded queries shaped like the ones agents send: sampled products' short names."""
    rows = np.sort(np.random.default_rng(seed).choice(len(catalog), size=min(n, len(catalog)), replace=False))
    titles = catalog.table.column("title").take(pa.array(rows)).to_pylist()
    return embedder.encode([t.split(",")[0] for t in titles])


def tune_nprobe(vi: VectorIndex, queries: np.ndarray, target: float = IVF_TARGET_RECALL) -> tuple[int, float]:
    """The smallest nprobe of the ladder whose recall@10 reaches `target` (else the largest
    tried), set on the index; returns (nprobe, recall)."""
    index = _ivf(vi.index)
    exact = vi._flat_view()
    if exact is None:
        raise ValueError("tuning nprobe needs the index's exact vectors")
    truth = _exact_top(exact, queries, 10)
    recall = 0.0
    for nprobe in _NPROBE_LADDER:
        index.nprobe = min(nprobe, index.nlist)
        recall = measure_recall(vi, queries, 10, truth)
        if recall >= target or nprobe >= index.nlist:
            break
    return int(index.nprobe), recall


def _ivf(index: faiss.Index) -> faiss.IndexIVF:
    """The index as the IVF index it must be (nprobe, nlist)."""
    if not isinstance(index, faiss.IndexIVF):
        raise TypeError(f"expected an IVF index, got {type(index).__name__}")
    return index


def _build_ivf(vectors: np.ndarray, seed: int, chunk: int = _EMBED_CHUNK) -> faiss.IndexIVF:
    n, d = vectors.shape
    index = _ivf(_new_index(d, n, "ivf", seed))
    rows = _train_rows(n, index.nlist, seed)
    with progress(total=2 * n, desc=f"Building the IVF index over {n:,} vectors", unit="vector",
                  delay=0.0) as bar, build_threads():
        sample = []
        for s, part in _row_chunks(vectors, chunk):  # the training sample, in one pass
            lo, hi = np.searchsorted(rows, [s, s + len(part)])
            sample.append(part[rows[lo:hi] - s])
            bar.update(len(part))
        index.train(np.concatenate(sample) if sample else np.zeros((0, d), np.float32))
        del sample
        for _, part in _row_chunks(vectors, chunk):
            index.add(part)
            bar.update(len(part))
    return index


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
    if k == "ivf" and len(catalog):
        return _load_or_build_ivf(catalog, embedder, path, batch_size)
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
                return VectorIndex(_finish(index), k, path, from_cache=True)
            log.warning("search index cache %s is stale (%s); rebuilding", path, reason)
    index = build_index_from_texts(catalog.search_texts().to_pylist(), embedder, k, batch_size=batch_size)
    if path is not None:
        try:
            _write_atomic(index, path)
        except OSError as e:
            log.warning("could not write search index cache %s (%s); continuing uncached", path, e)
    return VectorIndex(index, k, path, from_cache=False)


def _load_or_build_ivf(catalog: Catalog, embedder: Embedder, path: Path | None, batch_size: int) -> VectorIndex:
    """IVF: exact vectors (resumable file), then the index, then nprobe by measured recall."""
    if path is None:  # no cache: a temporary vectors file all the same (memory-mapped, not on the heap)
        tmp = Path(tempfile.mkdtemp(prefix="ecom-bench-vectors-"))
        exact = embed_to_file(catalog.search_texts(), embedder, tmp / "vectors.npy", batch_size=batch_size)
        vi = VectorIndex(_finish(_build_ivf(exact, 1234)), "ivf", None, from_cache=False, exact=exact)
        _, vi.recall_at_10 = tune_nprobe(vi, recall_queries(catalog, embedder))  # sets the index's nprobe
        return vi
    vec_path, meta_path = _sidecar(path, ".vectors.npy"), _sidecar(path, ".json")
    if path.exists() and vec_path.exists() and meta_path.exists() and not vec_path.with_name(
            vec_path.name + ".rows").exists():
        try:
            index = faiss.read_index(str(path))
            exact = np.load(vec_path, mmap_mode="r")
            meta = json.loads(meta_path.read_text())
            reason = _validate(index, "ivf", catalog, embedder, exact)
        except Exception as e:  # noqa: BLE001 - any unreadable piece is rebuilt
            reason = f"unreadable: {e}"
        if reason is None:
            ivf = _finish(_ivf(index))
            ivf.nprobe = min(int(meta["nprobe"]), ivf.nlist)
            return VectorIndex(ivf, "ivf", path, from_cache=True, exact=exact,
                               recall_at_10=float(meta["recall_at_10"]))
        log.warning("search index cache %s is stale (%s); rebuilding", path, reason)
    exact = embed_to_file(catalog.search_texts(), embedder, vec_path, batch_size=batch_size)
    ivf = _finish(_build_ivf(exact, 1234))
    vi = VectorIndex(ivf, "ivf", path, from_cache=False, exact=exact)
    nprobe, recall = tune_nprobe(vi, recall_queries(catalog, embedder))
    vi.recall_at_10 = recall
    pa.default_memory_pool().release_unused()  # the texts' pages back to the system
    try:
        _write_atomic(vi.index, path)
        tmp_meta = meta_path.with_name(f".{meta_path.name}.{os.getpid()}.tmp")
        tmp_meta.write_text(json.dumps({"nprobe": nprobe, "recall_at_10": recall, "nlist": int(ivf.nlist),
                                        "target_recall": IVF_TARGET_RECALL}))
        os.replace(tmp_meta, meta_path)
    except OSError as e:
        log.warning("could not write search index cache %s (%s); continuing uncached", path, e)
    return vi
