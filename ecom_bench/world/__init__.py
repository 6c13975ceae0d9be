"""Per-episode world state and the toolkit that acts on it (every tool defined once)."""

from ecom_bench.world.state import CartLine, ToolCallRecord, VisitRecord, World
from ecom_bench.world.toolkit import TOOLKIT, ToolError, ToolSpec, Toolkit

__all__ = ["CartLine", "TOOLKIT", "ToolCallRecord", "ToolError", "ToolSpec", "Toolkit", "VisitRecord", "World"]
