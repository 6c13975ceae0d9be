"""benchmarks/bench_load_parquet.py's writer at a tiny size: the Amazon-schema file it writes
(the one the 2M figure is measured on) is read by `load_catalog` as designed, offline:
well-formed rows give the synthetic products back, malformed ones are skipped or defaulted."""

from __future__ import annotations

import logging

import pyarrow.parquet as pq
import pytest

from conftest import benchmark_module
from ecom_bench.catalog.loaders import load_catalog
from ecom_bench.catalog.synthetic import generate_synthetic_catalog

N = 300


@pytest.fixture(scope="module")
def bench():
    return benchmark_module("bench_load_parquet")


def test_amazon_schema_file_loads_with_malformed_rows_skipped_or_defaulted(bench, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(bench, "MALFORMED_EVERY", 10)  # every kind several times in 300 rows
    monkeypatch.setattr(bench, "ROW_GROUP_ROWS", 64)
    src = tmp_path / "amazebay.parquet"
    counts = bench.write_amazon_parquet(src, N)
    assert counts == {kind: 5 for kind in bench.MALFORMED}
    meta = pq.ParquetFile(src)
    assert meta.metadata.num_rows == N and meta.metadata.num_row_groups > 1
    assert meta.schema_arrow.equals(bench.amazon_schema())

    with caplog.at_level(logging.INFO, logger="ecom_bench.catalog.loaders"):
        cat = load_catalog(src, cache_dir=tmp_path / "hf")
    skipped = next(r.args[1] for r in caplog.records if "skipped rows" in r.msg)
    assert skipped == {"title": 5, "price": 5, "duplicate": 5}
    assert len(cat) == N - 15

    syn = generate_synthetic_catalog(N, 0)
    kinds = {i: bench.malformed_kind(i) for i in range(N)}
    for i, kind in kinds.items():
        asin = f"B{i:09d}"
        if kind in ("title", "price"):
            assert asin not in cat
            continue
        if kind == "duplicate":  # carries the previous row's id: the first row wins
            assert asin not in cat and cat[f"B{i - 1:09d}"].title == syn.products[i - 1].title
            continue
        p, s = cat[asin], syn.products[i]
        assert p.title == s.title and p.store == s.store and p.features == s.features
        assert p.price == pytest.approx(s.price, abs=0.006)
        if kind == "details":  # not JSON: no attributes, the brand from the store
            assert p.attributes == {} and p.brand == s.store
        else:
            assert {k: v for k, v in p.attributes.items() if k != "brand"} == s.attributes
            assert p.attributes["brand"] == p.brand == s.brand
        assert p.rating == (0.0 if kind == "rating" else s.rating)
        assert p.category == ((f"All {s.category[0]}",) if kind == "categories" else s.category)
        assert p.variants  # offered values listed in details, or the product's own one
