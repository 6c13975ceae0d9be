"""Toolkits: tool groups bound to one episode's world.

Each domain's tools are a `ToolBase` subclass of documented `@tool_method`s (see
`_tooling` for how a method becomes a schema). An environment declares the groups it
needs (`Environment.toolkits`); `compose_toolkit` combines them, with `ask_user`, into
the class an episode binds to its world, and the env offers a subset of their tools by
name (`Environment.tool_names`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import cache

from ecom_bench.world._tooling import (InvalidToolCall, ToolBase, ToolError, ToolKind, ToolSpec, tool_kinds,
                                       tool_method)
from ecom_bench.world.state import World
from ecom_bench.world.tools.conversation import ConversationTools


class Toolkit(ConversationTools):
    """Tool groups bound to one episode's world.

    `ask_user` needs the simulated customer, which the episode owns, so the episode passes
    it in as a callback; every other tool only touches the world.
    """

    def __init__(self, world: World, ask_user: Callable[[str], str] | None = None) -> None:
        self.world = world
        self._ask_user = ask_user

    @classmethod
    def specs(cls) -> dict[str, ToolSpec]:
        """Every tool of this toolkit by name (its schema, kind and validator)."""
        return _specs(cls)


@cache
def _specs(cls: type) -> dict[str, ToolSpec]:
    out: dict[str, ToolSpec] = {}
    for name, member in inspect.getmembers(cls, predicate=inspect.isfunction):
        kind = getattr(member, "__tool_kind__", None)
        if kind is not None:
            out[name] = ToolSpec.from_method(member, kind)
    return out


@cache
def compose_toolkit(groups: tuple[type[ToolBase], ...]) -> type[Toolkit]:
    """The toolkit class of these tool groups (one class per distinct tuple, so schemas are built once)."""
    bases = tuple(g for g in groups if not issubclass(Toolkit, g))
    name = "Toolkit[" + "+".join(g.__name__ for g in bases) + "]"
    return type(name, (*bases, Toolkit), {"__module__": __name__})


def unbudgeted_tools() -> frozenset[str]:
    """Tools that do not count against B_tool: talking to the customer and final answers."""
    return frozenset(name for name, kind in tool_kinds().items() if kind in ("user", "final"))


__all__ = ["InvalidToolCall", "ToolError", "ToolKind", "ToolSpec", "Toolkit", "compose_toolkit", "tool_method",
           "unbudgeted_tools"]
