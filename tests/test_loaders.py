"""Catalogue loaders: local parquet/JSONL, tolerant column mapping, native round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ecom_bench.catalog import Catalog, Product, Variant
from ecom_bench.catalog import loaders
from ecom_bench.catalog.loaders import (
    default_ship_days,
    default_stock,
    load_catalog,
    parse_price,
    save_catalog,
)


@pytest.fixture(autouse=True)
def hf_tmp(tmp_path, monkeypatch):
    """Keep datasets' Arrow cache and the hub offline inside tmp_path."""
    import datasets
    import huggingface_hub.constants as hub_constants

    cache = tmp_path / "hf-datasets"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    return cache


@pytest.fixture
def synth_calls(monkeypatch):
    """Stub variants_from_details, recording its arguments (the real one is another module)."""
    calls: list[tuple] = []

    def fake(product_id, category, attributes, price, stock, options):
        calls.append((product_id, category, attributes, price, stock, options))
        return (Variant(f"{product_id}-v0", product_id, "color", "Black", price, stock),)

    monkeypatch.setattr(loaders, "_synth", lambda: fake)
    return calls


AMAZON_ROWS = [
    {
        "parent_asin": "B0001",
        "title": "VoltEdge PowerPort Wall Charger, 65W USB-C",
        "description": ["Fast charging.", "GaN."],
        "main_category": "All Electronics",
        "categories": ["Electronics", "Chargers & Power", "Wall Chargers"],
        "store": "VoltEdge Store",
        "price": "$1,012.99",
        "average_rating": 4.6,
        "rating_number": 1234,
        "features": ["65W", "foldable plug"],
        "details": json.dumps({"Brand": "VoltEdge", "Connector Type": "USB-C", "Wattage": 65, "Weights": [1, 2]}),
    },
    {  # no categories: main_category used; no brand: store used; numeric price
        "parent_asin": "B0002",
        "title": "Plain Mug",
        "description": "A mug.",
        "main_category": "Home",
        "categories": [],
        "store": "MugWorld",
        "price": 7.5,
        "average_rating": None,
        "rating_number": None,
        "features": [],
        "details": "{}",
    },
    {  # missing price: skipped by default
        "parent_asin": "B0003",
        "title": "Mystery Box",
        "description": None,
        "main_category": "Toys",
        "categories": ["Toys"],
        "store": "",
        "price": "None",
        "average_rating": 3.0,
        "rating_number": 3,
        "features": None,
        "details": None,
    },
    {  # no title: always skipped
        "parent_asin": "B0004",
        "title": "",
        "description": "",
        "main_category": "Toys",
        "categories": ["Toys"],
        "store": "",
        "price": 3.0,
        "average_rating": 3.0,
        "rating_number": 3,
        "features": [],
        "details": None,
    },
]


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_amazon_like_jsonl_column_mapping(tmp_path, hf_tmp, synth_calls):
    src = _write_jsonl(tmp_path / "meta.jsonl", AMAZON_ROWS)
    cat = load_catalog(src, cache_dir=hf_tmp)
    assert isinstance(cat, Catalog) and cat.name == "meta"
    assert [p.id for p in cat] == ["B0001", "B0002"]
    a, b = cat.products
    assert a.title.startswith("VoltEdge PowerPort")
    assert a.description == "Fast charging. GaN."
    assert a.category == ("Electronics", "Chargers & Power", "Wall Chargers")
    assert a.brand == "VoltEdge" and a.store == "VoltEdge Store"
    assert a.price == 1012.99 and a.rating == 4.6 and a.rating_count == 1234
    assert a.features == ("65W", "foldable plug")
    # a listed detail: its first value is the attribute, the list goes to the variants
    assert a.attributes == {"brand": "VoltEdge", "connector_type": "USB-C", "wattage": "65", "weights": "1"}
    assert a.ship_days == default_ship_days("B0001") and 1 <= a.ship_days <= 7
    assert a.stock == default_stock("B0001") and 5 <= a.stock <= 200
    assert a.variants == (Variant("B0001-v0", "B0001", "color", "Black", 1012.99, a.stock),)
    assert synth_calls[0] == ("B0001", a.category, a.attributes, 1012.99, a.stock, {"weights": ("1", "2")})
    assert b.category == ("Home",) and b.brand == "MugWorld" and b.price == 7.5
    assert b.rating == 0.0 and b.rating_count == 0 and b.features == () and b.attributes == {}


