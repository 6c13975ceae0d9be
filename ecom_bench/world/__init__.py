"""Per-episode world state and the toolkits that act on it (every tool defined once)."""

from ecom_bench.world.state import CartLine, ToolCallRecord, VisitRecord, World
from ecom_bench.world.toolkit import ToolError, ToolSpec, Toolkit, compose_toolkit

__all__ = ["CartLine", "ToolCallRecord", "ToolError", "ToolSpec", "Toolkit", "VisitRecord", "World",
           "compose_toolkit"]
