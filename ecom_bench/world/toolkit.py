"""The toolkit: every tool the agent can call, defined once as a documented method.

Each public method marked with `@tool_method` is a tool. Its name, docstring and type
hints are the single source of the tool's schema: `ToolSpec.from_method` turns them
into a JSON schema that the Inspect front (`ecom_bench.tools`) and the training front
both use, and that `Toolkit.call` validates against. Semantic problems (unknown id,
out of stock, bad quantity) raise `ToolError`, whose message the agent reads; the
episode goes on.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, get_type_hints

import pydantic

from ecom_bench.catalog import Product, Variant
from ecom_bench.world.state import CartLine, World

ToolKind = Literal["read", "write", "user", "final"]

MAX_QUANTITY = 99
MAX_QUERY_CHARS = 500
DEFAULT_SEARCH_LIMIT = 10
MAX_SEARCH_LIMIT = 20


class ToolError(Exception):
    """A tool failure the agent should read and can recover from."""


class InvalidToolCall(Exception):
    """A call that does not parse against the tool's schema (or names no tool).

    Under the strict (published) rule this ends the episode with the failure score.
    """


@dataclass(frozen=True)
class ToolSpec:
    """Name, description and JSON-schema parameters of one tool."""

    name: str
    description: str
    kind: ToolKind
    parameters: dict[str, Any]  # JSON schema "object"
    args_model: type[pydantic.BaseModel]

    @classmethod
    def from_method(cls, method: Callable[..., Any], kind: ToolKind) -> "ToolSpec":
        summary, arg_docs = _parse_docstring(inspect.getdoc(method) or "")
        hints = get_type_hints(method)
        fields: dict[str, Any] = {}
        for pname, param in inspect.signature(method).parameters.items():
            if pname == "self":
                continue
            if pname not in arg_docs:
                raise TypeError(f"tool {method.__name__}: argument {pname!r} has no docstring entry")
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (hints[pname], pydantic.Field(default, description=arg_docs[pname]))
        model = pydantic.create_model(
            f"{method.__name__}_args", __config__=pydantic.ConfigDict(extra="forbid", strict=False), **fields
        )
        schema = model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema.setdefault("required", [])
        schema["additionalProperties"] = False
        return cls(method.__name__, summary, kind, schema, model)

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Return the arguments coerced to the schema, or raise InvalidToolCall."""
        if not isinstance(arguments, dict):
            raise InvalidToolCall(
                f"arguments to {self.name} must be a JSON object, got {type(arguments).__name__}"
            )
        try:
            parsed = self.args_model.model_validate(arguments)
        except pydantic.ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in e.errors()
            )
            raise InvalidToolCall(f"invalid arguments to {self.name}: {problems}") from None
        return {k: getattr(parsed, k) for k in type(parsed).model_fields}

    def openai_schema(self) -> dict[str, Any]:
        """The tool as an OpenAI-style function schema (for training frameworks)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and its `Args:` entries."""
    head, _, rest = doc.partition("\nArgs:\n")
    args: dict[str, str] = {}
    current: str | None = None
    for line in rest.splitlines():
        if not line.strip():
            continue
        if not line.startswith((" ", "\t")):
            break  # next section (Returns:, ...)
        m = re.match(r"\s+(\w+)(?: \([^)]*\))?:\s*(.*)", line)
        if m and (current is None or len(line) - len(line.lstrip()) <= 4):
            current = m.group(1)
            args[current] = m.group(2).strip()
        elif current:
            args[current] += " " + line.strip()
    return " ".join(head.split()), args


def tool_method(kind: ToolKind) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__tool_kind__ = kind  # type: ignore[attr-defined]
        return fn

    return mark


def _json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _check_quantity(quantity: int) -> None:
    if quantity < 1:
        raise ToolError(f"quantity must be at least 1, got {quantity}")
    if quantity > MAX_QUANTITY:
        raise ToolError(f"quantity must be at most {MAX_QUANTITY}, got {quantity}")


