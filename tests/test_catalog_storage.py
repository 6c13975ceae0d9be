"""Columnar catalogue storage, its on-disk cache, and the IVF path."""

from __future__ import annotations

import dataclasses
from itertools import pairwise

import numpy as np
import pytest

from ecom_bench.catalog import Catalog
from ecom_bench.catalog.embedders import get_embedder
from ecom_bench.catalog.vector_index import (
    embed_to_file,
    load_or_build_index,
    measure_recall,
    recall_queries,
)
from ecom_bench.catalog.search import SearchEngine, SearchFilters, tokenize, tokenize_corpus
from ecom_bench.catalog.synthetic import generate_synthetic_catalog, synthetic_cache_path


@pytest.fixture(scope="module")
def cat3k() -> Catalog:
    return generate_synthetic_catalog(3000, seed=0, show_progress=False)


def test_materialised_products_equal_the_objects_they_were_built_from(cat3k):
    objects = [cat3k.products[i] for i in range(len(cat3k))]
    rebuilt = Catalog(objects, name="objects")  # the object path: keeps the given products
    assert rebuilt.products[17] is objects[17]
    fresh = Catalog.from_table(rebuilt.table, name="table")  # no objects: every product made from columns
    assert all(fresh.products[i] == objects[i] for i in range(len(objects)))
    assert fresh.fingerprint == rebuilt.fingerprint
    for view in ("prices", "ratings", "ship_days", "leaf_categories", "folded_brands"):
        assert np.array_equal(getattr(fresh, view), getattr(rebuilt, view))
    assert fresh.by_leaf_category == rebuilt.by_leaf_category and fresh.categories == rebuilt.categories
    p = objects[42]
    assert fresh[p.id] == p and fresh.get(p.id) == p and p.id in fresh and fresh.index_of(p.id) == 42
    assert fresh.get("nope") is None and "nope" not in fresh
    with pytest.raises(KeyError):
        fresh["nope"]
    assert fresh.search_texts().to_pylist() == [q.search_text() for q in objects]
    v = p.variants[0]
    assert fresh.offering(v.attribute, v.value.upper())[42]
    assert fresh.products[-1] == objects[-1] and fresh.products[1:3] == objects[1:3]


def test_id_lookups_and_column_reads_without_products(cat3k):
    """Lookups of strings that are no product id (a variant id is longer than every id) answer
    None; titles and variant values read from the columns equal the products'."""
    p = cat3k.products[7]
    assert cat3k.id_width == max(len(q.id) for q in cat3k.products)
    assert cat3k.index_of(p.variants[0].id) is None and cat3k.get(p.variants[0].id) is None
    assert cat3k.index_of(p.id) == cat3k.index_of(p.id) == 7  # the second from the cache
    assert cat3k.index_of(p.id[:-1]) is None and cat3k.index_of("") is None and cat3k.index_of(7) is None
    long_ids = Catalog([dataclasses.replace(p, id="X" * 300)], name="long ids")  # the dict index
    assert long_ids.id_width == 300 and long_ids.index_of("X" * 300) == 0 and long_ids.index_of("X" * 301) is None
    for row in (0, 7, len(cat3k) - 1):
        q = cat3k.products[row]
        assert cat3k.title_at(row) == q.title
        assert all(cat3k.variant_value_at(row, v.id) == v.value for v in q.variants)
        assert cat3k.variant_value_at(row, "nope") is None


def test_duplicate_ids_are_rejected(cat3k):
    p = cat3k.products[0]
    with pytest.raises(ValueError, match="duplicate product id"):
        Catalog([p, p], name="dup")


def test_cached_load_equals_fresh_build(tmp_path):
    fresh = generate_synthetic_catalog(1200, seed=3, show_progress=False)
    first = generate_synthetic_catalog(1200, seed=3, use_cache=True, cache_dir=tmp_path, show_progress=False)
    path = synthetic_cache_path(1200, 3, tmp_path)
    assert path.exists()
    loaded = generate_synthetic_catalog(1200, seed=3, use_cache=True, cache_dir=tmp_path, show_progress=False)
    for cat in (first, loaded):
        assert cat.name == fresh.name and cat.fingerprint == fresh.fingerprint
        assert cat.products == fresh.products
    # a damaged cache file is regenerated, not trusted
    path.write_bytes(path.read_bytes()[:1000])
    again = generate_synthetic_catalog(1200, seed=3, use_cache=True, cache_dir=tmp_path, show_progress=False)
    assert again.products == fresh.products


