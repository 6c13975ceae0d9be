"""What a log was run with: the task settings that make scores comparable, and the agent's label.

Two logs belong in one leaderboard only when every setting below is equal: the same env and
difficulty on another catalogue, another catalogue seed or size, the forgiving tool rule,
another embedder, another customer simulator (for the LLM customer: another customer model or
its settings) or another task version is another benchmark.
Each setting is read from the task's metadata (what `ecom_bench` records), then from
Inspect's `task_args`, then the default, so logs of earlier versions still read.

The env, difficulty and dataset seed are not settings: they are the table's rows and the
samples' ids. The model's generation settings (temperature, `-M` args, ...) are part of the
agent, not of the task: the same model at two temperatures is two rows of one table.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from inspect_ai.log import EvalSpec

#: The settings that must agree, in the order messages name them.
SETTINGS = ("catalog", "catalog_size", "catalog_seed", "strict", "embedder", "user", "task_version")
_DEFAULTS: dict[str, Any] = {"catalog": "synthetic", "catalog_seed": 0, "strict": True, "embedder": "wordllama",
                             "user": "template"}

#: Generation settings that change how a run goes, not what the agent does: left out of its label.
OPERATIONAL = frozenset({"max_retries", "timeout", "attempt_timeout", "stream_idle_timeout", "max_connections",
                         "adaptive_connections", "batch", "cache", "cache_prompt", "extra_headers"})

Config = tuple[tuple[str, str], ...]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def task_config(spec: EvalSpec) -> Config:
    """The log's settings as (name, value) pairs, values as text (`strict` is true/false)."""
    metadata, args = spec.metadata or {}, spec.task_args or {}
    values: dict[str, Any] = {}
    for name in SETTINGS:
        if name == "task_version":
            values[name] = spec.task_version
        elif name == "user" and metadata.get(name) == "llm":
            values[name] = _customer_model(spec)
        elif name in metadata:
            values[name] = metadata[name]
        elif name in args:
            values[name] = args[name]
        elif name == "catalog_size":  # logs from before the size was recorded: the products loaded
            values[name] = metadata.get("catalog_products", "unknown")
        else:
            values[name] = _DEFAULTS[name]
    return tuple((name, _text(values[name])) for name in SETTINGS)


def _settings(config: Any) -> dict[str, Any]:
    """Generation settings that change what a model says (the operational ones left out)."""
    generate = config.model_dump(exclude_none=True) if config else {}
    return {k: v for k, v in generate.items() if k not in OPERATIONAL}


def _with_settings(label: str, settings: Mapping[str, Any]) -> str:
    if not settings:
        return label
    return f"{label} ({', '.join(f'{k}={_text(v)}' for k, v in sorted(settings.items()))})"


def _customer_model(spec: EvalSpec) -> str:
    """`llm:<model> (settings)`: an LLM customer is its model (two customer models are two benchmarks)."""
    role = (spec.model_roles or {}).get("user")
    if isinstance(role, list):
        role = role[0] if len(role) == 1 else None
    if role is None:
        return "llm"
    return _with_settings(f"llm:{role.model}", {**_settings(role.config), **(role.args or {})})


def _scaffold(spec: EvalSpec) -> str:
    """` + react[1a2b3c]` for a run whose agent's turns an Inspect agent took (`agent=`): its name and
    a digest of its parameters (two prompts are two agents); empty for the built-in solver."""
    agent = (spec.task_args or {}).get("agent")
    if not agent:
        return ""
    name = agent.get("name", "agent") if isinstance(agent, dict) else str(agent)
    params = json.dumps(agent.get("params") if isinstance(agent, dict) else None, sort_keys=True, default=str)
    return f" + {name}[{hashlib.sha256(params.encode()).hexdigest()[:6]}]"


def agent_label(spec: EvalSpec) -> str:
    """The model name, with the agent scaffold, generation settings and model args it ran with, if any:
    `openai/gpt-4o-mini (temperature=0.7)`, `openai/gpt-4o-mini + react[1a2b3c]`."""
    settings = {**_settings(spec.model_generate_config), **(spec.model_args or {})}
    return _with_settings(spec.model + _scaffold(spec), settings)


def describe(config: Config) -> str:
    """One line: `catalog=synthetic, catalog_size=3000, ...`."""
    return ", ".join(f"{name}={value}" for name, value in config)


def parse_filters(pairs: list[str]) -> dict[str, str]:
    """`--config catalog=synthetic --config strict=false` as {setting: value}, names checked."""
    filters = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise ValueError(f"--config takes SETTING=VALUE, got {pair!r}")
        if name not in SETTINGS:
            raise ValueError(f"--config {pair}: unknown setting {name!r}; the settings are {', '.join(SETTINGS)}")
        filters[name] = value.strip()
    return filters


def select(configs: set[Config], filters: Mapping[str, str], where: str) -> Config:
    """The one configuration `filters` leaves, or a one-line error naming what differs and how to pick."""
    chosen = {c for c in configs if all(dict(c)[k].casefold() == v.casefold() for k, v in filters.items())}
    if not chosen:
        asked = " ".join(f"--config {k}={v}" for k, v in filters.items())
        found = "; ".join(sorted(describe(c) for c in configs))
        raise ValueError(f"no logs under {where} match {asked}; they hold: {found}")
    if len(chosen) == 1:
        return next(iter(chosen))
    differing = [name for name in SETTINGS if len({dict(c)[name] for c in chosen}) > 1]
    listed = ", ".join(f"{name} ({' | '.join(sorted({dict(c)[name] for c in chosen}))})" for name in differing)
    example = min(chosen)
    pick = " ".join(f"--config {name}={dict(example)[name]}" for name in differing)
    raise ValueError(f"the logs under {where} hold {len(chosen)} configurations that are not comparable, differing "
                     f"in {listed}; a leaderboard compares one: select it, e.g. {pick}")
