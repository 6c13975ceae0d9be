"""The environments. `get_env(name)` is the registry both fronts use."""

from __future__ import annotations

from ecom_bench.envs.base import Environment, Problem, Verdict
from ecom_bench.envs.cart import CartEnv

ENVIRONMENTS: dict[str, type[Environment]] = {"cart": CartEnv}


def get_env(name: str) -> Environment:
    try:
        return ENVIRONMENTS[name]()
    except KeyError:
        raise ValueError(f"unknown environment {name!r}; available: {', '.join(sorted(ENVIRONMENTS))}") from None


__all__ = ["ENVIRONMENTS", "Environment", "Problem", "Verdict", "get_env"]
