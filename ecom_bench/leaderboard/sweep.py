"""`ecom-bench sweep`: models × envs × difficulties as one Inspect eval set.

An eval set is resumable: run the same command again and Inspect completes only the
tasks whose logs are missing or unfinished (a finished grid does no new work). Every
task is one env at one difficulty, so `ecom-bench leaderboard DIR` can read the grid
back with `inspect_ai.analysis`.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspect_ai import eval_set
from inspect_ai.log import EvalLog

from ecom_bench import tasks
from ecom_bench.difficulty import validate_level
from ecom_bench.envs import resolve_envs
from ecom_bench.envs.context import DEFAULT_CATALOG_SIZE
from ecom_bench.tasks._builder import reject_unknown_params
from ecom_bench.tasks._user import USER_SIMULATOR, check_roles_for_user

#: Task parameters the sweep sets from its own options (a `-T` for them would contradict one).
SWEEP_TASK_ARGS = {"difficulty": "--difficulties", "samples": "--samples", "seed": "--seed", "catalog": "--catalog",
                   "catalog_size": "--catalog-size"}


def parse_difficulties(text: str) -> list[int]:
    """`0:12:3` (start:stop:step), `0:12` (step 1), `0,6,12` or `6`.

    The stop is always included, also where the step does not land on it: `0:12:5` is
    0, 5, 10, 12, so a grid reaches the difficulty it names.
    """
    text = text.strip()
    try:
        if ":" in text:
            parts = [int(p) for p in text.split(":")]
            if len(parts) not in (2, 3):
                raise ValueError
            start, stop, step = (*parts, 1) if len(parts) == 2 else parts
            if step < 1 or stop < start:
                raise ValueError
            levels = list(range(start, stop + 1, step))
            if levels[-1] != stop:
                levels.append(stop)
        else:
            levels = [int(p) for p in text.split(",")]
    except ValueError:
        raise ValueError(f"difficulties must be start:stop:step (e.g. 0:12:3) or a comma list (0,6,12), "
                         f"got {text!r}") from None
    for level in levels:
        validate_level(level)
    if len(set(levels)) != len(levels):
        raise ValueError(f"difficulties name a level twice: {text!r}")
    return levels


def _scalar(text: str) -> bool | int | float | str:
    """A `-T`/`-M` value as Inspect's `-T` reads it: true/false, an integer, a decimal, else the text."""
    text = text.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            pass
    return text


def parse_key_values(pairs: list[str], flag: str) -> dict[str, Any]:
    """Repeated `-T key=value` / `-M key=value` as a dict; unlike Inspect's `-M`, a comma stays in the
    value (`-M stop=a,b` is the text "a,b"), so give each key its own flag."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ValueError(f"{flag} takes KEY=VALUE, got {pair!r}")
        if key in out:
            raise ValueError(f"{flag} {key} is given twice")
        out[key] = _scalar(text)
    return out


def parse_model_roles(pairs: list[str]) -> dict[str, str]:
    """Repeated `--model-role ROLE=MODEL` as a dict, as Inspect's `--model-role` takes them
    (`user=openai/gpt-4o-mini`: the model that words an LLM customer)."""
    out: dict[str, str] = {}
    for pair in pairs:
        role, sep, model = (part.strip() for part in pair.partition("="))
        if not sep or not role or not model:
            raise ValueError(f"--model-role takes ROLE=MODEL, got {pair!r}")
        if role in out:
            raise ValueError(f"--model-role {role} is given twice")
        out[role] = model
    return out


@dataclass(frozen=True)
class ModelOptions:
    """How the models are called: Inspect's model args, generation settings and model roles, passed to `eval_set`."""

    model_args: dict[str, Any] = field(default_factory=dict)
    model_base_url: str | None = None
    generate: dict[str, Any] = field(default_factory=dict)  # GenerateConfig fields: temperature, max_tokens, ...
    model_roles: dict[str, str] = field(default_factory=dict)  # the same for every model of the grid


