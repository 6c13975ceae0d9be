"""Catalogue data model: products and their variants.

Plain dataclasses (no Inspect, no pydantic validation on the hot path): a 2M-row
catalogue is built and read in bulk, so construction must stay cheap. Every field of
The design's product record (docs/design.md) is here; loaders map other schemas onto it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Variant:
    """One purchasable option of a product, distinguished by a single attribute.

    Real catalogues are sparse in variants, so variants are synthesised per product
    along the category's most natural attribute (see `catalog.variants`).
    """

    id: str
    product_id: str
    attribute: str
    value: str
    price: float
    stock: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Product:
    """A catalogue product with the design's fields.

    `category` is the path from the root ("Electronics > Chargers > Wall Chargers");
    `attributes` holds the structured facts that variants and user constraints use
    (connector_type, wattage, size, color, material, item_form, ...).
    """

    id: str
    title: str
    description: str
    category: tuple[str, ...]
    brand: str
    attributes: dict[str, str]
    price: float
    rating: float
    rating_count: int
    ship_days: int
    stock: int
    features: tuple[str, ...] = ()
    store: str = ""
    variants: tuple[Variant, ...] = field(default=())

    @property
    def category_path(self) -> str:
        return " > ".join(self.category)

    @property
    def top_category(self) -> str:
        return self.category[0] if self.category else ""

    @property
    def leaf_category(self) -> str:
        return self.category[-1] if self.category else ""

    def variant(self, variant_id: str) -> Variant | None:
        for v in self.variants:
            if v.id == variant_id:
                return v
        return None

    def search_text(self) -> str:
        """The text that is embedded and lexically indexed for search."""
        attrs = " ".join(f"{v}" for v in self.attributes.values())
        return f"{self.title}. {self.brand}. {self.category_path}. {attrs}"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["category"] = list(self.category)
        d["features"] = list(self.features)
        d["variants"] = [v.to_dict() for v in self.variants]
        return d
