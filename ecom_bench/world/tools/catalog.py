"""Catalogue tools: search, product details, variants, and the customer's visit history."""

from __future__ import annotations

from ecom_bench.world._tooling import DEFAULT_SEARCH_LIMIT, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, ToolBase, ToolError, _json, tool_method
from ecom_bench.world.state import ResultPage


#: Filter matches past which a search result suggests narrowing rather than paging on.
MANY_MATCHES = 100


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
        features: list[str] | None = None,
        limit: int = DEFAULT_SEARCH_LIMIT,
        offset: int = 0,
    ) -> str:
        """Search the store's catalogue by free text, with optional filters.

        The filters apply to the whole catalogue: every product that passes them is a
        result, those most relevant to the query first. Without filters, the search reaches
        only the products most relevant to the query's words. The result says how many
        results there are (`total`); when there are more than it shows, `next_offset` is
        where the next page starts: call again with the same arguments and that offset.

        Each result gives the product's listed price, rating, shipping days, stock and its
        variants (variant id -> value); `variant_prices` (variant id -> price) is added when
        a variant costs other than the listed price, and `sold_out_variants` when some are
        sold out. A shopper who needs a given variant pays that variant's price.

        Args:
            query: What to look for, e.g. a product name, brand, model or description.
            category: Only products in this category: one level of a product's category path (e.g. "Wall Chargers" or "wall charger") or several joined by " > ".
            brand: Only products of this brand.
            min_price: Lowest price in USD: the listed price, or with `features` naming a variant's value, that variant's price.
            max_price: Highest price in USD: the listed price, or with `features` naming a variant's value, that variant's price.
            min_rating: Lowest average star rating (1-5).
            max_ship_days: Only products that ship within this many days.
            features: Only products available with every one of these values, e.g. ["USB-C", "Black"]: the value of one of the product's attributes (connector, colour, size, material, ...) or of one of its variants.
            limit: How many results to return (1-20, default 10).
            offset: How many results to skip: a previous result's next_offset, for the next page (default 0).
        """
        from ecom_bench.catalog.search import SearchFilters

        query = query.strip()
        if not query:
            raise ToolError("query must not be empty")
        if len(query) > MAX_QUERY_CHARS:
            raise ToolError(f"query is too long ({len(query)} characters, at most {MAX_QUERY_CHARS})")
        if not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise ToolError(f"limit must be between 1 and {MAX_SEARCH_LIMIT}, got {limit}")
        if offset < 0:
            raise ToolError(f"offset must be 0 or more, got {offset}")
        filters = SearchFilters(
            category=category or None,
            brand=brand or None,
            min_price=min_price,
            max_price=max_price,
            min_rating=min_rating,
            max_ship_days=max_ship_days,
            features=tuple(features) if features else None,
        )
        page = self.world.search_page(query, filters, limit, offset)
        results = [self._product_summary(p) for p in page.products]
        out: dict[str, object] = {"results": results, "count": len(results), "total": page.total}
        if page.next_offset is not None:
            out["next_offset"] = page.next_offset
        engine = self.world.search_engine
        if page.total == 0 and category and engine is not None and not engine.matches_category(category):
            out["similar_categories"] = engine.similar_categories(category)
            out["note"] = (f"No category is called {category!r}. Categories with names like it are in "
                           "similar_categories: call again with one of them as category (or without category).")
        else:
            out["note"] = self._search_note(page)
        return _json(out)

    @staticmethod
    def _search_note(page: ResultPage) -> str:
        """What the result covers and how to get the rest, in words."""
        more = (f" For more, call catalog_search again with the same arguments and offset={page.next_offset}."
                if page.next_offset is not None else "")
        if not page.filtered:
            return (f"The search reaches the {page.total} products most relevant to your query's words; to find "
                    f"others, use other words or filters (filters search the whole catalogue).{more}")
        if page.total == 0:
            return "No product in the catalogue passes these filters."
        if page.next_offset is None:
            if page.offset == 0:
                return f"These are all {page.total} products that pass your filters."
            return f"This is the last page of the {page.total} products that pass your filters."
        order = (f"the {page.ranked} most relevant to your query come first, the others after them in catalogue order"
                 if page.ranked < page.total else "ordered by relevance to your query")
        narrow = " More filters (category, features, ...) narrow them." if page.total > MANY_MATCHES else ""
        return (f"{page.total} products pass your filters ({order}); this page starts at result "
                f"{page.offset + 1}.{more}{narrow}")

    @tool_method("read")
    def catalog_get_product(self, product_id: str) -> str:
        """Get the full details of one product: description, attributes, features and variants
        (with `variant_prices` and `sold_out_variants` as in catalog_search).

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
