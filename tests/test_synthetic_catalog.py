"""Synthetic catalogue: determinism, naming, taxonomy coverage, variants, content hygiene."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter

import pytest

from ecom_bench.catalog import Catalog, Product
from ecom_bench.catalog.naming import short_name, short_name_from_title
from ecom_bench.catalog.synthetic import generate_synthetic_catalog, product_id
from ecom_bench.catalog.taxonomy import (
    ATTRIBUTE_POOLS,
    LEAVES,
    TOP_CATEGORIES,
    all_product_lines,
)
from ecom_bench.catalog.variants import (
    FALLBACK_ATTRIBUTE,
    FALLBACK_VALUE,
    VARIANT_ATTRIBUTE_PRIORITY,
    attribute_value_pool,
    canonical_top_category,
    synthesize_variants,
    variant_attribute,
)

TOPS = {
    "Electronics",
    "Clothing",
    "Home & Kitchen",
    "Beauty",
    "Sports & Outdoors",
    "Toys & Games",
    "Office Products",
    "Pet Supplies",
    "Grocery",
    "Tools & Home Improvement",
}
N = 2000


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return generate_synthetic_catalog(N, seed=0)


def _content(p: Product) -> list[str]:
    return [
        p.title,
        p.description,
        *p.features,
        p.store,
        p.brand,
        *p.attributes.values(),
        *(v.value for v in p.variants),
    ]


# ------------------------------------------------------------------ taxonomy


def test_taxonomy_shape():
    assert {t.name for t in TOP_CATEGORIES} == TOPS
    for t in TOP_CATEGORIES:
        assert 5 <= len(t.leaves) <= 8, t.name
        assert 8 <= len(t.brands) <= 12, t.name
        assert t.name in VARIANT_ATTRIBUTE_PRIORITY
        for leaf in t.leaves:
            assert len(leaf.path) == 3 and leaf.path[0] == t.name
            assert leaf.attributes and all(len(pool) >= 3 for _, pool in leaf.attributes), leaf.path
            assert len(leaf.features) >= 6
            low, high = leaf.price_range
            assert 0 < low < high
            # the leaf has at least one attribute of its category's priority list
            assert set(VARIANT_ATTRIBUTE_PRIORITY[t.name]) & set(leaf.attribute_names), leaf.path
    assert len({leaf.name for leaf in LEAVES}) == len(LEAVES)  # leaf names are unique
    assert len({leaf.noun for leaf in LEAVES}) == len(LEAVES)
    brands = [b for t in TOP_CATEGORIES for b in t.brands]
    assert len(set(brands)) == len(brands)
    assert len(all_product_lines()) >= 300


def test_no_separators_inside_names():
    # brand, line and noun never contain a comma: the short name is exactly "{brand} {line} {noun}"
    for t in TOP_CATEGORIES:
        for piece in (*t.brands, *t.product_lines, *(leaf.noun for leaf in t.leaves)):
            assert "," not in piece and " - " not in piece and "(" not in piece, piece


# ------------------------------------------------------------------ determinism


def test_deterministic_same_seed(cat):
    again = generate_synthetic_catalog(N, seed=0)
    assert again.products == cat.products
    assert again.fingerprint == cat.fingerprint
    assert again.name == cat.name == f"synthetic-{N}-s0"


def test_different_seed_differs(cat):
    other = generate_synthetic_catalog(N, seed=1)
    assert other.name == f"synthetic-{N}-s1"
    assert other.fingerprint != cat.fingerprint
    same_title = sum(a.title == b.title for a, b in zip(cat, other, strict=True))
    assert same_title < N // 20


def test_deterministic_across_processes(cat):
    code = (
        "from ecom_bench.catalog.synthetic import generate_synthetic_catalog as g;"
        f"c = g({N}, 0); print(c.fingerprint, c.products[7].variants)"
    )
    out = [
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(s)},
        ).stdout
        for s in (1, 2)
    ]
    assert out[0] == out[1]
    assert out[0].split()[0] == cat.fingerprint


# ------------------------------------------------------------------ ids, names, coverage


@pytest.mark.parametrize("n", [0, 1, 10, 73, 500])
def test_size_respected(n):
    c = generate_synthetic_catalog(n, seed=3)
    assert len(c) == n
    assert [p.id for p in c] == [product_id(i) for i in range(n)]
    if n >= 10:
        assert {p.top_category for p in c} == TOPS
    if n >= len(LEAVES):
        assert len(c.by_leaf_category) == len(LEAVES)


def test_bad_size_rejected():
    with pytest.raises(ValueError):
        generate_synthetic_catalog(-1)


def test_ids_and_short_names_unique(cat):
    ids = [p.id for p in cat]
    assert len(set(ids)) == N
    assert all(re.fullmatch(r"P\d{7}", i) for i in ids)
    assert ids[122] == "P0000123"
    names = [short_name(p).lower() for p in cat]
    assert len(set(names)) == N
    for p in cat:
        assert short_name(p) == p.title.split(",")[0].strip()
        assert short_name(p).startswith(p.brand + " ")
        assert short_name(p).endswith(next(leaf.noun for leaf in LEAVES if leaf.path == p.category))


def test_short_names_unique_at_default_size():
    c = generate_synthetic_catalog(20_000, seed=0)
    assert len(c) == 20_000
    assert len({short_name(p).lower() for p in c}) == 20_000
    assert len(c.by_leaf_category) == len(LEAVES)
    counts = Counter(p.leaf_category for p in c).values()
    assert max(counts) - min(counts) <= 1  # spread evenly over the leaves


def test_all_top_categories_and_leaves(cat):
    assert {p.top_category for p in cat} == TOPS
    assert len(cat.by_leaf_category) == len(LEAVES)
    assert all(len(p.category) == 3 for p in cat)


# ------------------------------------------------------------------ fields


def test_field_ranges(cat):
    for p in cat:
        assert p.price > 0 and round(p.price, 2) == p.price
        low, high = next(leaf.price_range for leaf in LEAVES if leaf.path == p.category)
        assert low - 1 <= p.price <= high + 1
        assert 1.0 <= p.rating <= 5.0 and round(p.rating, 1) == p.rating
        assert p.rating_count >= 0
        assert 1 <= p.ship_days <= 10
        assert p.stock >= 0
        assert 3 <= len(p.features) <= 5 and len(set(p.features)) == len(p.features)
        assert p.description and p.store and p.brand
        leaf = next(leaf for leaf in LEAVES if leaf.path == p.category)
        assert list(p.attributes) == list(leaf.attribute_names)
        assert all(v in leaf.pools[a] for a, v in p.attributes.items())
        assert p.title.endswith(p.features[0])  # the title's feature is the first bullet


def test_distributions_look_realistic(cat):
    ratings = [p.rating for p in cat]
    assert 3.9 < sum(ratings) / N < 4.5  # skewed high
    assert min(ratings) < 3.0  # but some poorly rated products exist
    out = sum(p.stock == 0 for p in cat) / N
    assert 0.02 < out < 0.09
    assert sum(p.ship_days <= 3 for p in cat) / N > 0.5  # skewed low
    assert len({p.store for p in cat}) > 50
    cents = Counter(round(p.price % 1, 2) for p in cat)
    assert cents.most_common(1)[0][0] == 0.99


def test_no_placeholders_or_blank_text(cat):
    for p in cat:
        for text in _content(p):
            assert "{" not in text and "}" not in text, text
            assert text == text.strip() and "  " not in text, repr(text)
            assert text, p.id


# ------------------------------------------------------------------ variants


def test_every_product_has_three_variants(cat):
    for p in cat:
        assert len(p.variants) == 3, p.id
        assert [v.id for v in p.variants] == [f"{p.id}-v{k}" for k in (1, 2, 3)]
        assert all(v.product_id == p.id for v in p.variants)
        attr = p.variants[0].attribute
        assert all(v.attribute == attr for v in p.variants)
        assert attr == variant_attribute(p.category, p.attributes)
        values = [v.value for v in p.variants]
        assert len(set(values)) == 3
        assert p.attributes[attr] in values  # the product's own value is one of them
        assert all(v.price > 0 for v in p.variants)
        if p.stock > 0:
            assert all(v.stock > 0 for v in p.variants)
            assert sum(v.stock for v in p.variants) == p.stock or p.stock < 3
        else:
            assert all(v.stock == 0 for v in p.variants)


def test_own_value_position_varies(cat):
    pos = Counter(
        next(k for k, v in enumerate(p.variants) if v.value == p.attributes[v.attribute]) for p in cat
    )
    assert set(pos) == {0, 1, 2}
    assert min(pos.values()) > N / 5


def test_variant_attribute_follows_priority(cat):
    by_top = Counter((p.top_category, p.variants[0].attribute) for p in cat)
    assert by_top[("Clothing", "size")] == sum(p.top_category == "Clothing" for p in cat)
    # electronics vary by connector where the product has one (chargers, cables, hubs, keypads)
    for p in cat:
        if p.top_category == "Electronics" and "connector_type" in p.attributes:
            assert p.variants[0].attribute == "connector_type"
        if p.leaf_category == "Air Fryers":
            assert p.variants[0].attribute == "material"
    # title = "{short name}, {spec parts}, {feature}", the spec parts leaving out the varying attribute
    for p in cat:
        leaf = next(leaf for leaf in LEAVES if leaf.path == p.category)
        vattr = p.variants[0].attribute
        spec = " ".join([p.attributes[a] for a in leaf.title_attrs if a != vattr][:2])
        parts = [short_name(p), spec, p.features[0]] if spec else [short_name(p), p.features[0]]
        assert p.title == ", ".join(parts)


def test_synthesize_variants_pure_and_seeded():
    attrs = {"connector_type": "USB-C", "wattage": "65W"}
    cat3 = ("Electronics", "Chargers & Power", "Wall Chargers")
    a = synthesize_variants("X1", cat3, attrs, 39.99, 100)
    assert a == synthesize_variants("X1", cat3, attrs, 39.99, 100)
    assert [v.attribute for v in a] == ["connector_type"] * 3
    values = {v.value for v in a}
    assert "USB-C" in values and values <= {"USB-C", "Lightning", "Micro-USB", "USB-A"}
    own = next(v for v in a if v.value == "USB-C")
    assert own.price == 39.99
    assert all(0.85 * 39.99 <= v.price <= 1.2 * 39.99 for v in a)
    assert sum(v.stock for v in a) == 100
    # different ids → different draws somewhere
    draws = {tuple(v.value for v in synthesize_variants(f"X{i}", cat3, attrs, 39.99, 100)) for i in range(40)}
    assert len(draws) > 5


@pytest.mark.parametrize("stock, want", [(0, [0, 0, 0]), (1, [1, 1, 1]), (2, [1, 1, 1])])
def test_small_stock_split(stock, want):
    vs = synthesize_variants("S1", ("Clothing", "Men's Clothing", "T-Shirts"), {"size": "M"}, 10.0, stock)
    assert sorted(v.stock for v in vs) == want


def test_variants_for_real_catalogue_inputs():
    # Amazon-style top categories map onto the taxonomy's priority lists
    assert canonical_top_category(("Clothing, Shoes & Jewelry", "Men")) == "Clothing"
    assert canonical_top_category(("All Electronics",)) == "Electronics"
    assert canonical_top_category(("Amazon Home",)) == "Home & Kitchen"
    assert canonical_top_category(("Tools & Home Improvement",)) == "Tools & Home Improvement"
    assert canonical_top_category(("Nothing Like It",)) is None
    vs = synthesize_variants(
        "B01", ("Clothing, Shoes & Jewelry",), {"color": "Black", "size": "US 9"}, 50.0, 9
    )
    assert [v.attribute for v in vs] == ["size"] * 3
    assert {v.value for v in vs} - {"US 9"} <= set(
        attribute_value_pool("size", ("Clothing", "Shoes", "Running Shoes"))
    )
    # unknown value with a number: numeric siblings with the same unit
    vs = synthesize_variants("B02", ("Amazon Home",), {"capacity": "32 Ounces"}, 20.0, 9)
    assert all(v.value.endswith(" Ounces") for v in vs)
    # case-insensitive: "usb-c" is not offered again as "USB-C"
    vs = synthesize_variants("B03", ("All Electronics",), {"connector_type": "usb-c"}, 20.0, 9)
    assert [v.value.lower() for v in vs].count("usb-c") == 1
    # no usable attribute: one "Standard" option carrying the product's price and stock
    for attrs in ({}, {"brand": "X", "model": "Y"}, {"color": "  "}):
        (only,) = synthesize_variants("B04", ("Misc",), attrs, 5.0, 7)
        assert (only.id, only.attribute, only.value, only.price, only.stock) == (
            "B04-v1",
            FALLBACK_ATTRIBUTE,
            FALLBACK_VALUE,
            5.0,
            7,
        )
    # an empty priority attribute falls through to the next one
    assert variant_attribute(("Clothing",), {"size": "", "color": "Red"}) == "color"


def test_no_confusable_variant_values(cat):
    for p in cat:
        words = [set(re.findall(r"[a-z0-9.]+", v.value.lower())) for v in p.variants]
        for i in range(3):
            for j in range(i + 1, 3):
                assert not (words[i] <= words[j] or words[j] <= words[i]), [v.value for v in p.variants]


def test_attribute_value_pool():
    assert "USB-C" in attribute_value_pool("connector_type")
    assert "HDMI" in attribute_value_pool("connector_type")
    assert attribute_value_pool("size")[:6] != [] and "XS" in attribute_value_pool("size")
    assert attribute_value_pool("no_such_attribute") == []
    for attr, pool in ATTRIBUTE_POOLS.items():
        assert attribute_value_pool(attr) == list(pool)
        assert len(set(pool)) == len(pool)


# ------------------------------------------------------------------ naming


@pytest.mark.parametrize(
    "title, want",
    [
        ("VoltEdge PowerPort Wall Charger, 65W USB-C, GaN Fast Charging", "VoltEdge PowerPort Wall Charger"),
        ("  Anker Nano Charger ,  20W", "Anker Nano Charger"),
        ("One two three four five six seven eight", "One two three four five six seven eight"),
        ("Amazon Basics Wireless Computer Mouse with USB Nano Receiver", "Amazon Basics Wireless Computer Mouse"),
        ("Logitech M510 Wireless Computer Mouse for PC with USB Receiver", "Logitech M510 Wireless Computer Mouse"),
        ("Razer DeathAdder Essential Gaming Mouse: 6400 DPI Optical Sensor, White", "Razer DeathAdder Essential Gaming Mouse"),
        ("Anker PowerCore 10,000mAh Portable Charger, Black", "Anker PowerCore 10,000mAh Portable Charger"),
        ("Acme Ultra Soft Premium Deluxe Extra Large Plush Bath Towel Set Bundle 6 Piece Grey White",
         "Acme Ultra Soft Premium Deluxe Extra Large Plush Bath Towel Set Bundle"),
        ("one two three four five six seven eight nine ten eleven twelve thirteen", "one two three four five six"),
        ("Acme Widget - Blue, Large", "Acme Widget"),
        ("Acme Widget (2-Pack)", "Acme Widget"),
        (", leading comma title here", "leading comma title here"),
        ("", ""),
    ],
)
def test_short_name_from_title(title, want):
    assert short_name_from_title(title) == want
