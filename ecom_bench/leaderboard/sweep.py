"""`ecom-bench sweep`: models × envs × difficulties as one Inspect eval set.

An eval set is resumable: run the same command again and Inspect completes only the
tasks whose logs are missing or unfinished (a finished grid does no new work). Every
task is one env at one difficulty, so `ecom-bench leaderboard DIR` can read the grid
back with `inspect_ai.analysis`.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspect_ai import eval_set
from inspect_ai.log import EvalLog

from ecom_bench import tasks
from ecom_bench.difficulty import validate_level
from ecom_bench.envs import resolve_envs
from ecom_bench.envs.context import DEFAULT_CATALOG_SIZE


def parse_difficulties(text: str) -> list[int]:
    """`0:12:3` (start:stop:step, stop included), `0:12` (step 1), `0,6,12` or `6`."""
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

    @property
    def tasks(self) -> int:
        return len(self.envs) * len(self.difficulties) * len(self.models)


def make_grid(models: list[str], envs: str, difficulties: str, samples: int, epochs: int = 1, seed: int = 0,
              catalog: str = "synthetic", catalog_size: int = DEFAULT_CATALOG_SIZE) -> SweepGrid:
    """Validate everything before any catalogue loads or model is called."""
    if not models:
        raise ValueError("sweep needs at least one --model (e.g. --model ecom/heuristic)")
    if len(set(models)) != len(models):
        raise ValueError("a --model is named twice")
    for name, value in (("samples", samples), ("epochs", epochs)):
        if value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value}")
    return SweepGrid(tuple(models), resolve_envs(envs), tuple(parse_difficulties(difficulties)), samples, epochs,
                     seed, catalog, catalog_size)


def run_sweep(grid: SweepGrid, log_dir: str, max_tasks: int | None = None, display: str | None = None,
              **eval_options: object) -> tuple[bool, list[EvalLog]]:
    """Run (or complete) the grid as an Inspect eval set under `log_dir`."""
    task_list = [getattr(tasks, env)(difficulty=d, samples=grid.samples, seed=grid.seed, catalog=grid.catalog,
                                     catalog_size=grid.catalog_size)
                 for env in grid.envs for d in grid.difficulties]
    return eval_set(task_list, log_dir=log_dir, model=list(grid.models), epochs=grid.epochs, max_tasks=max_tasks,
                    display=display, **eval_options)  # type: ignore[arg-type]
