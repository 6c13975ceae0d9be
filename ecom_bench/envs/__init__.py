"""The environment registry: `register_env` adds one, `get_env(name)` is what every front reads.

Each built-in environment lives in its own package (`ecom_bench/envs/<name>/`: goal,
generator, user, verifier, agents) and is imported on first use, so a process that
only runs the cart pays for nothing else. An environment from elsewhere is registered
with `register_env(MyEnv)`, or by an installed package through the `ecom_bench.envs`
entry-point group, and then runs through every front like a built-in one.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable
from importlib.metadata import entry_points

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


#: The entry-point group through which an installed package adds environments:
#: `[project.entry-points."ecom_bench.envs"] loyalty = "my_package.loyalty:LoyaltyEnv"`.
ENTRY_POINT_GROUP = "ecom_bench.envs"
_plugins_loaded = False


def load_plugins() -> None:
    """Register the environments installed packages declare (once per process; the registry's
    readers call it, so a plugin env works in `ecom-bench`, `inspect eval` and Python alike)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            env = point.load()
            if point.name in ENVIRONMENTS:
                continue  # registered already (by the plugin's own import)
            register_env(env)
        except Exception as e:
            raise ValueError(f"the environment plugin {point.name!r} ({point.value}) could not be registered: "
                             f"{type(e).__name__}: {e}") from e


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
    users = [n for n, e in ENVIRONMENTS.items() if not isinstance(e, str) and name in _members(e)]
    if users:
        raise ValueError(f"environment {name!r} is chained by the journey(s) {', '.join(users)}; unregister those "
                         "first")
    if name in BUILTIN_ENVS:
        ENVIRONMENTS[name] = BUILTIN_ENVS[name]
    else:
        del ENVIRONMENTS[name]


def env_names() -> tuple[str, ...]:
    """The registered environments' names, built-in ones first, in registry order."""
    load_plugins()
    return tuple(ENVIRONMENTS)


def did_you_mean(name: object, known: Iterable[str]) -> str:
    """' (did you mean 'cart'?)' for a misspelt name, or '' when nothing known is close."""
    close = difflib.get_close_matches(str(name), list(known), n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def unknown_env_message(name: object, where: str = "") -> str:
    """One line for a name that is neither an environment nor a collection, naming the closest."""
    load_plugins()
    return (f"unknown environment {name!r}{where}{did_you_mean(name, [*ENVIRONMENTS, *COLLECTIONS])}; environments: "
            f"{', '.join(ENVIRONMENTS)}; collections: {', '.join(COLLECTIONS)}")


def get_env(name: str) -> Environment:
    """The environment called `name` (one shared, stateless instance per process)."""
    if name not in ENVIRONMENTS:
        load_plugins()
    try:
        entry = ENVIRONMENTS[name]
    except (KeyError, TypeError):
        raise ValueError(unknown_env_message(name)) from None
    if isinstance(entry, str):
        module, _, cls = entry.partition(":")
        entry = ENVIRONMENTS[name] = getattr(importlib.import_module(module), cls)()
    return entry


def check_contract(env: Environment) -> None:
    """Refuse an environment that would fail later, naming what is wrong: a missing declaration,
    a declaration of the wrong shape, a tool its toolkits lack, a journey over unknown members."""
    where = f"environment {getattr(env, 'name', type(env).__name__)!r}"
    for member in _members(env):
        if member not in ENVIRONMENTS:
            raise ValueError(f"{where} chains {member!r}, which is not registered")
        other = get_env(member)
        if _members(other):
            raise ValueError(f"{where} chains {member!r}, itself a journey")
        if other.journey is None:
            raise ValueError(f"{where} chains {member!r}, which declares no JourneyRole")
    missing = [attr for attr in ("name", "title", "summary", "goal_type", "customer_type", "toolkits",
                                 "tool_names", "final_tool", "instructions", "policies")
               if not hasattr(env, attr)]
    if missing:
        raise TypeError(f"environment {type(env).__name__} does not declare {', '.join(missing)}")
    if not isinstance(env.name, str) or not env.name.isidentifier():
        raise ValueError(f"an environment's name must be an identifier (it is a task name), got {env.name!r}")
    for attr in ("title", "summary", "instructions"):
        if not isinstance(getattr(env, attr), str) or not getattr(env, attr).strip():
            raise TypeError(f"{where}: {attr} must be a non-empty string")
    tools = env.tool_names
    if not isinstance(tools, (tuple, list)) or not all(isinstance(t, str) for t in tools):
        raise TypeError(f"{where}: tool_names must be a tuple of tool names, got {tools!r}")
    if len(set(tools)) != len(tools):
        raise ValueError(f"{where} offers a tool twice: {', '.join(sorted({t for t in tools if tools.count(t) > 1}))}")
    try:
        specs = env.toolkit_class().specs()
    except (TypeError, ValueError) as e:
        raise type(e)(f"{where}: {e}") from e
    unknown = [t for t in tools if t not in specs]
    if unknown:
        raise ValueError(f"{where} offers tools its toolkits do not define: {', '.join(unknown)}")
    if env.final_tool is not None and (env.final_tool not in tools or specs[env.final_tool].kind != "final"):
        raise ValueError(f"{where}: final_tool {env.final_tool!r} must be one of its tools, "
                         "marked @tool_method('final')")
    if env.final_tool is not None and tools[-1] != env.final_tool:
        raise ValueError(f"{where}: list the final tool {env.final_tool!r} last in tool_names (listings say so)")
    if not isinstance(env.policies, dict) or "oracle" not in env.policies:
        raise ValueError(f"{where} has no 'oracle' policy: every task must be shown solvable")
    for name, factory in env.policies.items():
        if not callable(factory) or (isinstance(factory, type) and not hasattr(factory, "act")):
            raise TypeError(f"{where}: policies[{name!r}] must be a Policy class (or a factory of one), "
                            f"got {factory!r}")
    if not all(isinstance(a, EnvAxis) for a in env.axes):
        raise TypeError(f"{where}: axes must be EnvAxis values, got {env.axes!r}")
    if env.journey is not None and not isinstance(env.journey, JourneyRole):
        raise TypeError(f"{where}: journey must be a JourneyRole or None, got {env.journey!r}")


def _members(env: Environment) -> tuple[str, ...]:
    """The environments a journey chains (none for an atomic env)."""
    return tuple(getattr(env, "chained", ()))




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
    load_plugins()
    for n in names:
        if n not in ENVIRONMENTS:
            raise ValueError(unknown_env_message(n, f" in envs={spec!r}"))
    if len(set(names)) != len(names):
        raise ValueError(f"envs={spec!r} names an environment twice")
    return names


__all__ = ["BUILTIN_ENVS", "COLLECTIONS", "ENTRY_POINT_GROUP", "ENVIRONMENTS", "EnvAxis", "Environment",
           "JourneyRole", "Problem", "SubTask", "Verdict", "check_contract", "did_you_mean", "env_names", "get_env", "load_plugins",
           "register_env", "resolve_envs", "unknown_env_message", "unregister_env"]
