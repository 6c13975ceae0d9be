"""The environments. `get_env(name)` is the registry both fronts use.

Each environment lives in its own package (`ecom_bench/envs/<name>/`: goal, generator,
user, verifier, policies) and is imported on first use, so a process that only runs
the cart pays for nothing else.
"""

from __future__ import annotations

import importlib

from ecom_bench.envs.base import Environment, Problem, SubTask, Verdict

#: Environment name → "module:class". The design's ids (docs/design.md): E_PD, E_SUB, E_CART, E_RETURN, E_TRACK,
#: E_POLICY, E_BUNDLE, E_JOURNEY.
ENVIRONMENTS: dict[str, str] = {
    "cart": "ecom_bench.envs.cart:CartEnv",
    "discovery": "ecom_bench.envs.discovery:DiscoveryEnv",
    "substitution": "ecom_bench.envs.substitution:SubstitutionEnv",
    "returns": "ecom_bench.envs.returns:ReturnsEnv",
    "tracking": "ecom_bench.envs.tracking:TrackingEnv",
    "policy": "ecom_bench.envs.policy:PolicyEnv",
    "bundle": "ecom_bench.envs.bundle:BundleEnv",
    "journey": "ecom_bench.envs.journey:JourneyEnv",
}

#: The nested collections of docs/design.md (RLVE methodology): C1 ⊂ C2 ⊂ C4 ⊂ C8.
COLLECTIONS: dict[str, tuple[str, ...]] = {
    "C1": ("cart",),
    "C2": ("cart", "substitution"),
    "C4": ("cart", "substitution", "discovery", "returns"),
    "C8": ("cart", "substitution", "discovery", "returns", "tracking", "policy", "bundle", "journey"),
}

_INSTANCES: dict[str, Environment] = {}


def get_env(name: str) -> Environment:
    """The environment called `name` (one shared, stateless instance per process)."""
    env = _INSTANCES.get(name)
    if env is None:
        try:
            target = ENVIRONMENTS[name]
        except (KeyError, TypeError):
            raise ValueError(f"unknown environment {name!r}; available: {', '.join(ENVIRONMENTS)}") from None
        module, _, cls = target.partition(":")
        env = _INSTANCES[name] = getattr(importlib.import_module(module), cls)()
    return env


def resolve_envs(spec: str) -> tuple[str, ...]:
    """'C4' → its environments; 'cart,policy' → those two. Names are validated."""
    text = str(spec).strip()
    if text.upper() in COLLECTIONS:
        return COLLECTIONS[text.upper()]
    names = tuple(n.strip() for n in text.split(","))
    if not any(names):
        raise ValueError(f"envs must name a collection ({', '.join(COLLECTIONS)}) or environments, got {spec!r}")
    if not all(names):
        raise ValueError(f"envs={spec!r} has an empty name between commas")
    for n in names:
        if n not in ENVIRONMENTS:
            raise ValueError(f"unknown environment {n!r} in envs={spec!r}; environments: "
                             f"{', '.join(ENVIRONMENTS)}; collections: {', '.join(COLLECTIONS)}")
    if len(set(names)) != len(names):
        raise ValueError(f"envs={spec!r} names an environment twice")
    return names


__all__ = ["COLLECTIONS", "ENVIRONMENTS", "Environment", "Problem", "SubTask", "Verdict", "get_env",
           "resolve_envs"]
