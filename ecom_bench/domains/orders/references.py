"""How a customer describes one order line ("the black wall charger", "my second-oldest wall
charger order"), and which lines of an account a description fits.

A reference is checked against the records (`records.py`) and the catalogue only, never a
`World`: E_TRACK and E_RETURN pick unique ones at build time, and their customers and
verifiers resolve them the same way.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ecom_bench.catalog import Catalog, Product
from ecom_bench.catalog.naming import short_name
from ecom_bench.catalog.taxonomy import LEAF_BY_PATH
from ecom_bench.domains.orders.records import Order, OrderLine, line_leaf


def product_noun(product: Product) -> str:
    """What a shopper calls the product's kind ("wall charger"): the leaf's title noun."""
    leaf = LEAF_BY_PATH.get(tuple(product.category))
    noun = leaf.noun if leaf is not None else product.leaf_category
    return noun.lower()


class RefKind(str, enum.Enum):
    ORDER_ID = "order_id"  # "order ORD-123456"
    TITLE = "title"  # "the VoltEdge PowerPort Wall Charger I ordered recently"
    BRAND = "brand"  # "the VoltEdge wall charger"
    DATE = "date"  # "the wall charger I ordered on June 3" / "12 days ago"
    NOTE = "note"  # "the wall charger I ordered for the office"
    VARIANT = "variant"  # "the black wall charger"
    ORDINAL = "ordinal"  # "my second-oldest wall charger order" (by date among the leaf's lines, `ORDINALS`)
    NOUN = "noun"  # "the wall charger" (unique only when no look-alike exists)


@dataclass(frozen=True)
class OrderReference:
    """A description of one order line that a customer can give; `matches` says which lines fit it."""

    kind: RefKind
    leaf: str  # the described line's leaf category ("" for ORDER_ID)
    value: str  # order id, short name, brand, ISO date, note, variant value ("" for NOUN)

    def matches(self, order: Order, line: OrderLine, catalog: Catalog) -> bool:
        if self.kind is RefKind.ORDER_ID:
            return order.order_id == self.value
        product = catalog.get(line.product_id)
        if product is None or product.leaf_category != self.leaf:
            return False
        if self.kind is RefKind.TITLE:
            return short_name(product) == self.value
        if self.kind is RefKind.BRAND:
            return product.brand == self.value
        if self.kind is RefKind.DATE:
            return order.placed_at.date().isoformat() == self.value
        if self.kind is RefKind.NOTE:
            return order.note == self.value
        if self.kind is RefKind.VARIANT:
            variant = product.variant(line.variant_id) if line.variant_id else None
            return variant is not None and variant.value == self.value
        return True  # NOUN: any line of the leaf (ORDINAL is resolved by `matching_lines`)

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "leaf": self.leaf, "value": self.value}


#: Ordinal references, by value: the line's place among the account's lines of its kind, oldest
#: first (negative: from the newest). Each value names one end explicitly ("my second-oldest
#: wall charger order"): "the third wall charger order I placed" was read from either end.
ORDINALS: dict[str, int] = {"oldest": 0, "second_oldest": 1, "third_oldest": 2,
                            "latest": -1, "second_latest": -2, "third_latest": -3}


def _lines_of_leaf(orders: list[Order], leaf: str, catalog: Catalog) -> list[tuple[Order, OrderLine]]:
    """The account's lines of one leaf category, in account order."""
    return [(o, ln) for o in orders for ln in o.lines if line_leaf(catalog, ln) == leaf]


def _by_date(hits: list[tuple[Order, OrderLine]]) -> list[tuple[Order, OrderLine]]:
    return sorted(hits, key=lambda h: h[0].placed_at)


def _leaf_lines(orders: list[Order], leaf: str, catalog: Catalog) -> list[tuple[Order, OrderLine]]:
    """The account's lines of one leaf category, oldest order first."""
    return _by_date(_lines_of_leaf(orders, leaf, catalog))


