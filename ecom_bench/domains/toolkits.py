"""Every built-in tool group together: the shopping core's (`ecom_bench.world.tools`) and each
domain's, for what is asked of all built-in tools at once."""

from __future__ import annotations

from ecom_bench.domains.orders.tools import OrderTools
from ecom_bench.domains.policy.tools import PolicyTools
from ecom_bench.world.toolkit import compose_toolkit
from ecom_bench.world.tools.bundle import BundleTools
from ecom_bench.world.tools.cart import CartTools
from ecom_bench.world.tools.catalog import CatalogTools
from ecom_bench.world.tools.recommend import RecommendTools


def unbudgeted_tools() -> frozenset[str]:
    """The built-in tools that do not count against B_tool (talking to the customer, final answers),
    for scripted agents counting their calls in a turn. The episode itself reads each env's own
    toolkit; an agent of another env reads `EpisodeStatus.calls_left`."""
    kit = compose_toolkit((CatalogTools, CartTools, OrderTools, PolicyTools, RecommendTools, BundleTools))
    return frozenset(name for name, spec in kit.specs().items() if spec.kind in ("user", "final"))


__all__ = ["unbudgeted_tools"]
