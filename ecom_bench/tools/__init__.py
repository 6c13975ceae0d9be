"""Inspect tools, generated from the core toolkit (tools are defined once, in the core)."""

from ecom_bench.tools.adapter import episode_tools

__all__ = ["episode_tools"]