def test_word_cached_tokenisation_is_exact(cat3k):
    texts = cat3k.search_texts().to_pylist()[:500] + ["", "USB-C  65W", "wi-fi 2.5mm m.2"]
    corpus, vocab = tokenize_corpus(texts)
    names = {i: t for t, i in vocab.items()}
    assert [[names[i] for i in doc] for doc in corpus] == [tokenize(t) or [""] for t in texts]


def test_resumable_embedding_after_an_interruption(cat3k, tmp_path):
    emb = get_embedder("wordllama")
    texts = cat3k.search_texts()[:1000]
    path = tmp_path / "v.npy"

    class Boom(RuntimeError):
        pass

    calls: list[int] = []

    class Failing:
        name, dim = emb.name, emb.dim

        def encode(self, batch, batch_size=256):
            calls.append(len(batch))
            if len(calls) == 3:
                raise Boom
            return emb.encode(batch, batch_size)

    with pytest.raises(Boom):
        embed_to_file(texts, Failing(), path, chunk=256)
    assert (tmp_path / "v.npy.rows").read_text() == "512"
    calls.clear()
    done = embed_to_file(texts, Failing(), path, chunk=256)  # resumes at row 512: 2 more chunks
    assert calls == [256, 232] and not (tmp_path / "v.npy.rows").exists()
    assert np.array_equal(done, emb.encode(texts.to_pylist()))


def test_ivf_recall_against_exact_search(tmp_path):
    cat = generate_synthetic_catalog(12_000, seed=1, show_progress=False)
    emb = get_embedder("wordllama")
    vi = load_or_build_index(cat, emb, kind="ivf", cache_dir=tmp_path)
    assert vi.kind == "ivf" and vi.recall_at_10 is not None and vi.recall_at_10 >= 0.9
    q = recall_queries(cat, emb, 100, seed=11)  # queries the tuning did not see
    assert measure_recall(vi, q) >= 0.85  # loose: the benchmark reports the figure
    cached = load_or_build_index(cat, emb, kind="ivf", cache_dir=tmp_path)
    assert cached.from_cache and cached.index.nprobe == vi.index.nprobe


def test_column_filters_match_product_filters(cat3k, tmp_path):
    eng = SearchEngine(cat3k, cache_dir=tmp_path)
    f = SearchFilters(max_price=40.0, min_rating=4.0, max_ship_days=4, brand=cat3k.products[5].brand.upper())
    hits = eng.search(cat3k.products[5].leaf_category, filters=f, depth=400, limit=50)
    assert hits and all(f.matches(h.product) for h in hits)
    pool = eng.search(cat3k.products[5].leaf_category, depth=400, limit=400)
    want = [h.product.id for h in pool if f.matches(h.product)]  # the pool's matches, then the rest
    want += [p.id for p in cat3k.products if f.matches(p) and p.id not in want]
    assert [h.product.id for h in hits] == want[:50]
    p = cat3k.products[5]
    for flt in (f, SearchFilters(category=p.leaf_category.lower(), min_price=p.price - 5),
                SearchFilters(features=tuple(p.attributes.values())[:2], max_ship_days=5),
                SearchFilters(min_price=p.price - 2, max_price=p.price + 2, min_rating=3.0)):
        assert eng.matching_rows(flt).tolist() == [i for i, q in enumerate(cat3k.products) if flt.matches(q)]


def test_bm25_cache_loads_memory_mapped(tmp_path, monkeypatch):
    import ecom_bench.catalog.search as search

    monkeypatch.setattr(search, "LEXICAL_CACHE_MIN", 1)
    cat = generate_synthetic_catalog(800, seed=2, show_progress=False)
    built = SearchEngine(cat, cache_dir=tmp_path).lexical
    loaded = SearchEngine(cat, cache_dir=tmp_path).lexical
    assert isinstance(loaded._data, np.memmap)
    for q in ("wall charger", "voltedge usb-c", "chargr"):
        assert np.array_equal(built.scores(q), loaded.scores(q))


def test_lexical_top_equals_the_full_scan(cat3k):
    """`_Lexical.top` (postings only, pruned) gives exactly `_top_by_score` over every score."""
    from ecom_bench.catalog.search import _top_by_score

    lex = SearchEngine(cat3k).lexical
    rows = np.random.default_rng(4).choice(len(cat3k), 60, replace=False)
    queries = ["usb-c charger", "wall wall charger", "chargr voltedge", "the", "zzzz qqqq"]
    for i in rows.tolist():
        p = cat3k.products[i]
        name = p.title.split(",")[0]
        queries += [name, name[:-2], f"{p.brand} {p.leaf_category}", p.title]
    for q in queries:
        scores = lex.scores(q)
        for k in (1, 10, 200, 5000):
            assert np.array_equal(lex.top(q, k), _top_by_score(scores, k)), (q, k)
    assert not lex._local.a.any()  # the per-thread buffer is left zeroed


