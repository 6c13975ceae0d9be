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

from ecom_bench.world._tooling import InvalidToolCall, ToolBase, ToolError, ToolKind, ToolSpec, tool_method
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
    @cache
    def specs(cls) -> dict[str, ToolSpec]:
        """Every tool of this toolkit by name (its schema, kind and validator), built once per class."""
        out: dict[str, ToolSpec] = {}
        for name, member in inspect.getmembers(cls, predicate=inspect.isfunction):
            kind = getattr(member, "__tool_kind__", None)
            if kind is not None:
                out[name] = ToolSpec.from_method(member, kind)
        return out


@cache
def compose_toolkit(groups: tuple[type[ToolBase], ...]) -> type[Toolkit]:
    """The toolkit class of these tool groups (one class per distinct tuple, so schemas are built once).

    Two groups may share a tool only by inheriting it: a name defined twice would leave one
    of the two unreachable, so it is refused.
    """
    if not isinstance(groups, tuple) or not all(isinstance(g, type) and issubclass(g, ToolBase) for g in groups):
        raise TypeError(f"toolkits must be a tuple of ToolBase subclasses, got {groups!r}")
    owner: dict[str, tuple[type, object]] = {}
    for group in groups:
        for name, fn in _tools_of(group).items():
            if name in owner and owner[name][1] is not fn:
                raise ValueError(f"tool {name!r} is defined by both {owner[name][0].__name__} and "
                                 f"{group.__name__}; a tool name means one tool")
            owner.setdefault(name, (group, fn))
    bases = tuple(g for g in groups if not issubclass(Toolkit, g))
    name = "Toolkit[" + "+".join(g.__name__ for g in bases) + "]"
    return type(name, (*bases, Toolkit), {"__module__": __name__})


def _tools_of(group: type) -> dict[str, object]:
    return {n: m for n, m in inspect.getmembers(group, predicate=inspect.isfunction)
            if getattr(m, "__tool_kind__", None) is not None}


__all__ = ["InvalidToolCall", "ToolBase", "ToolError", "ToolKind", "ToolSpec", "Toolkit", "compose_toolkit",
           "tool_method"]
