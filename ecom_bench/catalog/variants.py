"""Variant synthesis: three purchasable options per product along one natural attribute.

Real catalogues are sparse in variants, so (docs/design.md §Environments, E_CART) every product gets exactly
3 variants along the attribute its category makes most natural (electronics →
connector_type, clothing → size, kitchen → material, ...): the product's own value and
2 plausible distractors ("65W USB-C charger" → {USB-C, Lightning, Micro-USB}).

Everything is a pure function of (product_id, category, attributes, price, stock):
the randomness comes from sha256(product_id), never Python's per-process hash(), so
a product's variants are identical in every process and for every loader.

That is for the synthetic catalogue. A loaded record gets `variants_from_details`
instead: only the values its own details list, never a value they contradict.

Distractors come from, in order: the leaf's own pool (synthetic taxonomy paths); the
generic pool of the attribute when it holds the value ("Red", "usb-c"); the first
taxonomy pool that holds the value (so "US 9" gets other shoe sizes, "Queen" other bed
sizes); numeric siblings of a measured value ("32 Ounces" → "16 Ounces", "64 Ounces");
the generic pool; the union of all pools. No two of a product's values are confusable
("King" / "California King", "USB-C" / "usb-c") unless the pools leave no choice.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from ecom_bench.catalog.models import Variant
from ecom_bench.catalog.taxonomy import (
    APPAREL_SIZES,
    ATTRIBUTE_POOLS,
    LEAF_BY_PATH,
    LEAVES,
    TOP_CATEGORY_BY_NAME,
)

#: Number of variants synthesised per product (docs/design.md: the target + 2 distractors).
N_VARIANTS = 3
#: Attribute/value of the single variant of a product with no usable attribute.
FALLBACK_ATTRIBUTE = "option"
FALLBACK_VALUE = "Standard"

#: Per top category, the attributes to vary along, most natural first.
VARIANT_ATTRIBUTE_PRIORITY: dict[str, list[str]] = {
    "Electronics": ["connector_type", "screen_size", "capacity", "color", "wattage", "size"],
    "Clothing": ["size", "color", "material"],
    "Home & Kitchen": ["material", "capacity", "size", "color", "pack_size", "scent"],
    "Beauty": ["scent", "color", "item_form", "capacity", "size"],
    "Sports & Outdoors": ["size", "weight", "capacity", "color", "material"],
    "Toys & Games": ["color", "size", "pack_size", "edition", "item_form"],
    "Office Products": ["color", "pack_size", "size", "material", "connector_type"],
    "Pet Supplies": ["size", "flavor", "color", "scent", "capacity", "pack_size"],
    "Grocery": ["flavor", "pack_size", "size", "item_form", "capacity"],
    "Tools & Home Improvement": [
        "size",
        "voltage",
        "wattage",
        "length",
        "pack_size",
        "material",
        "color",
        "connector_type",
    ],
}

#: Fallback order for categories outside the taxonomy and for products lacking every
#: attribute of their category's list: any attribute with a value pool, most common first.
DEFAULT_PRIORITY: list[str] = [
    "size",
    "color",
    "connector_type",
    "material",
    "capacity",
    "flavor",
    "scent",
    "item_form",
    "pack_size",
    "screen_size",
    "wattage",
    "length",
    "weight",
    "voltage",
]

#: Aliases of real-catalogue top categories (Amazon-style "main_category" names).
_TOP_ALIASES: dict[str, str] = {
    "all electronics": "Electronics",
    "cell phones & accessories": "Electronics",
    "computers": "Electronics",
    "camera & photo": "Electronics",
    "home audio & theater": "Electronics",
    "car electronics": "Electronics",
    "portable audio & accessories": "Electronics",
    "video games": "Electronics",
    "amazon devices": "Electronics",
    "musical instruments": "Electronics",
    "clothing, shoes & jewelry": "Clothing",
    "amazon fashion": "Clothing",
    "fashion": "Clothing",
    "amazon home": "Home & Kitchen",
    "home": "Home & Kitchen",
    "kitchen & dining": "Home & Kitchen",
    "appliances": "Home & Kitchen",
    "furniture": "Home & Kitchen",
    "home & garden": "Home & Kitchen",
    "all beauty": "Beauty",
    "beauty & personal care": "Beauty",
    "luxury beauty": "Beauty",
    "health & personal care": "Beauty",
    "health & household": "Beauty",
    "sports": "Sports & Outdoors",
    "outdoors": "Sports & Outdoors",
    "toys": "Toys & Games",
    "baby": "Toys & Games",
    "baby products": "Toys & Games",
    "arts, crafts & sewing": "Toys & Games",
    "office supplies": "Office Products",
    "office": "Office Products",
    "pets": "Pet Supplies",
    "grocery & gourmet food": "Grocery",
    "food": "Grocery",
    "industrial & scientific": "Tools & Home Improvement",
    "automotive": "Tools & Home Improvement",
    "tools": "Tools & Home Improvement",
    "patio, lawn & garden": "Tools & Home Improvement",
}
# Keyword rules, checked in order (tools before home: "home improvement" is tools).
_TOP_KEYWORDS: tuple[tuple[str, str], ...] = (
    ("improvement", "Tools & Home Improvement"),
    ("tool", "Tools & Home Improvement"),
    ("hardware", "Tools & Home Improvement"),
    ("electronic", "Electronics"),
    ("phone", "Electronics"),
    ("computer", "Electronics"),
    ("cloth", "Clothing"),
    ("fashion", "Clothing"),
    ("shoe", "Clothing"),
    ("apparel", "Clothing"),
    ("kitchen", "Home & Kitchen"),
    ("home", "Home & Kitchen"),
    ("beauty", "Beauty"),
    ("personal care", "Beauty"),
    ("sport", "Sports & Outdoors"),
    ("outdoor", "Sports & Outdoors"),
    ("toy", "Toys & Games"),
    ("game", "Toys & Games"),
    ("office", "Office Products"),
    ("pet", "Pet Supplies"),
    ("grocery", "Grocery"),
    ("food", "Grocery"),
)

#: Generic pools for values outside every taxonomy pool (real catalogues).
_GENERIC_POOLS: dict[str, tuple[str, ...]] = {
    "size": APPAREL_SIZES,
    "color": ("Black", "White", "Gray", "Navy", "Red", "Blue", "Green", "Silver"),
    "connector_type": ("USB-C", "Lightning", "Micro-USB", "USB-A", "HDMI"),
    "material": ("Stainless Steel", "Plastic", "Aluminum", "Wood", "Glass", "Silicone", "Ceramic"),
    "item_form": ("Liquid", "Cream", "Gel", "Powder", "Spray"),
    "scent": ("Unscented", "Lavender", "Citrus", "Vanilla", "Fresh Linen"),
    "flavor": ("Original", "Vanilla", "Chocolate", "Strawberry", "Unflavored"),
    "pack_size": ("Single", "Pack of 2", "Pack of 4", "Pack of 6"),
    "capacity": ("Small", "Medium", "Large"),
}


def canonical_top_category(category: tuple[str, ...] | list[str]) -> str | None:
    """The taxonomy top category a (possibly real-catalogue) category path belongs to."""
    for part in category:
        if part in TOP_CATEGORY_BY_NAME:
            return part
        key = part.strip().lower()
        if key in _TOP_ALIASES:
            return _TOP_ALIASES[key]
    for part in category[:1]:
        key = part.strip().lower()
        for word, top in _TOP_KEYWORDS:
            if word in key:
                return top
    return None


def attribute_value_pool(attribute: str, category: tuple[str, ...] | None = None) -> list[str]:
    """The values `attribute` takes in the taxonomy: the leaf's pool when `category` is a
    taxonomy leaf that has the attribute, else the union over all leaves ([] if unknown)."""
    if category is not None:
        leaf = LEAF_BY_PATH.get(tuple(category))
        if leaf is not None and attribute in leaf.pools:
            return list(leaf.pools[attribute])
    return list(ATTRIBUTE_POOLS.get(attribute, ()))


def _has_pool(attribute: str) -> bool:
    return attribute in ATTRIBUTE_POOLS or attribute in _GENERIC_POOLS


def variant_attribute(category: tuple[str, ...], attributes: dict[str, str]) -> str | None:
    """The attribute to synthesise variants along, or None if the product has none usable.

    The first attribute of the category's priority list the product has; failing that,
    any of its attributes with a value pool (DEFAULT_PRIORITY order, then its own order).
    """
    usable = tuple(k for k, v in attributes.items() if isinstance(v, str) and v.strip() and _has_pool(k))
    return _variant_attribute(tuple(category), usable) if usable else None


@lru_cache(maxsize=65536)
def _variant_attribute(category: tuple[str, ...], usable: tuple[str, ...]) -> str | None:
    top = canonical_top_category(category)
    for name in (*VARIANT_ATTRIBUTE_PRIORITY.get(top or "", ()), *DEFAULT_PRIORITY, *usable):
        if name in usable:
            return name
    return None


@lru_cache(maxsize=65536)
def _norm(value: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "", value.lower())


@lru_cache(maxsize=4096)
def _family_pool(attribute: str, value_key: str) -> tuple[str, ...]:
    """The pool of the first taxonomy leaf whose `attribute` pool contains the value."""
    for leaf in LEAVES:
        pool = leaf.pools.get(attribute)
        if pool and any(_norm(v) == value_key for v in pool):
            return pool
    return ()


@lru_cache(maxsize=65536)
def _words(value: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z0-9.]+", value.lower()))


@lru_cache(maxsize=65536)
def _confusable(a: str, b: str) -> bool:
    """Same value up to spelling, or one's words inside the other's ("King" / "California King")."""
    if _norm(a) == _norm(b):
        return True
    wa, wb = _words(a), _words(b)
    return bool(wa) and bool(wb) and (wa <= wb or wb <= wa)


_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")


#: Attributes whose values are names, not measurements: no numeric siblings ("3.5mm Aux").
_CATEGORICAL = frozenset({"connector_type", "color", "material", "scent", "flavor", "item_form", "edition",
                          "theme", "resolution"})


def _numeric_siblings(value: str) -> tuple[str, ...]:
    """'32 Ounces' → ('16 Ounces', '64 Ounces', '48 Ounces', '24 Ounces'): same unit, other sizes."""
    m = _NUMBER.search(value)
    if m is None:
        return ()
    x = float(m.group(1))
    if x <= 0:
        return ()
    decimals = len(m.group(1).split(".")[1]) if "." in m.group(1) else 0
    out: list[str] = []
    for factor in (0.5, 2.0, 1.5, 0.75, 3.0):
        y = x * factor
        if decimals == 0 and abs(y - round(y)) > 1e-9:
            continue
        txt = f"{y:.{decimals}f}" if decimals else str(round(y))
        cand = value[: m.start()] + txt + value[m.end() :]
        if _norm(cand) != _norm(value) and cand not in out:
            out.append(cand)
    return tuple(out)


@lru_cache(maxsize=65536)
def _distractor_pools(category: tuple[str, ...], attribute: str, value: str) -> tuple[tuple[str, ...], ...]:
    """The candidate distractors of `value`, as successive pools (own value and repeats removed).

    Order: the leaf's own pool (a taxonomy path); the generic pool when it holds the
    value; the first taxonomy pool holding the value; numeric siblings; the generic
    pool; the union of every leaf's pool.
    """
    key = _norm(value)
    generic = _GENERIC_POOLS.get(attribute, ())
    pools: list[tuple[str, ...]] = []
    leaf = LEAF_BY_PATH.get(category)
    if leaf is not None and attribute in leaf.pools:
        pools.append(leaf.pools[attribute])
    if any(_norm(v) == key for v in generic):
        pools.append(generic)
    pools.append(_family_pool(attribute, key))
    if attribute not in _CATEGORICAL:
        pools.append(_numeric_siblings(value))
    pools.append(generic)
    pools.append(ATTRIBUTE_POOLS.get(attribute, ()))
    taken = {key}
    out: list[tuple[str, ...]] = []
    for pool in pools:
        fresh = []
        for v in pool:
            k = _norm(v)
            if k and k not in taken:
                taken.add(k)
                fresh.append(v)
        if fresh:
            out.append(tuple(fresh))
    return tuple(out)


def _seed_bytes(product_id: str) -> bytes:
    return hashlib.sha256(f"ecom-bench/variants/{product_id}".encode()).digest()


_Pools = tuple[tuple[tuple[str, ...], bool], ...]  # (candidates, whether two of them are confusable)


def _with_conflicts(pools: tuple[tuple[str, ...], ...]) -> _Pools:
    return tuple((p, any(_confusable(a, b) for i, a in enumerate(p) for b in p[i + 1 :])) for p in pools)


@lru_cache(maxsize=65536)
def _candidates(category: tuple[str, ...], attribute: str, value: str) -> tuple[_Pools, _Pools]:
    """(strict, loose) candidate pools: strict ones hold nothing confusable with the value."""
    loose = _distractor_pools(category, attribute, value)
    strict = tuple(p for p in (tuple(v for v in pool if not _confusable(v, value)) for pool in loose) if p)
    return _with_conflicts(strict), tuple((p, False) for p in loose)


def _draw(pools: _Pools, k: int, digest: bytes, strict: bool) -> list[str]:
    out: list[str] = []
    byte = 0
    for pool, conflicts in pools:
        cands = list(pool)
        if strict and out:  # a later pool: drop what is confusable with earlier picks
            cands = [v for v in cands if not any(_confusable(v, c) for c in out)]
        while cands and len(out) < k:
            j = int.from_bytes(digest[byte : byte + 2], "big") % len(cands)
            byte = (byte + 2) % 24
            pick = cands.pop(j)
            out.append(pick)
            if strict and conflicts:
                cands = [v for v in cands if not _confusable(v, pick)]
        if len(out) == k:
            break
    return out


def _pick_distractors(
    category: tuple[str, ...], attribute: str, own: str, k: int, digest: bytes
) -> list[str]:
    """k distractors for `own`, drawn (seeded by digest) from the first pools that have enough.

    No two of the own value and the picks are confusable (see `_confusable`); if the
    pools cannot give k such values, the rule relaxes to plain distinctness.
    """
    strict, loose = _candidates(category, attribute, own)
    out = _draw(strict, k, digest, strict=True)
    if len(out) < k:
        out = _draw(loose, k, digest, strict=False)
    return out


def synthesize_variants(
    product_id: str, category: tuple[str, ...], attributes: dict[str, str], price: float, stock: int
) -> tuple[Variant, ...]:
    """Exactly 3 variants of a product along its natural attribute (1 if it has none).

    Ids are f"{product_id}-v1".."-v3"; the product's own value sits at a seeded position.
    The own value keeps the product's price; each distractor is within -10%..+15% of it
    (rounded to cents, at least 0.01). Stock is split so that it sums to the product's
    stock with every variant > 0 when the stock is >= 3; a stock of 1 or 2 gives each
    variant 1 unit; a stock of 0 gives every variant 0.

    Without a usable attribute the single variant is attribute "option", value
    "Standard", with the product's price and stock.
    """
    attributes = attributes or {}
    category = tuple(category)
    price = round(float(price), 2)
    stock = max(0, int(stock))
    attr = _fast_variant_attribute(category, attributes)
    if attr is not None:
        own = attributes[attr].strip()
        digest = _seed_bytes(product_id)
        distractors = _pick_distractors(category, attr, own, N_VARIANTS - 1, digest)
        if len(distractors) == N_VARIANTS - 1:
            values = [own, *distractors]
            pos = digest[24] % N_VARIANTS  # seeded slot of the product's own value
            values[0], values[pos] = values[pos], values[0]
            prices = _prices(price, pos, digest)
            stocks = _stocks(stock, pos, digest)
            return (
                Variant(f"{product_id}-v1", product_id, attr, values[0], prices[0], stocks[0]),
                Variant(f"{product_id}-v2", product_id, attr, values[1], prices[1], stocks[1]),
                Variant(f"{product_id}-v3", product_id, attr, values[2], prices[2], stocks[2]),
            )
    return (
        Variant(
            id=f"{product_id}-v1",
            product_id=product_id,
            attribute=FALLBACK_ATTRIBUTE,
            value=FALLBACK_VALUE,
            price=price,
            stock=stock,
        ),
    )


_BY_KEYS: dict[tuple[tuple[str, ...], tuple[str, ...]], str | None] = {}


def _fast_variant_attribute(category: tuple[str, ...], attributes: dict[str, str]) -> str | None:
    """variant_attribute, memoised on (category, attribute names) when the pick's value is non-empty.

    Dropping empty-valued attributes can only remove candidates, so the first candidate
    by name is still the answer whenever its own value is non-empty.
    """
    key = (category, tuple(attributes))
    try:
        attr = _BY_KEYS[key]
    except KeyError:
        attr = _BY_KEYS[key] = _variant_attribute(category, tuple(k for k in key[1] if _has_pool(k)))
        if len(_BY_KEYS) > 65536:
            _BY_KEYS.clear()
    if attr is None:
        return None
    v = attributes[attr]
    if isinstance(v, str) and v.strip():
        return attr
    return variant_attribute(category, attributes)


def _prices(price: float, own_index: int, digest: bytes) -> list[float]:
    out = []
    for k in range(N_VARIANTS):
        if k == own_index:
            out.append(price)
            continue
        u = digest[25 + k] / 255.0  # 0..1
        delta = -0.10 + 0.25 * u
        p = round(price * (1.0 + delta), 2)
        if p == price:  # keep distractors distinguishable when the delta rounds away
            p = round(price + 0.50, 2)
        out.append(max(0.01, p))
    return out


def _stocks(stock: int, own_index: int, digest: bytes) -> list[int]:
    if stock <= 0:
        return [0] * N_VARIANTS
    if stock < N_VARIANTS:
        return [1] * N_VARIANTS
    weights = [1 + digest[28 + k] % 4 for k in range(N_VARIANTS)]
    weights[own_index] += 2  # the listed option is usually the best stocked
    rest = stock - N_VARIANTS
    total = sum(weights)
    shares = [1 + rest * w // total for w in weights]
    shares[own_index] += stock - sum(shares)
    return shares


#: Most variants made from one listed detail (a long size run keeps its first values).
MAX_LISTED_VARIANTS = 12


def variants_from_details(
    product_id: str,
    category: tuple[str, ...],
    attributes: dict[str, str],
    price: float,
    stock: int,
    options: Mapping[str, Sequence[str]] | None = None,
) -> tuple[Variant, ...]:
    """The variants of a loaded (real-catalogue) product: only what its data says.

    `synthesize_variants` draws distractor values, which is right for the synthetic
    catalogue (its titles leave the variant attribute out) but not for a real record:
    a mouse whose details say "Color: Black" must not be offered in White, nor a
    stainless steel pan in Wood. So here

    * an attribute the details list several values for (`options`: "Size": ["S", "M",
      "L"]) gives one variant per listed value, along the first such attribute in the
      category's priority order (same order as `variant_attribute`); each has the
      product's price, and the stock is split between them;
    * otherwise the product has one variant: its own stated value of its natural
      attribute ("color: Black"), or "option: Standard" when it states none.

    Deterministic and pure, like `synthesize_variants`: ids are f"{product_id}-v1", ...
    """
    price = round(float(price), 2)
    stock = max(0, int(stock))
    listed = {k: tuple(dict.fromkeys(str(v).strip() for v in vs if str(v).strip()))
              for k, vs in (options or {}).items()}
    listed = {k: vs for k, vs in listed.items() if len(vs) >= 2}
    if listed:
        top = canonical_top_category(tuple(category))
        order = (*VARIANT_ATTRIBUTE_PRIORITY.get(top or "", ()), *DEFAULT_PRIORITY, *listed)
        attr = next(a for a in order if a in listed)
        values = listed[attr][:MAX_LISTED_VARIANTS]
        stocks = _even_split(stock, len(values))
        return tuple(Variant(f"{product_id}-v{j + 1}", product_id, attr, value, price, stocks[j])
                     for j, value in enumerate(values))
    attr = variant_attribute(tuple(category), attributes or {})
    if attr is None:
        return (Variant(f"{product_id}-v1", product_id, FALLBACK_ATTRIBUTE, FALLBACK_VALUE, price, stock),)
    return (Variant(f"{product_id}-v1", product_id, attr, attributes[attr].strip(), price, stock),)


def _even_split(stock: int, n: int) -> list[int]:
    """`stock` over n variants, the first ones taking the remainder; each gets 1 when 0 < stock < n."""
    if stock <= 0:
        return [0] * n
    if stock < n:
        return [1] * n
    return [stock // n + (1 if j < stock % n else 0) for j in range(n)]
