"""The shopping core every env shares: per-episode world state (catalogue view, cart, stock,
the ids shown and acted on, answers, clock) and its toolkits (every tool defined once). The
store's other domains (orders, the rule book) live in `ecom_bench.domains`."""

from ecom_bench.world.state import CartLine, ToolCallRecord, VisitRecord, World
from ecom_bench.world.toolkit import ToolError, ToolSpec, Toolkit, compose_toolkit

__all__ = ["CartLine", "ToolCallRecord", "ToolError", "ToolSpec", "Toolkit", "VisitRecord", "World",
           "compose_toolkit"]
