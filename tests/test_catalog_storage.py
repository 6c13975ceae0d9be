"""Columnar catalogue storage, its on-disk cache, and the IVF path (issue 13 parts 2-3)."""

from __future__ import annotations

import numpy as np
import pytest

from ecom_bench.catalog import Catalog
from ecom_bench.catalog.embedders import get_embedder
from ecom_bench.catalog.index import (
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
    assert [h.product.id for h in hits] == [h.product.id for h in pool if f.matches(h.product)][:50]


def test_bm25_cache_loads_memory_mapped(tmp_path, monkeypatch):
    import ecom_bench.catalog.search as search

    monkeypatch.setattr(search, "LEXICAL_CACHE_MIN", 1)
    cat = generate_synthetic_catalog(800, seed=2, show_progress=False)
    built = SearchEngine(cat, cache_dir=tmp_path).lexical
    loaded = SearchEngine(cat, cache_dir=tmp_path).lexical
    assert isinstance(loaded._data, np.memmap)
    for q in ("wall charger", "voltedge usb-c", "chargr"):
        assert np.array_equal(built.scores(q), loaded.scores(q))
