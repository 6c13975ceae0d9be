"""Cart tools: add, remove, set quantities, view, and check out (E_CART's final answer)."""

from __future__ import annotations

from typing import Any

from ecom_bench.world._tooling import ToolBase, ToolError, _check_quantity, _json, tool_method
from ecom_bench.world.state import CartLine


class CartTools(ToolBase):
    def _cart_view(self) -> dict[str, Any]:
        lines = []
        total = 0.0
        for ln in self.world.cart:
            p = self.world.product(ln.product_id)
            assert p is not None  # only catalogue products enter the cart
            v = p.variant(ln.variant_id) if ln.variant_id else None
            price = v.price if v else p.price
            total += price * ln.quantity
            line = {"product_id": p.id, "title": p.title, "quantity": ln.quantity, "unit_price": price}
            if v is not None:
                line["variant_id"] = v.id
                line[v.attribute] = v.value
            lines.append(line)
        return {"lines": lines, "items": self.world.cart_units(), "total": round(total, 2)}

    @tool_method("write")
    def cart_add(self, product_id: str, variant_id: str | None = None, quantity: int = 1) -> str:
        """Add a product (in one variant) to the customer's cart.

        Args:
            product_id: The product's id.
            variant_id: The variant's id (required when the product has several variants).
            quantity: How many units to add (1-99, default 1).
        """
        self._reference(product_id, variant_id)
        _check_quantity(quantity)
        p = self._product(product_id)
        v = self._variant(p, variant_id)
        available = self.world.stock_of(p, v)
        line = self.world.cart_line(p.id, v.id if v else None)
        in_cart = line.quantity if line else 0
        item_id = v.id if v else p.id
        if available <= 0:
            raise self._refusal(f"{item_id} ({p.title}) is out of stock.", p.id, item_id)
        if in_cart + quantity > available:
            raise self._refusal(
                f"Only {available} units of {item_id} are in stock ({in_cart} already in the cart).", p.id, item_id
            )
        if line:
            line.quantity += quantity
        else:
            self.world.cart.append(CartLine(p.id, v.id if v else None, quantity))
        return _json({"added": {"product_id": p.id, "variant_id": v.id if v else None, "quantity": quantity},
                      "cart": self._cart_view()})

    @tool_method("write")
    def cart_remove(self, product_id: str, variant_id: str | None = None) -> str:
        """Remove a line from the cart.

        Args:
            product_id: The product's id.
            variant_id: The variant's id of the line to remove (optional if the product has one line).
        """
        self._reference(product_id, variant_id)
        line = self._find_line(product_id, variant_id)
        self.world.cart.remove(line)
        return _json({"removed": {"product_id": line.product_id, "variant_id": line.variant_id},
                      "cart": self._cart_view()})

    @tool_method("write")
    def cart_set_quantity(self, product_id: str, quantity: int, variant_id: str | None = None) -> str:
        """Set the quantity of a line already in the cart.

        Args:
            product_id: The product's id.
            quantity: The new quantity (1-99). Use cart_remove to delete a line.
            variant_id: The variant's id of the line (optional if the product has one line).
        """
        self._reference(product_id, variant_id)
        _check_quantity(quantity)
        line = self._find_line(product_id, variant_id)
        p = self._product(line.product_id)
        v = p.variant(line.variant_id) if line.variant_id else None
        available = self.world.stock_of(p, v)
        if quantity > available:
            raise self._refusal(f"Only {available} units of {line.variant_id or p.id} are in stock.",
                                p.id, line.variant_id)
        line.quantity = quantity
        return _json({"updated": {"product_id": line.product_id, "variant_id": line.variant_id,
                                  "quantity": quantity}, "cart": self._cart_view()})

    def _find_line(self, product_id: str, variant_id: str | None) -> CartLine:
        product_id = product_id.strip()
        lines = [ln for ln in self.world.cart if ln.product_id == product_id]
        if variant_id:
            lines = [ln for ln in lines if ln.variant_id == variant_id.strip()]
        if not lines:
            what = f"{product_id} / {variant_id}" if variant_id else product_id
            raise ToolError(f"The cart has no line for {what}. Use cart_view to see the cart.")
        if len(lines) > 1:
            raise self._refusal(f"The cart has several lines for {product_id}; pass variant_id.", product_id)
        return lines[0]

    @tool_method("read")
    def cart_view(self) -> str:
        """Show the customer's cart: lines, quantities and total."""
        view = self._cart_view()
        for line in view["lines"]:
            self._see(line["product_id"], line.get("variant_id") or line["product_id"])
        return _json(view)

    @tool_method("final")
    def checkout(self) -> str:
        """Place the order with the cart as it is now: the final answer to a cart request. Call it once, when the cart is complete."""
        if not self.world.cart:
            raise ToolError("The cart is empty; add the customer's items before checking out.")
        for ln in self.world.cart:
            p = self.world.product(ln.product_id)
            v = p.variant(ln.variant_id) if p and ln.variant_id else None
            if p is not None and self.world.stock_of(p, v) < ln.quantity:
                raise self._refusal(f"{ln.variant_id or ln.product_id} ({p.title}) no longer has {ln.quantity} "
                                    "unit(s) in stock; change or remove that line before checking out.",
                                    ln.product_id, ln.variant_id)
        self.world.checked_out = True
        view = self._cart_view()
        self._answer("checkout", {"cart": view})
        return _json({"order_placed": True, "cart": view})
