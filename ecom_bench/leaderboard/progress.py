"""The sweep's `lines` display: one compact line per finished task, for logs and CI.

Inspect's own display is a live table on a terminal, but without one it prints a panel of
some 18 lines per task (1,300 lines for a 72-task grid). Here Inspect runs silently and an
Inspect hook prints one line as each task ends; it is enabled only while a sweep reports
(this module is imported only then: Inspect announces registered hooks when a run starts).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

import rich
from inspect_ai.hooks import Hooks, TaskEnd, hooks
from inspect_ai.log import EvalLog


def task_line(log: EvalLog) -> str:
    """`cart d=6 ecom/oracle: success 1.000, r_total +0.900 (20 samples)`, or what went wrong."""
    spec = log.eval
    difficulty = (spec.task_args or {}).get("difficulty", (spec.metadata or {}).get("difficulty"))
    name = f"{spec.task.rsplit('/', 1)[-1]} d={difficulty} {spec.model}"
    if log.status != "success":
        reason = log.error.message.strip().splitlines()[-1] if log.error and log.error.message.strip() else ""
        return f"{name}: {log.status}" + (f" ({reason})" if reason else "")
    results = log.results
    means = {s.name: s.metrics["mean"].value for s in (results.scores if results else []) if "mean" in s.metrics}
    figures = [f"success {means['success']:.3f}"] if "success" in means else []
    figures += [f"r_total {means['total']:+.3f}"] if "total" in means else []
    samples = results.completed_samples if results else 0
    return f"{name}: {', '.join(figures)} ({samples} samples)"


class _Reporter:
    def __init__(self, total: int, out: TextIO) -> None:
        self.total, self.out, self.done = total, out, 0

    def report(self, log: EvalLog) -> None:
        self.done += 1
        print(f"[{self.done}/{self.total}] {task_line(log)}", file=self.out, flush=True)


_active: list[_Reporter] = []


@hooks(name="ecom_bench_sweep_lines", description="ecom-bench sweep: one line per finished task")
class SweepLines(Hooks):
    def enabled(self) -> bool:
        return bool(_active)

    async def on_task_end(self, data: TaskEnd) -> None:
        if _active:
            _active[-1].report(data.log)


@contextmanager
def task_lines(total: int, out: TextIO | None = None) -> Iterator[_Reporter]:
    """Print a line per task that ends inside the block (`total`: the grid's tasks)."""
    reporter = _Reporter(total, out or sys.stderr)
    console = rich.get_console()
    quiet, console.quiet = console.quiet, True  # Inspect's banners and panels: the lines replace them
    _active.append(reporter)
    try:
        yield reporter
    finally:
        _active.remove(reporter)
        console.quiet = quiet
