"""Catalogue: products, variants, synthetic generation, loaders, embedders and search."""

from ecom_bench.catalog.catalog import Catalog, CatalogTooSparse, draws
from ecom_bench.catalog.models import Product, Variant

__all__ = ["Catalog", "CatalogTooSparse", "Product", "Variant", "draws"]
