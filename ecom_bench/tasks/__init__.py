"""Inspect tasks: one per environment, plus the collections C1-C8."""

from ecom_bench.tasks.collection import collection
from ecom_bench.tasks.environments import bundle, cart, discovery, journey, policy, returns, substitution, tracking

__all__ = ["bundle", "cart", "collection", "discovery", "journey", "policy", "returns", "substitution", "tracking"]
