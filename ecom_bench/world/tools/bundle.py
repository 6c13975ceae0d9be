"""Bundle-planning tools (E_BUNDLE): the final shopping list."""

from __future__ import annotations

from ecom_bench.world._tooling import ToolBase, ToolError, _json, tool_method

#: The longest list submit_bundle accepts (a project needs at most 12 items; room for a few extras).
MAX_BUNDLE_ITEMS = 30


class BundleTools(ToolBase):
    """Bundle-planning tools (E_BUNDLE)."""

    @tool_method("final")
    def submit_bundle(self, product_ids: list[str]) -> str:
        """Submit your final answer to a bundle-planning request: the shopping list for the project.

        Args:
            product_ids: The product ids of the bundle, one product per item the customer needs, as
                returned by catalog_search or catalog_get_product.
        """
        ids = [str(pid).strip() for pid in product_ids]
        self._reference(*ids)
        if not ids:
            raise ToolError("product_ids is empty: list the product id of each item in the bundle.")
        if len(ids) > MAX_BUNDLE_ITEMS:
            raise ToolError(f"A bundle can hold at most {MAX_BUNDLE_ITEMS} products, got {len(ids)}.")
        seen: set[str] = set()
        for pid in ids:
            if pid in seen:
                raise ToolError(f"Product {pid} is listed twice; list each product once.")
            seen.add(pid)
        products = [self._product(pid) for pid in ids]
        total = round(sum(p.price for p in products), 2)
        self._answer("submit_bundle", {"product_ids": ids})
        return _json({"submitted": True, "product_ids": ids, "items": len(ids), "total_price": total})
