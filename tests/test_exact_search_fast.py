"""The fp16 pre-scan (`ecom_bench.catalog.prescan`) gives the flat full scan's answer: same ids, same
order, same scores, bit for bit, on random and real queries; it falls back where it cannot."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ecom_bench.catalog import vector_index as index_mod
from ecom_bench.catalog.vector_index import VectorIndex, build_index
from ecom_bench.catalog.prescan import BLOCK, Prescan
from ecom_bench.catalog.search import SearchEngine
from ecom_bench.envs.context import CatalogSpec, load_context


def _full_scan(xb: np.ndarray, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The flat search's plain path, as it was before the pre-scan: one gemv, argpartition, then
    (score desc, row asc)."""
    row = (q[None] @ xb.T)[0]
    top = np.argpartition(-row, k - 1)[:k] if k < row.size else np.arange(row.size)
    top = top[np.lexsort((top, -row[top]))]
    return row[top], top


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(norms > 0, norms, 1)).astype(np.float32)


def _vectors(n: int, d: int = 256, seed: int = 0) -> np.ndarray:
    """Clustered unit vectors (like product embeddings: many near neighbours), a few zero rows
    (blank texts) and a few exact duplicates."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, d))
    x = centres[rng.integers(0, 40, n)] + 0.35 * rng.standard_normal((n, d))
    x[rng.choice(n, 3, replace=False)] = 0.0
    dup = rng.choice(n, 6, replace=False)
    x[dup[3:]] = x[dup[:3]]
    return _unit(x)


@pytest.fixture
def prescan_always(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_mod, "PRESCAN_MIN_N", 0)


def _index(xb: np.ndarray) -> VectorIndex:
    return VectorIndex(build_index(xb, "flat"), "flat", None, from_cache=False)


def _prescan_or_skip(xb: np.ndarray) -> tuple[VectorIndex, Prescan]:
    """A flat index over `xb` and its pre-scan (skipped where the machine's BLAS scan is not
    reproduced: the index then keeps the full scan, and there is nothing to test)."""
    vi = _index(xb)
    pre = vi.prescan()
    if pre is None:
        pytest.skip("the pre-scan does not reproduce this machine's BLAS scan (it is not used here)")
    return vi, pre


def _queries(xb: np.ndarray, n_random: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    near = xb[rng.choice(len(xb), n_random, replace=False)] + 0.2 * rng.standard_normal((n_random, xb.shape[1]))
    return np.concatenate([_unit(rng.standard_normal((n_random, xb.shape[1]))), _unit(near)])


@pytest.mark.parametrize("n", [4096, 4097, 4098, 4099])
def test_same_answer_as_the_full_scan(prescan_always: None, n: int) -> None:
    xb = _vectors(n, seed=n)
    vi = _index(xb)
    xb = vi._flat_view()
    pre = vi.prescan()
    if n % BLOCK == 0:
        # on OpenBLAS's kernels the blocks reproduce the scan; were a machine's kernels to
        # differ, `build` returns None and the index keeps the full scan (still exact)
        assert pre is not None, "the pre-scan's self-test failed on this machine"
    used = 0
    for q in _queries(xb, 40):
        for k in (1, 7, 50, 216, 1000):
            s, i = vi.search(q[None], k)
            ref_s, ref_i = _full_scan(xb, q, k)
            assert np.array_equal(i[0], ref_i) and np.array_equal(s[0], ref_s), (n, k)
            used += pre is not None and pre.search(q, k) is not None
    assert pre is None or used > 0


def test_rescore_is_bit_for_bit_the_scan(prescan_always: None) -> None:
    vi, pre = _prescan_or_skip(_vectors(5000, seed=3))
    rng = np.random.default_rng(4)
    for q in _queries(vi._flat_view(), 10):
        full = (q[None] @ vi._flat_view().T)[0]
        rows = np.unique(rng.choice(len(full), 300))
        assert np.array_equal(pre.rescore(q, rows), full[rows])


def test_the_window_bounds_the_approximation(prescan_always: None) -> None:
    xb = _vectors(6000, seed=5)
    vi = _index(xb)
    pre = Prescan(vi._flat_view(), owner=vi)  # the view reads the index's own storage
    for q in _queries(xb, 20):
        approx, ids = pre.sq.search(q[None], len(xb))
        exact = (q[None] @ xb.T)[0][ids[0]]
        # the window is 2·E and E carries a factor 2 of safety: the real error is within a quarter
        assert np.max(np.abs(approx[0].astype(np.float64) - exact)) <= pre.window(q) / 4


def test_ties_across_the_cut_fall_back(prescan_always: None) -> None:
    """Where equal scores straddle the k-th place, the full scan's argpartition picks which stay:
    the pre-scan declines and the index answers with the full scan."""
    rng = np.random.default_rng(6)
    xb = _unit(rng.standard_normal((4096, 256)))
    q = xb[10].copy()
    xb[100:140] = _unit(q[None] + 0.01)  # 40 identical vectors just below the query itself
    vi = _index(xb)
    pre = vi.prescan()
    q = q.astype(np.float32)
    if pre is not None:
        assert pre.search(q, 20) is None
    s, i = vi.search(q[None], 20)
    ref_s, ref_i = _full_scan(vi._flat_view(), q, 20)
    assert np.array_equal(i[0], ref_i) and np.array_equal(s[0], ref_s)


def test_declines_what_it_cannot_answer(prescan_always: None) -> None:
    xb = _vectors(4096, seed=7)
    vi, pre = _prescan_or_skip(xb)
    q = _queries(xb, 1)[0]
    assert pre.search(np.full_like(q, np.nan), 10) is None
    assert pre.search(q, 0) is None and pre.search(q, len(xb)) is None
    s, i = vi.search(q[None], len(xb))  # k = n: the full scan
    assert i.shape == (1, len(xb))


def test_small_and_ivf_indexes_keep_the_plain_scan() -> None:
    xb = _vectors(2000, seed=8)
    assert _index(xb).prescan() is None  # under PRESCAN_MIN_N
    assert Prescan.build(xb.astype(np.float64)) is None  # not float32: no pre-scan, not a wrong answer
    assert Prescan.build(np.zeros((3, 256), np.float32)) is None


def _real_queries(ctx, n: int) -> list[str]:
    rng = np.random.default_rng(11)
    titles = ctx.catalog.table.column("title").take(rng.choice(len(ctx.catalog), n, replace=False)).to_pylist()
    words = [t.split(",")[0] for t in titles]
    return words + [" ".join(w.split()[-2:]) for w in words] + ["usb-c charger", "black", "something for my kitchen"]


def _real_check(ctx, n: int, depths: tuple[int, ...]) -> None:
    vi = ctx.search_engine.vector_index
    pre = vi.prescan()
    xb = vi._flat_view()
    qv = ctx.search_engine.embedder.encode(_real_queries(ctx, n))
    used = 0
    for q in qv:
        if not np.any(q):
            continue
        for depth in depths:
            k = depth + 16  # what the engine asks for (`search._ANN_MARGIN`)
            s, i = vi.search(q[None], k)
            ref_s, ref_i = _full_scan(xb, q, k)
            assert np.array_equal(i[0], ref_i) and np.array_equal(s[0], ref_s)
            used += pre is not None and pre.search(q, k) is not None
    assert pre is None or used > 0


def test_real_queries_on_the_test_catalogue(context, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_mod, "PRESCAN_MIN_N", 0)
    engine = SearchEngine(context.catalog, context.search_engine.embedder)  # its own index object
    _real_check(SimpleNamespace(catalog=context.catalog, search_engine=engine), 150, (5, 20, 50, 100, 200))
    # and the whole engine: hybrid results with the pre-scan equal those without it
    plain = SearchEngine(context.catalog, context.search_engine.embedder)
    plain.vector_index._prescan = False
    for q in _real_queries(context, 40):
        for depth in (10, 200):
            got = [h.product.id for h in engine.search(q, depth=depth, limit=20)]
            assert got == [h.product.id for h in plain.search(q, depth=depth, limit=20)], q


@pytest.mark.slow
def test_real_queries_at_20k() -> None:
    ctx = load_context(CatalogSpec(size=20_000))
    if ctx.search_engine.vector_index.prescan() is None:
        pytest.skip("the pre-scan is not used on this machine")
    _real_check(ctx, 300, (10, 50, 100, 200, 500))


def test_few_texts_tokenise_as_the_arrow_path(context, monkeypatch: pytest.MonkeyPatch) -> None:
    """A query's token ids (split in Python) and its vector equal the batch (Arrow) path's."""
    from ecom_bench.catalog import embedders
    from ecom_bench.catalog.embedders import WordLlamaEmbedder

    titles = context.catalog.table.column("title").to_pylist()[:300]
    texts = titles + [t.split(",")[0] for t in titles] + [
        "", " ", "a  b", " lead", "trail ", "usb-c  charger", "Ünïcode café", "tab\there", "new\nline", "🔌 plug"]
    rng = np.random.default_rng(12)
    batches = [[t] for t in texts] + [[texts[i] for i in rng.choice(len(texts), rng.integers(2, 9))]
                                      for _ in range(60)]
    few = WordLlamaEmbedder()
    got = [(few._token_ids(b), few.encode(b)) for b in batches]
    monkeypatch.setattr(embedders, "_FEW_TEXTS", 0)
    arrow = WordLlamaEmbedder()
    for b, ((ids, offsets), vec) in zip(batches, got, strict=True):
        ref_ids, ref_offsets = arrow._token_ids(b)
        assert np.array_equal(ids, ref_ids) and np.array_equal(offsets, ref_offsets), b
        assert np.array_equal(vec, arrow.encode(b)), b


def test_repeated_queries_reuse_the_pool_and_answer_the_same(context, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeated (query, depth) is served from the engine's pool cache: same hits under any
    filters as a fresh engine's, and batches neither read nor fill it."""
    from ecom_bench.catalog import search as search_mod
    from ecom_bench.catalog.search import SearchFilters

    monkeypatch.setattr(search_mod, "POOL_CACHE", 8)
    queries = _real_queries(context, 12)
    filters = [None, SearchFilters(max_price=40.0), SearchFilters(min_rating=4.0, max_ship_days=5)]
    cached = SearchEngine(context.catalog, context.search_engine.embedder)
    cached.search_batch(queries[:3], depth=50, limit=10)  # a batch: not kept
    assert not cached._pools
    fresh = SearchEngine(context.catalog, context.search_engine.embedder)
    for _ in range(2):
        for q in queries:
            for f in filters:
                fresh._pools.clear()
                want = [(h.product.id, h.score) for h in fresh.search(q, filters=f, depth=50, limit=10)]
                assert [(h.product.id, h.score) for h in cached.search(q, filters=f, depth=50, limit=10)] == want
    assert len(cached._pools) == 8  # bounded
