"""Recommendation tools (E_PD, E_SUB): the final answer is a ranked list of product ids."""

from __future__ import annotations

from ecom_bench.world._tooling import ToolBase, ToolError, _json, tool_method


class RecommendTools(ToolBase):
    """Recommendation tools (E_PD, E_SUB)."""

    @tool_method("final")
    def recommend_products(self, product_ids: list[str]) -> str:
        """Your final answer to a product recommendation request: the products you recommend, best first.

        Call it once, when you are done, with at most as many products as the customer asked for.

        Args:
            product_ids: Product ids as returned by the catalogue tools, best match first, no duplicates.
        """
        ids = [str(i).strip() for i in product_ids]
        self._reference(*ids)
        limit = self.world.difficulty.k_rec
        if not ids:
            raise ToolError("product_ids is empty: recommend at least one product id.")
        if len(ids) > limit:
            raise ToolError(f"Too many products: {len(ids)} given, at most {limit} may be recommended. "
                            "Keep your best ones.")
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ToolError(f"Duplicate product ids: {', '.join(duplicates)}. List each product once.")
        unknown = [i for i in ids if self.world.product(i) is None]
        if unknown:
            raise ToolError(f"No product with id {', '.join(repr(i) for i in unknown)}. "
                            "Use catalog_search to find product ids.")
        self._answer("recommend_products", {"product_ids": ids})
        return _json({"recommended": ids, "status": "Your recommendation has been sent to the customer."})