def test_missing_price_default_and_limit(tmp_path, hf_tmp, synth_calls):
    src = _write_jsonl(tmp_path / "meta.jsonl", AMAZON_ROWS)
    cat = load_catalog(src, missing_price=0.0, cache_dir=hf_tmp)
    assert [p.id for p in cat] == ["B0001", "B0002", "B0003"]
    assert cat.get("B0003").price == 0.0 and cat.get("B0003").description == ""
    assert len(load_catalog(src, limit=1, cache_dir=hf_tmp)) == 1
    assert len(load_catalog(src, limit=0, cache_dir=hf_tmp)) == 0
    with pytest.raises(ValueError, match="missing_price"):
        load_catalog(src, missing_price="zero")
    with pytest.raises(ValueError, match="limit"):
        load_catalog(src, limit=-1)


def test_parquet_with_other_spellings(tmp_path, hf_tmp, synth_calls):
    table = pa.table(
        {
            "ASIN": ["X1", "X2", "X1"],
            "name": ["Crispio UltraFry Air Fryer", "ComfyCo Tank Top", "duplicate id"],
            "category": ["Home & Kitchen > Air Fryers", "Clothing|Women|Tops", "A"],
            "brand": ["Crispio", "ComfyCo", "Z"],
            "final_price": [89.0, 15.5, 1.0],
            "rating": [4.4, 9.0, 1.0],
            "rating_count": [10, 20, 1],
            "attributes": [{"Material": "Activated Carbon", "capacity": "6 Quart"}, None, None],
            "ship_days": [2, None, 1],
            "stock": [0, 7, 1],
        }
    )
    pq.write_table(table, tmp_path / "cat.parquet")
    cat = load_catalog(tmp_path / "cat.parquet", name="mine", cache_dir=hf_tmp)
    assert cat.name == "mine" and [p.id for p in cat] == ["X1", "X2"]  # first of duplicate ids kept
    fryer, top = cat.products
    assert fryer.category == ("Home & Kitchen", "Air Fryers") and top.category == ("Clothing", "Women", "Tops")
    assert fryer.attributes == {"material": "Activated Carbon", "capacity": "6 Quart"}
    assert fryer.ship_days == 2 and fryer.stock == 0  # an explicit 0 stock is kept
    assert top.ship_days == default_ship_days("X2") and top.rating == 5.0  # clipped


def test_directory_source_and_variants_column(tmp_path, hf_tmp, synth_calls):
    d = tmp_path / "shards"
    d.mkdir()
    rows = [
        {"id": f"Q{i}", "title": f"Thing {i}", "price": 1.0 + i, "category": "Misc",
         "variants": [{"id": f"Q{i}-a", "attribute": "size", "value": "S", "price": 2.0, "stock": 3}]}
        for i in range(4)
    ]
    _write_jsonl(d / "part-0.jsonl", rows[:2])
    _write_jsonl(d / "part-1.jsonl", rows[2:])
    cat = load_catalog(d, cache_dir=hf_tmp)
    assert [p.id for p in cat] == ["Q0", "Q1", "Q2", "Q3"] and cat.name == "shards"
    assert cat.get("Q2").variants == (Variant("Q2-a", "Q2", "size", "S", 2.0, 3),)
    assert not synth_calls  # records with variants are not re-synthesised
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="empty"):
        load_catalog(empty)


def test_native_round_trip_is_exact(tmp_path, hf_tmp):
    products = [
        Product(
            id=f"N{i}",
            title=f"SonicWave Keypad K{i}, Wireless",
            description="desc ünïcode" if i else "",
            category=("Electronics", "Keyboards") if i % 2 else ("Home",),
            brand="SonicWave",
            attributes={"Connector Type": "USB-C", "color": "Black"} if i % 2 else {},
            price=19.99 + i / 3,
            rating=4.25,
            rating_count=i,
            ship_days=1 + i,
            stock=0 if i == 2 else 5,
            features=("a", "b") if i else (),
            store="S",
            variants=(
                Variant(f"N{i}-usb-c", f"N{i}", "connector_type", "USB-C", 19.99, 3),
                Variant(f"N{i}-hdmi", f"N{i}", "connector_type", "HDMI", 21.0, 0),
            )
            if i != 1
            else (),
        )
        for i in range(5)
    ]
    cat = Catalog(products, name="native")
    path = save_catalog(cat, tmp_path / "out" / "native.parquet")
    assert path.exists() and not list(path.parent.glob(".*.tmp"))
    back = load_catalog(path, cache_dir=hf_tmp)
    assert back.products == cat.products  # dataclass equality, incl. variants and empty ones
    assert back.fingerprint == cat.fingerprint
    with pytest.raises(ValueError, match="parquet"):
        save_catalog(cat, tmp_path / "x.csv")


def test_missing_paths_and_bad_sources(tmp_path):
    missing = tmp_path / "nope.parquet"
    with pytest.raises(FileNotFoundError, match="nope.parquet"):
        load_catalog(missing)
    with pytest.raises(FileNotFoundError, match="nope"):
        load_catalog(str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match="catalog.jsonl"):
        load_catalog("data/catalog.jsonl")
    with pytest.raises(FileNotFoundError, match="justaword"):
        load_catalog("justaword")
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(ValueError, match=".csv"):
        load_catalog(tmp_path / "x.csv")
    # a hub id goes to the hub: offline and uncached, datasets refuses quickly
    with pytest.raises((ConnectionError, FileNotFoundError)):
        load_catalog("nobody/surely-not-a-dataset-xyz", cache_dir=tmp_path / "c")


