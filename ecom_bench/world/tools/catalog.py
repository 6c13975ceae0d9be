"""Catalogue tools: search, product details, variants, and the customer's visit history."""

from __future__ import annotations

from ecom_bench.world._tooling import DEFAULT_SEARCH_LIMIT, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, ToolBase, ToolError, _json, tool_method


class CatalogTools(ToolBase):
    @tool_method("read")
    def catalog_search(
        self,
        query: str,
        category: str | None = None,
        brand: str | None = None,
        min_price: float | None = None,
        max_price: float | None = None,
        min_rating: float | None = None,
        max_ship_days: int | None = None,
        limit: int = DEFAULT_SEARCH_LIMIT,
    ) -> str:
        """Search the store's catalogue by free text, with optional filters.

        Args:
            query: What to look for, e.g. a product name, brand, model or description.
            category: Only products in this category (any level of the path, e.g. "Wall Chargers").
            brand: Only products of this brand.
            min_price: Lowest price in USD.
            max_price: Highest price in USD.
            min_rating: Lowest average star rating (1-5).
            max_ship_days: Only products that ship within this many days.
            limit: How many results to return (1-20, default 10).
        """
        from ecom_bench.catalog.search import SearchFilters

        query = query.strip()
        if not query:
            raise ToolError("query must not be empty")
        if len(query) > MAX_QUERY_CHARS:
            raise ToolError(f"query is too long ({len(query)} characters, at most {MAX_QUERY_CHARS})")
        if not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise ToolError(f"limit must be between 1 and {MAX_SEARCH_LIMIT}, got {limit}")
        filters = SearchFilters(
            category=category or None,
            brand=brand or None,
            min_price=min_price,
            max_price=max_price,
            min_rating=min_rating,
            max_ship_days=max_ship_days,
        )
        products = self.world.search(query, filters, limit)
        results = [self._product_summary(p) for p in products]
        return _json({"results": results, "count": len(results)})

    @tool_method("read")
    def catalog_get_product(self, product_id: str) -> str:
        """Get the full details of one product: description, attributes, features and variants.

        Args:
            product_id: The product's id, as returned by catalog_search.
        """
        p = self._product(product_id)
        detail = self._product_summary(p)
        detail.update(
            description=p.description,
            attributes=p.attributes,
            features=list(p.features),
            rating_count=p.rating_count,
            store=p.store,
        )
        return _json(detail)

    @tool_method("read")
    def catalog_get_variants(self, product_id: str) -> str:
        """List a product's variants (e.g. sizes, colours, connectors) with price and stock.

        Args:
            product_id: The product's id, as returned by catalog_search.
        """
        p = self._product(product_id)
        self._see(p.id, *(v.id for v in p.variants))
        attribute = p.variants[0].attribute if p.variants else None
        return _json(
            {
                "product_id": p.id,
                "title": p.title,
                "variant_attribute": attribute,
                "variants": [self._variant_detail(p, v) for v in p.variants],
            }
        )

    @tool_method("read")
    def user_get_visit_history(self) -> str:
        """Show the products this customer viewed recently, newest first."""
        visits = []
        for visit in sorted(self.world.visit_history, key=lambda r: r.days_ago):
            p = self.world.product(visit.product_id)
            if p is None:
                continue
            summary = self._product_summary(p)
            summary["viewed_days_ago"] = visit.days_ago
            visits.append(summary)
        return _json({"visits": visits})