class Toolkit:
    """The tools, bound to one episode's world.

    `ask_user` needs the simulated user, which the episode owns, so the episode passes
    it in as a callback; every other tool only touches the world.
    """

    def __init__(self, world: World, ask_user: Callable[[str], str] | None = None) -> None:
        self.world = world
        self._ask_user = ask_user

    # ------------------------------------------------------------------ specs
    @classmethod
    @cache
    def specs(cls) -> dict[str, ToolSpec]:
        out: dict[str, ToolSpec] = {}
        for name, member in inspect.getmembers(cls, predicate=inspect.isfunction):
            kind = getattr(member, "__tool_kind__", None)
            if kind is not None:
                out[name] = ToolSpec.from_method(member, kind)
        return out

    # ---------------------------------------------------------------- helpers
    def _product(self, product_id: str) -> Product:
        product = self.world.product(product_id.strip())
        if product is None:
            raise ToolError(
                f"No product with id {product_id!r}. Use catalog_search to find product ids."
            )
        return product

    def _variant(self, product: Product, variant_id: str | None) -> Variant | None:
        if variant_id is None or variant_id == "":
            if len(product.variants) > 1:
                options = ", ".join(v.id for v in product.variants)
                raise ToolError(
                    f"Product {product.id} comes in several variants ({options}); pass variant_id."
                )
            return product.variants[0] if product.variants else None
        variant = product.variant(variant_id.strip())
        if variant is None:
            options = ", ".join(v.id for v in product.variants) or "none"
            raise ToolError(
                f"Variant {variant_id!r} does not belong to product {product.id}; its variants are: {options}."
            )
        return variant

    def _see(self, *ids: str) -> None:
        self.world.seen_ids.update(ids)

    def _reference(self, *ids: str | None) -> None:
        self.world.referenced_ids.extend(i.strip() for i in ids if i)

    def _product_summary(self, p: Product) -> dict[str, Any]:
        self._see(p.id, *(v.id for v in p.variants))
        return {
            "product_id": p.id,
            "title": p.title,
            "brand": p.brand,
            "category": p.category_path,
            "price": p.price,
            "rating": p.rating,
            "ship_days": p.ship_days,
            "in_stock": self.world.in_stock(p),
            "variants": {v.id: v.value for v in p.variants},
        }

    def _variant_detail(self, p: Product, v: Variant) -> dict[str, Any]:
        return {
            "variant_id": v.id,
            v.attribute: v.value,
            "price": v.price,
            "in_stock": self.world.stock_of(p, v) > 0,
            "stock": self.world.stock_of(p, v),
        }

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

    # ------------------------------------------------------------------ tools
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
        if available <= 0:
            raise ToolError(f"{v.id if v else p.id} ({p.title}) is out of stock.")
        if in_cart + quantity > available:
            raise ToolError(
                f"Only {available} units of {v.id if v else p.id} are in stock ({in_cart} already in the cart)."
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
            raise ToolError(f"Only {available} units of {line.variant_id or p.id} are in stock.")
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
            raise ToolError(f"The cart has several lines for {product_id}; pass variant_id.")
        return lines[0]

    @tool_method("read")
    def cart_view(self) -> str:
        """Show the customer's cart: lines, quantities and total."""
        view = self._cart_view()
        for line in view["lines"]:
            self._see(line["product_id"], line.get("variant_id") or line["product_id"])
        return _json(view)

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

    @tool_method("user")
    def ask_user(self, question: str) -> str:
        """Send the customer a message or question and wait for their reply. Ends your turn.

        Args:
            question: What to say or ask the customer.
        """
        if self._ask_user is None:
            raise ToolError("ask_user is not available in this episode")
        return self._ask_user(question)

    @tool_method("final")
    def checkout(self) -> str:
        """Place the order with the cart as it is now. Ends the conversation: call it once, when the cart is complete."""
        if not self.world.cart:
            raise ToolError("The cart is empty; add the customer's items before checking out.")
        self.world.checked_out = True
        self.world.final_answer = {"cart": self._cart_view()}
        return _json({"order_placed": True, "cart": self.world.final_answer["cart"]})


TOOLKIT = Toolkit