def test_no_title_column_is_an_error(tmp_path, hf_tmp):
    _write_jsonl(tmp_path / "x.jsonl", [{"id": "1", "price": 2.0}])
    with pytest.raises(ValueError, match="no title column"):
        load_catalog(tmp_path / "x.jsonl", cache_dir=hf_tmp)


def test_unreadable_and_empty_catalogues_name_the_file(tmp_path, hf_tmp):
    """A corrupt file or one with no usable row is a readable ValueError, not a datasets/arrow traceback."""
    (tmp_path / "garbage.jsonl").write_text("not json at all\n")
    with pytest.raises(ValueError, match=r"could not read catalogue .*garbage.jsonl: ArrowInvalid: JSON parse"):
        load_catalog(tmp_path / "garbage.jsonl", cache_dir=hf_tmp)
    (tmp_path / "fake.parquet").write_bytes(b"PAR1 not really parquet")
    with pytest.raises(ValueError, match=r"could not read catalogue .*fake.parquet: ArrowInvalid"):
        load_catalog(tmp_path / "fake.parquet", cache_dir=hf_tmp)
    _write_jsonl(tmp_path / "unpriced.jsonl", [{"title": "Kettle"}, {"title": "", "price": 3.0}])
    with pytest.raises(ValueError, match=r"unpriced.jsonl has no usable products: 2 rows, skipped "
                                         r"\{'title': 1, 'price': 1\}"):
        load_catalog(tmp_path / "unpriced.jsonl", cache_dir=hf_tmp)


@pytest.mark.parametrize(
    "raw, want",
    [("$12.99", 12.99), ("1,299.00", 1299.0), ("$10 - $20", 10.0), (5, 5.0), (None, None), ("None", None),
     ("", None), ("free", None), (float("nan"), None), (-1.0, None), (True, None)],
)
def test_parse_price(raw, want):
    assert parse_price(raw) == want


def test_real_variant_synthesis_if_available(tmp_path, hf_tmp):
    pytest.importorskip("ecom_bench.catalog.variants")
    src = _write_jsonl(tmp_path / "meta.jsonl", AMAZON_ROWS[:2])
    cat = load_catalog(src, cache_dir=hf_tmp)
    for p in cat:
        assert all(v.product_id == p.id for v in p.variants)
    assert load_catalog(src, cache_dir=hf_tmp).products == cat.products  # deterministic


def test_synthetic_catalogue_round_trip(tmp_path, hf_tmp):
    synthetic = pytest.importorskip("ecom_bench.catalog.synthetic")
    cat = synthetic.generate_synthetic_catalog(n_products=300, seed=3)
    back = load_catalog(save_catalog(cat, tmp_path / "syn.parquet"), cache_dir=hf_tmp)
    assert back.products == cat.products and back.fingerprint == cat.fingerprint


def test_listed_details_become_the_variants_and_stated_ones_stay_fixed(tmp_path, hf_tmp):
    """A listed detail gives one variant per value; a stated one is never contradicted."""
    rows = [{"parent_asin": "M1", "title": "Wireless Mouse, Black", "price": 15.0, "stock": 30,
             "categories": ["Electronics", "Mice"], "details": json.dumps({"Color": "Black"})},
            {"parent_asin": "D1", "title": "Wrap Dress", "price": 30.0, "stock": 7,
             "categories": ["Clothing", "Dresses"],
             "details": json.dumps({"Color": "Navy", "Size": ["S", "M", "L", "M"]})},
            {"parent_asin": "K1", "title": "Paring Knife", "price": 9.0, "categories": ["Kitchen", "Knives"],
             "details": json.dumps({"Blade Length": "3.5 Inches"})}]
    path = tmp_path / "cat.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cat = load_catalog(path)
    assert cat.get("M1").variants == (Variant("M1-v1", "M1", "color", "Black", 15.0, 30),)
    dress = cat.get("D1")
    assert dress.attributes == {"color": "Navy", "size": "S"}
    assert [(v.attribute, v.value, v.price, v.stock) for v in dress.variants] == [
        ("size", "S", 30.0, 3), ("size", "M", 30.0, 2), ("size", "L", 30.0, 2)]
    assert [(v.attribute, v.value) for v in cat.get("K1").variants] == [("option", "Standard")]


