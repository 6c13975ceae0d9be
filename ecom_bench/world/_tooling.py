"""The machinery that turns documented methods into tools (schemas, validation, errors).

A tool is a method marked `@tool_method(kind)`. Its name, docstring and type hints are
the single source of its schema: `ToolSpec.from_method` turns them into a JSON schema
that the Inspect front, the training front and `Episode.step` all use. Semantic
problems (unknown id, out of stock, bad quantity) raise `ToolError`, whose message the
agent reads; the episode goes on. Tool kinds: `read`/`write` count against the per-turn
budget B_tool; `user` talks to the customer; `final` records an env's final answer.
"""

from __future__ import annotations

import inspect
import json
import re
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

import pydantic

from ecom_bench.catalog import Product, Variant
from ecom_bench.world.state import FinalAnswer, World

ToolKind = Literal["read", "write", "user", "final"]

MAX_QUANTITY = 99
MAX_QUERY_CHARS = 500
DEFAULT_SEARCH_LIMIT = 10
MAX_SEARCH_LIMIT = 20
#: Longest string any tool argument may be (ids are ~20 characters, a message to the customer
#: a few hundred): a bound in the schema, so a 1 MB argument fails validation instead of being
#: echoed back in error messages, logs and score explanations.
MAX_ARG_CHARS = 4000
#: Longest list any tool argument may be (a bundle needs at most 12 products).
MAX_ARG_ITEMS = 100
#: How many schema problems one error message lists.
MAX_REPORTED_PROBLEMS = 5


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
            if pname not in hints:
                raise TypeError(f"tool {method.__name__}: argument {pname!r} has no type hint (its schema type)")
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (_bounded(hints[pname]), pydantic.Field(default, description=arg_docs[pname]))
        # strict: JSON-schema semantics, the same rule Inspect applies before our tool runs
        # (no "3" for an integer, no true for a number), so both fronts accept the same calls.
        config = pydantic.ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
        model = pydantic.create_model(f"{method.__name__}_args", __config__=config, **fields)
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
            errors = e.errors()
            problems = "; ".join(
                f"{clip_text('.'.join(str(p) for p in err['loc'])) or 'arguments'}: {err['msg']}"
                for err in errors[:MAX_REPORTED_PROBLEMS]
            )
            if len(errors) > MAX_REPORTED_PROBLEMS:
                problems += f" (and {len(errors) - MAX_REPORTED_PROBLEMS} more)"
            raise InvalidToolCall(f"invalid arguments to {self.name}: {problems}") from None
        return {k: getattr(parsed, k) for k in type(parsed).model_fields}

    def openai_schema(self) -> dict[str, Any]:
        """The tool as an OpenAI-style function schema (for training frameworks)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


def _integral(value: Any) -> Any:
    """2.0 → 2: JSON schema counts an integral float as an integer, so we accept it too."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _bounded(tp: Any) -> Any:
    """The argument type with the schema's bounds: strings ≤ MAX_ARG_CHARS, lists ≤ MAX_ARG_ITEMS."""
    origin = get_origin(tp)
    if tp is str:
        return Annotated[str, pydantic.Field(max_length=MAX_ARG_CHARS)]
    if tp is int:
        return Annotated[int, pydantic.BeforeValidator(_integral)]
    if origin in (Union, types.UnionType):
        return Union[tuple(_bounded(a) for a in get_args(tp))]  # noqa: UP007 (built from a tuple)
    if origin is list:
        (item,) = get_args(tp)
        return Annotated[list[_bounded(item)], pydantic.Field(max_length=MAX_ARG_ITEMS)]  # type: ignore[misc]
    return tp


def clip_text(text: str, limit: int = 80) -> str:
    """A bounded rendering of agent-supplied text for error messages."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


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


TOOL_KINDS: tuple[ToolKind, ...] = get_args(ToolKind)


def tool_method(kind: ToolKind) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a `ToolBase` method as a tool of `kind`; its name, docstring and hints are its schema.

    `read`/`write` count against the per-turn budget B_tool; `user` talks to the customer;
    `final` records the env's answer.
    """
    if kind not in TOOL_KINDS:
        raise ValueError(f"a tool's kind is one of {', '.join(TOOL_KINDS)}, got {kind!r}")

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
        variant_ids = [v.id for v in product.variants]
        if variant_id is None or variant_id == "":
            if len(product.variants) > 1:
                raise self._refusal(f"Product {product.id} comes in several variants ({', '.join(variant_ids)}); "
                                    "pass variant_id.", product.id, *variant_ids)
            return product.variants[0] if product.variants else None
        variant = product.variant(variant_id.strip())
        if variant is None:
            raise self._refusal(f"Variant {variant_id!r} does not belong to product {product.id}; its variants "
                                f"are: {', '.join(variant_ids) or 'none'}.", product.id, *variant_ids)
        return variant

    def _see(self, *ids: str) -> None:
        self.world.seen_ids.update(ids)

    def _refusal(self, message: str, *shown: str | None) -> ToolError:
        """The ToolError for `message`, which names the world ids `shown`: like any tool output,
        they count as retrieved for r_hall. Only ids of objects the world holds belong here,
        never an id echoed unchecked from the call (else an error could launder an invented one)."""
        self._see(*(i for i in shown if i))
        return ToolError(message)

    def _reference(self, *ids: str | None) -> None:
        # a blank id names nothing: it is a bad call (the tool says so), not an invented product
        self.world.referenced_ids.extend(i.strip() for i in ids if i and i.strip())

    def _product_summary(self, p: Product) -> dict[str, Any]:
        """A product as search and details show it. Variants priced apart from the listing, or some
        of them sold out, are shown too: a shopper who needs one variant pays its price and needs it."""
        self._see(p.id, *(v.id for v in p.variants))
        summary = {
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
        if any(v.price != p.price for v in p.variants):
            summary["variant_prices"] = {v.id: v.price for v in p.variants}
        sold_out = [v.id for v in p.variants if self.world.stock_of(p, v) <= 0]
        if sold_out and summary["in_stock"]:
            summary["sold_out_variants"] = sold_out
        return summary

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