@dataclass(frozen=True)
class SweepGrid:
    models: tuple[str, ...]
    envs: tuple[str, ...]
    difficulties: tuple[int, ...]
    samples: int
    epochs: int = 1
    seed: int = 0
    catalog: str = "synthetic"
    catalog_size: int = DEFAULT_CATALOG_SIZE
    task_args: dict[str, Any] = field(default_factory=dict)  # the other task parameters (strict, embedder, ...)

    @property
    def tasks(self) -> int:
        return len(self.envs) * len(self.difficulties) * len(self.models)


def _check_task_args(envs: tuple[str, ...], task_args: dict[str, Any]) -> None:
    for name, option in SWEEP_TASK_ARGS.items():
        if name in task_args:
            raise ValueError(f"-T {name}: the sweep sets it with {option}")
    for env in envs:
        task_fn = getattr(tasks, env)
        taken = {n for n, p in inspect.signature(task_fn).parameters.items() if p.kind is not p.VAR_KEYWORD}
        reject_unknown_params(env, {k: v for k, v in task_args.items() if k not in taken}, task_fn)


def make_grid(models: list[str], envs: str, difficulties: str, samples: int, epochs: int = 1, seed: int = 0,
              catalog: str = "synthetic", catalog_size: int = DEFAULT_CATALOG_SIZE,
              task_args: dict[str, Any] | None = None, model_roles: Mapping[str, str] | None = None) -> SweepGrid:
    """Validate everything before any catalogue loads or model is called (`model_roles`: the roles
    named, which the customer `-T user=` must take)."""
    if not models:
        raise ValueError("sweep needs at least one --model (e.g. --model ecom/heuristic)")
    if len(set(models)) != len(models):
        raise ValueError("a --model is named twice")
    for name, value in (("samples", samples), ("epochs", epochs)):
        if value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value}")
    env_names = resolve_envs(envs)
    _check_task_args(env_names, task_args or {})
    check_roles_for_user((task_args or {}).get("user", USER_SIMULATOR), model_roles or {})
    return SweepGrid(tuple(models), env_names, tuple(parse_difficulties(difficulties)), samples, epochs,
                     seed, catalog, catalog_size, dict(task_args or {}))


def default_display() -> str | None:
    """The sweep's one progress bar (`progress.py`), or Inspect's display when `INSPECT_DISPLAY` names one."""
    return None if os.environ.get("INSPECT_DISPLAY") else "progress"


def run_sweep(grid: SweepGrid, log_dir: str, max_tasks: int | None = None, display: str | None = None,
              model: ModelOptions | None = None, **eval_options: Any) -> tuple[bool, list[EvalLog]]:
    """Run (or complete) the grid as an Inspect eval set under `log_dir`.

    `display`: "progress" (one bar for the grid) or "lines" (a line per finished task) run Inspect
    silently and report through its hooks (`progress.py`); anything else is Inspect's own display.
    """
    model = model or ModelOptions()
    task_list = [getattr(tasks, env)(difficulty=d, samples=grid.samples, seed=grid.seed, catalog=grid.catalog,
                                     catalog_size=grid.catalog_size, **grid.task_args)
                 for env in grid.envs for d in grid.difficulties]
    options: dict[str, Any] = dict(log_dir=log_dir, model=list(grid.models), epochs=grid.epochs, max_tasks=max_tasks,
                                   model_args=model.model_args, model_base_url=model.model_base_url,
                                   model_roles=model.model_roles or None, **model.generate, **eval_options)
    if display not in ("progress", "lines"):
        return eval_set(task_list, display=display, **options)  # type: ignore[arg-type]
    from ecom_bench.leaderboard.progress import sweep_display  # registers its Inspect hooks

    with sweep_display(display, grid.tasks) as reporter:
        done, logs = eval_set(task_list, display="none", **options)
        reporter.close(logs)
    return done, logs
