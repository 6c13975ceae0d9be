"""The environment registry: `register_env` adds one, `get_env(name)` is what every front reads.

Each built-in environment lives in its own package (`ecom_bench/envs/<name>/`: goal,
generator, user, verifier, policies) and is imported on first use, so a process that
only runs the cart pays for nothing else. An environment from elsewhere is registered
with `register_env(MyEnv)` and then runs through every front like a built-in one.
"""

from __future__ import annotations

import importlib

from ecom_bench.envs.base import EnvAxis, Environment, JourneyRole, Problem, SubTask, Verdict

#: The built-in environments, name → "module:class", in registry order. The design's ids
#: (docs/design.md): E_CART, E_PD, E_SUB, E_RETURN, E_TRACK, E_POLICY, E_BUNDLE, E_JOURNEY.
BUILTIN_ENVS: dict[str, str] = {
    "cart": "ecom_bench.envs.cart:CartEnv",
    "discovery": "ecom_bench.envs.discovery:DiscoveryEnv",
    "substitution": "ecom_bench.envs.substitution:SubstitutionEnv",
    "returns": "ecom_bench.envs.returns:ReturnsEnv",
    "tracking": "ecom_bench.envs.tracking:TrackingEnv",
    "policy": "ecom_bench.envs.policy:PolicyEnv",
    "bundle": "ecom_bench.envs.bundle:BundleEnv",
    "journey": "ecom_bench.envs.journey:JourneyEnv",
}

#: Every registered environment, name → "module:class" (built-in, imported on first use) or
#: the instance `register_env` was given. Read it through `env_names()` / `get_env()`.
ENVIRONMENTS: dict[str, str | Environment] = dict(BUILTIN_ENVS)

#: The nested collections of docs/design.md (RLVE methodology): C1 ⊂ C2 ⊂ C4 ⊂ C8.
COLLECTIONS: dict[str, tuple[str, ...]] = {
    "C1": ("cart",),
    "C2": ("cart", "substitution"),
    "C4": ("cart", "substitution", "discovery", "returns"),
    "C8": ("cart", "substitution", "discovery", "returns", "tracking", "policy", "bundle", "journey"),
}


def register_env(env: Environment | type[Environment], *, replace: bool = False) -> Environment:
    """Add an environment (a class or an instance) to the registry under its `name`.

    Checks the contract first, so a mistake fails here with a message rather than in the
    first episode. A built-in name, or one already registered, needs `replace=True`.
    """
    instance = env() if isinstance(env, type) else env
    if not isinstance(instance, Environment):
        raise TypeError(f"register_env takes an Environment subclass or instance, got {env!r}")
    check_contract(instance)
    name = instance.name
    if name in ENVIRONMENTS and not replace:
        raise ValueError(f"an environment called {name!r} is already registered; pass replace=True to replace it")
    ENVIRONMENTS[name] = instance
    return instance


def unregister_env(name: str) -> None:
    """Remove a registered environment (a built-in one comes back as it ships)."""
    if name not in ENVIRONMENTS:
        raise ValueError(f"no environment called {name!r} is registered")
    if name in BUILTIN_ENVS:
        ENVIRONMENTS[name] = BUILTIN_ENVS[name]
    else:
        del ENVIRONMENTS[name]


def env_names() -> tuple[str, ...]:
    """The registered environments' names, built-in ones first, in registry order."""
    return tuple(ENVIRONMENTS)


def get_env(name: str) -> Environment:
    """The environment called `name` (one shared, stateless instance per process)."""
    try:
        entry = ENVIRONMENTS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown environment {name!r}; available: {', '.join(ENVIRONMENTS)}") from None
    if isinstance(entry, str):
        module, _, cls = entry.partition(":")
        entry = ENVIRONMENTS[name] = getattr(importlib.import_module(module), cls)()
    return entry


def check_contract(env: Environment) -> None:
    """Refuse an environment that would fail later: missing declarations, tools its toolkits lack."""
    missing = [attr for attr in ("name", "title", "summary", "goal_type", "customer_type", "toolkits",
                                 "tool_names", "final_tool", "instructions", "policies")
               if not hasattr(env, attr)]
    if missing:
        raise TypeError(f"environment {type(env).__name__} does not declare {', '.join(missing)}")
    if not isinstance(env.name, str) or not env.name.isidentifier():
        raise ValueError(f"an environment's name must be an identifier (it is a task name), got {env.name!r}")
    specs = env.toolkit_class().specs()
    unknown = [t for t in env.tool_names if t not in specs]
    if unknown:
        raise ValueError(f"environment {env.name!r} offers tools its toolkits do not define: {', '.join(unknown)}")
    if env.final_tool is not None and (env.final_tool not in env.tool_names
                                       or specs[env.final_tool].kind != "final"):
        raise ValueError(f"environment {env.name!r}: final_tool {env.final_tool!r} must be one of its tools, "
                         "marked @tool_method('final')")
    if "oracle" not in env.policies:
        raise ValueError(f"environment {env.name!r} has no 'oracle' policy: every task must be shown solvable")


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


__all__ = ["BUILTIN_ENVS", "COLLECTIONS", "ENVIRONMENTS", "EnvAxis", "Environment", "JourneyRole", "Problem",
           "SubTask", "Verdict", "check_contract", "env_names", "get_env", "register_env", "resolve_envs",
           "unregister_env"]