def _matches(orders: list[Order], ref: OrderReference, catalog: Catalog,
             of_leaf: list[tuple[Order, OrderLine]]) -> list[tuple[Order, OrderLine]]:
    """`matching_lines` given the account's lines of `ref.leaf` (`of_leaf`, account order): only
    those can match a description, so only their products are read."""
    if ref.kind is RefKind.ORDER_ID:
        return [(o, ln) for o in orders if o.order_id == ref.value for ln in o.lines]
    if ref.kind is RefKind.ORDINAL:
        lines = _by_date(of_leaf)
        index = ORDINALS[ref.value]
        if len(lines) < 2 or not -len(lines) <= index < len(lines):
            return []
        return [lines[index]]
    return [(o, ln) for o, ln in of_leaf if ref.matches(o, ln, catalog)]


def matching_lines(orders: list[Order], ref: OrderReference, catalog: Catalog) -> list[tuple[Order, OrderLine]]:
    of_leaf = [] if ref.kind is RefKind.ORDER_ID else _lines_of_leaf(orders, ref.leaf, catalog)
    return _matches(orders, ref, catalog, of_leaf)


def _ordinal_of(orders: list[Order], order: Order, line: OrderLine, leaf: str, catalog: Catalog,
                of_leaf: list[tuple[Order, OrderLine]] | None = None) -> str | None:
    """The ordinal from the nearer end of the line's kind (None beyond the third from either end)."""
    by_date = _by_date(of_leaf) if of_leaf is not None else _leaf_lines(orders, leaf, catalog)
    lines = [(o.order_id, ln.line_id) for o, ln in by_date]
    if len(lines) < 2:
        return None
    index = lines.index((order.order_id, line.line_id))
    from_newest = index - len(lines)
    fits = [v for v, i in ORDINALS.items() if i in (index, from_newest)]
    steps = lambda v: ORDINALS[v] if ORDINALS[v] >= 0 else -ORDINALS[v] - 1  # noqa: E731
    return min(fits, key=steps) if fits else None


def _references(orders: list[Order], order: Order, line: OrderLine, catalog: Catalog,
                of_leaf: list[tuple[Order, OrderLine]] | None) -> list[OrderReference]:
    product = catalog.get(line.product_id)
    assert product is not None
    leaf = product.leaf_category
    refs = [OrderReference(RefKind.ORDER_ID, "", order.order_id),
            OrderReference(RefKind.TITLE, leaf, short_name(product)),
            OrderReference(RefKind.BRAND, leaf, product.brand),
            OrderReference(RefKind.DATE, leaf, order.placed_at.date().isoformat()),
            OrderReference(RefKind.NOUN, leaf, "")]
    if order.note:
        refs.append(OrderReference(RefKind.NOTE, leaf, order.note))
    variant = product.variant(line.variant_id) if line.variant_id else None
    if variant is not None:
        refs.append(OrderReference(RefKind.VARIANT, leaf, variant.value))
    ordinal = _ordinal_of(orders, order, line, leaf, catalog, of_leaf)
    if ordinal is not None:
        refs.append(OrderReference(RefKind.ORDINAL, leaf, ordinal))
    return refs


def references_for(orders: list[Order], order: Order, line: OrderLine, catalog: Catalog) -> list[OrderReference]:
    """Every description of (order, line) among `orders` a customer could give, unique or not."""
    return _references(orders, order, line, catalog, None)


def unique_references(orders: list[Order], order: Order, line: OrderLine, catalog: Catalog) -> list[OrderReference]:
    """The descriptions that pick out exactly this line among all `orders` (ORDER_ID: exactly this order).

    Every description but the order id names the line's leaf, so the account's lines of
    that leaf are found once and each description is checked against them alone."""
    of_leaf = _lines_of_leaf(orders, line_leaf(catalog, line) or "", catalog)
    out = []
    for ref in _references(orders, order, line, catalog, of_leaf):
        hits = _matches(orders, ref, catalog, of_leaf)
        if ref.kind is RefKind.ORDER_ID or [(o.order_id, ln.line_id) for o, ln in hits] == \
                [(order.order_id, line.line_id)]:
            out.append(ref)
    return out


__all__ = ["ORDINALS", "OrderReference", "RefKind", "matching_lines", "product_noun", "references_for",
           "unique_references"]
