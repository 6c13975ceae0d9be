"""The machinery that turns documented methods into tools (schemas, validation, errors).

A tool is a method marked `@tool_method(kind)`. Its name, docstring and type hints are
the single source of its schema: `ToolSpec.from_method` turns them into a JSON schema
that the Inspect front, the training front and `Episode.call_tool` all use. Semantic
problems (unknown id, out of stock, bad quantity) raise `ToolError`, whose message the
agent reads; the episode goes on. Tool kinds: `read`/`write` count against the per-turn
budget B_tool; `user` talks to the customer; `final` records an env's final answer.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_type_hints

import pydantic

from ecom_bench.catalog import Product, Variant
from ecom_bench.world.state import FinalAnswer, World

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


class ToolBase:
    """Shared helpers of every domain's tools, bound to one episode's world."""

    world: World

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

    def _answer(self, tool: str, arguments: dict[str, Any]) -> FinalAnswer:
        """Record a final answer (for the current intent, in a journey)."""
        answer = FinalAnswer(tool=tool, arguments=arguments, intent=self.world.intent)
        self.world.answers.append(answer)
        return answer