def test_amazon_schema_parquet_is_read_in_batches_with_malformed_rows(tmp_path, hf_tmp, monkeypatch):
    """The 2M-row path: a parquet file in the Amazon/Amazebay metadata schema is read record
    batch by record batch (pyarrow iter_batches, no `datasets` copy), each batch turned into
    Arrow columns at once; malformed rows are skipped or defaulted as in one pass."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import ecom_bench.catalog.loaders as loaders

    rows = []
    for i in range(23):
        r = {"parent_asin": f"A{i:04d}", "title": f"Thing {i}", "description": json.dumps([f"d{i}"]),
             "main_category": "Home", "categories": json.dumps(["Home", "Kitchen"]), "store": "S",
             "price": f"${i + 1}.50", "average_rating": "4.5", "rating_number": str(i),
             "features": json.dumps(["f"]), "details": json.dumps({"Color": "Red"})}
        if i == 3:
            r["title"] = ""  # no title: skipped
        if i == 5:
            r["price"] = "call us"  # unparseable price: skipped
        if i == 7:
            r["details"] = "{not json"  # malformed details: no attributes
        if i == 9:
            r["parent_asin"] = "A0001"  # duplicate id: the first row wins
        if i == 11:
            r["average_rating"] = "lots"  # unparseable rating: 0.0
        if i == 13:
            r["categories"] = "[]"  # empty path: main_category
        rows.append(r)
    src = tmp_path / "amazebay.parquet"
    pq.write_table(pa.Table.from_pylist(rows), src, row_group_size=5)
    monkeypatch.setattr(loaders, "_BATCH_ROWS", 4)  # many batches
    seen_batches: list[int] = []
    real = loaders._parquet_batches

    def counting(files, columns):
        for b in real(files, columns):
            seen_batches.append(b[1])
            yield b

    monkeypatch.setattr(loaders, "_parquet_batches", counting)
    cat = load_catalog(src, cache_dir=hf_tmp)
    assert len(seen_batches) > 3 and sum(seen_batches) == 23
    ids = [p.id for p in cat]
    assert ids == [f"A{i:04d}" for i in range(23) if i not in (3, 5, 9)]
    assert cat["A0007"].attributes == {} and cat["A0011"].rating == 0.0
    assert cat["A0013"].category == ("Home",) and cat["A0000"].category == ("Home", "Kitchen")
    assert cat["A0002"].price == 3.5 and cat["A0002"].description == "d2"
    # the same rows as JSON lines (through `datasets`) give the same catalogue
    via_json = load_catalog(_write_jsonl(tmp_path / "amazebay.jsonl", rows), cache_dir=hf_tmp)
    assert via_json.products == cat.products
    assert load_catalog(src, cache_dir=hf_tmp, limit=5).products == cat.products[:5]


def test_a_cached_load_opens_the_mapped_file_and_an_edited_file_is_read_again(tmp_path, monkeypatch, caplog):
    """`use_cache`: the second load reads no row (the products come from the memory-mapped
    cache file, equal); editing the file, or asking for other options, loads it afresh; a
    damaged cache file is replaced with a warning."""
    import os

    monkeypatch.setenv("ECOM_BENCH_CACHE", str(tmp_path / "cache"))
    rows = [{"parent_asin": f"A{i}", "title": f"Lamp {i}, brass", "price": f"${i + 3}.00",
             "categories": ["Home", "Lighting", "Lamps"], "details": json.dumps({"Color": "Brass"})} for i in range(12)]
    src = tmp_path / "lamps.parquet"
    pq.write_table(pa.Table.from_pylist(rows), src)
    first = load_catalog(src, use_cache=True)
    cached = loaders.loaded_cache_path(src, limit=None, missing_price="skip")
    assert cached is not None and cached.exists() and first.name == "lamps"

    def no_read(*a, **k):
        raise AssertionError("the file was read again")

    monkeypatch.setattr(loaders, "_load", no_read)
    again = load_catalog(src, use_cache=True)
    assert list(again.products) == list(first.products) and again.fingerprint == first.fingerprint
    monkeypatch.undo()
    monkeypatch.setenv("ECOM_BENCH_CACHE", str(tmp_path / "cache"))

    other = loaders.loaded_cache_path(src, limit=5, missing_price="skip")
    assert other != cached and len(load_catalog(src, use_cache=True, limit=5)) == 5
    st = os.stat(src)
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # an edited file: another key
    assert loaders.loaded_cache_path(src, limit=None, missing_price="skip") != cached

    damaged = loaders.loaded_cache_path(src, limit=None, missing_price="skip")
    damaged.parent.mkdir(parents=True, exist_ok=True)
    damaged.write_bytes(b"not arrow")
    with caplog.at_level("WARNING"):
        reloaded = load_catalog(src, use_cache=True)
    assert "unreadable" in caplog.text and list(reloaded.products) == list(first.products)
    assert Catalog.open(damaged).fingerprint == first.fingerprint  # rewritten
