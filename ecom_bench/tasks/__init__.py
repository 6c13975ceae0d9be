"""Inspect tasks, one per environment."""

from ecom_bench.tasks.cart import cart

__all__ = ["cart"]
