"""The toolkit: every tool the agent can call, defined once, grouped by domain.

Each domain's tools live in `ecom_bench.world.tools.<domain>` as a mixin of
documented `@tool_method`s (see `_tooling` for how a method becomes a schema); the
`Toolkit` binds them all to one episode's world. An environment exposes a subset of
them by name (`Environment.tool_names`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import cache

from ecom_bench.world._tooling import InvalidToolCall, ToolError, ToolKind, ToolSpec, tool_method
from ecom_bench.world.state import World
from ecom_bench.world.tools.bundle import BundleTools
from ecom_bench.world.tools.cart import CartTools
from ecom_bench.world.tools.catalog import CatalogTools
from ecom_bench.world.tools.conversation import ConversationTools
from ecom_bench.world.tools.orders import OrderTools
from ecom_bench.world.tools.policy import PolicyTools
from ecom_bench.world.tools.recommend import RecommendTools


class Toolkit(CatalogTools, CartTools, OrderTools, PolicyTools, RecommendTools, BundleTools, ConversationTools):
    """All tools, bound to one episode's world.

    `ask_user` needs the simulated user, which the episode owns, so the episode passes
    it in as a callback; every other tool only touches the world.
    """

    def __init__(self, world: World, ask_user: Callable[[str], str] | None = None) -> None:
        self.world = world
        self._ask_user = ask_user

    @classmethod
    @cache
    def specs(cls) -> dict[str, ToolSpec]:
        out: dict[str, ToolSpec] = {}
        for name, member in inspect.getmembers(cls, predicate=inspect.isfunction):
            kind = getattr(member, "__tool_kind__", None)
            if kind is not None:
                out[name] = ToolSpec.from_method(member, kind)
        return out


def unbudgeted_tools() -> frozenset[str]:
    """Tools that do not count against B_tool: talking to the user and final answers."""
    return frozenset(name for name, spec in Toolkit.specs().items() if spec.kind in ("user", "final"))


TOOLKIT = Toolkit

__all__ = ["InvalidToolCall", "TOOLKIT", "ToolError", "ToolKind", "ToolSpec", "Toolkit", "tool_method",
           "unbudgeted_tools"]