def test_fusion_equals_the_dict_reference(cat3k):
    eng = SearchEngine(cat3k)
    rng = np.random.default_rng(0)

    def reference(sem, lex, depth):
        fused: dict[int, float] = {}
        for ranked in (sem, lex):
            for r, i in enumerate(ranked[:depth].tolist()):
                fused[i] = fused.get(i, 0.0) + 1.0 / (eng.rrf_k + r + 1)
        return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:depth]

    for _ in range(300):
        n = int(rng.integers(1, 400))
        sem = rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False)
        lex = rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False)
        depth = int(rng.integers(1, 300))
        assert eng._fuse(sem, lex, depth) == reference(sem, lex, depth)


def _tokenize_corpus_reference(texts):
    """The per-text definition `tokenize_flat` vectorises."""
    vocab: dict[str, int] = {}
    corpus = []
    for text in texts:
        ids = [vocab.setdefault(t, len(vocab)) for t in tokenize(text)]
        corpus.append(ids or [vocab.setdefault("", len(vocab))])
    return corpus, vocab


def test_flat_tokenisation_and_bm25_build_equal_bm25s(cat3k, monkeypatch):
    """`tokenize_flat` over several Arrow chunks (texts without tokens included) and
    `build_bm25` give what per-text tokenisation and ``bm25s.BM25().index`` give."""
    import bm25s

    import ecom_bench.catalog.search as search

    monkeypatch.setattr(search, "_TOKENIZE_CHUNK", 97)
    monkeypatch.setattr(search, "_SCORE_CHUNK", 1000)
    texts = cat3k.search_texts().to_pylist()[:400]
    texts[150:150] = ["", ". . .", "USB-C  65W", " lead", "tail ", "tab\there", "Ünïcödé ſtraße"]
    texts.append("")
    ref_corpus, ref_vocab = _tokenize_corpus_reference(texts)
    ids, offsets, vocab = search.tokenize_flat(texts)
    assert list(vocab.items()) == list(ref_vocab.items())
    assert [ids[a:b].tolist() for a, b in pairwise(offsets)] == ref_corpus
    assert tokenize_corpus(texts) == (ref_corpus, ref_vocab)
    for corpus_texts in (texts, texts[:150]):  # with and without an empty text ("" added after)
        corpus, voc = _tokenize_corpus_reference(corpus_texts)
        ref = bm25s.BM25(backend="numpy")
        ref.index((corpus, dict(voc)), show_progress=False)
        got = search.build_bm25(*search.tokenize_flat(corpus_texts))
        for key in ("data", "indices", "indptr"):
            a, b = ref.scores[key], got.scores[key]
            assert a.dtype == b.dtype and np.array_equal(a, b), key
        assert got.scores["num_docs"] == ref.scores["num_docs"]
        assert list(got.vocab_dict.items()) == list(ref.vocab_dict.items())


def test_wordllama_encode_is_wordllamas_own_embedding_bit_for_bit(cat3k):
    from ecom_bench.catalog.embedders import WordLlamaEmbedder, normalize_rows

    emb = WordLlamaEmbedder()
    texts = cat3k.search_texts().to_pylist()[:600] + ["USB-C  65W", " lead", "tail ", "wall charger", "x"]
    ours = emb.encode(texts)
    theirs = normalize_rows(emb._load().embed(texts, norm=False))
    assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32))


def test_exact_top_is_brute_force(tmp_path):
    from ecom_bench.catalog.vector_index import _exact_top

    rng = np.random.default_rng(2)
    x = rng.standard_normal((3000, 16)).astype(np.float32)
    x[7] = x[8]  # a tie: the lower row first
    q = np.concatenate([rng.standard_normal((5, 16)).astype(np.float32), x[7:8]])
    np.save(tmp_path / "x.npy", x)
    mapped = np.load(tmp_path / "x.npy", mmap_mode="r")  # read in chunks by plain file reads
    scores = q @ x.T
    want = np.lexsort((np.broadcast_to(np.arange(len(x)), scores.shape), -scores))[:, :10]
    for vectors in (x, mapped):
        got = _exact_top(vectors, q, 10)
        assert np.array_equal(got[:, :2], want[:, :2])
        assert all(set(g) == set(w) for g, w in zip(got.tolist(), want.tolist(), strict=True))
