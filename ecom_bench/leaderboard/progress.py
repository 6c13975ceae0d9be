"""The sweep's own displays: one progress bar for the whole grid (`progress`, the default), or one
compact line per finished task (`lines`, for logs that want a record of each task).

Inspect's own display shows a panel of some 18 lines per finished task (1,300 lines for a
72-task grid), on a terminal as without one. Here Inspect runs silently and Inspect hooks
report instead: as each sample and task ends, the bar moves; a task that ends in an error is
printed above it, as a line that stays. The hooks are enabled only while a sweep reports
(this module is imported only then: Inspect announces registered hooks when a run starts).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

import rich
from inspect_ai.hooks import Hooks, SampleEnd, TaskEnd, hooks
from inspect_ai.log import EvalLog
from tqdm import tqdm

#: The sweep's displays (besides Inspect's own).
DISPLAYS = ("progress", "lines")
#: Seconds between the bar's redraws: in a file or CI log each redraw is written out.
REDRAW_S = 1.0


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
    """`lines`: a line per finished task."""

    def __init__(self, total: int, out: TextIO) -> None:
        self.total, self.out, self.done = total, out, 0

    def sample_done(self) -> None:
        pass

    def report(self, log: EvalLog) -> None:
        self.done += 1
        print(f"[{self.done}/{self.total}] {task_line(log)}", file=self.out, flush=True)

    def close(self, logs: list[EvalLog] | None) -> None:
        """The run is over (`logs`: the eval set's, or None when it was stopped)."""


class _Bar(_Reporter):
    """`progress`: one bar over the grid's tasks; the samples done and the last task's figures beside it,
    and each task that did not succeed printed above it."""

    def __init__(self, total: int, out: TextIO) -> None:
        super().__init__(total, out)
        self.samples = self.failed = 0
        self.last = ""
        self.bar = tqdm(total=total, desc="sweep", unit="task", file=out, dynamic_ncols=True,
                        mininterval=REDRAW_S, leave=True)

    def _show(self) -> None:
        failed = f"{self.failed} failed, " if self.failed else ""
        self.bar.set_postfix_str(f"{failed}{self.samples} samples; last: {self.last}", refresh=False)

    def sample_done(self) -> None:
        self.samples += 1
        self._show()

    def report(self, log: EvalLog) -> None:
        line = task_line(log)
        if log.status == "success":
            self.last = line
            self._show()
            self.bar.update(1)
        else:  # an error stays on screen (the bar counts the task once it succeeds, on a retry or a rerun)
            self.failed += 1
            self._show()
            self.bar.write(f"error: {line}", file=self.out)

    def close(self, logs: list[EvalLog] | None) -> None:
        if self.bar.disable:  # closed already (tqdm's own mark)
            return
        if logs is not None:  # a rerun's finished tasks are reused without running: count them too
            self.bar.n = sum(log.status == "success" for log in logs)
        self._show()
        self.bar.close()


_active: list[_Reporter] = []


@hooks(name="ecom_bench_sweep_progress", description="ecom-bench sweep: one progress display for the grid")
class SweepProgress(Hooks):
    def enabled(self) -> bool:
        return bool(_active)

    async def on_sample_end(self, data: SampleEnd) -> None:
        if _active:
            _active[-1].sample_done()

    async def on_task_end(self, data: TaskEnd) -> None:
        if _active:
            _active[-1].report(data.log)


@contextmanager
def sweep_display(kind: str, total: int, out: TextIO | None = None) -> Iterator[_Reporter]:
    """Report the tasks that end inside the block (`total`: the grid's tasks) as `kind` shows them;
    `close` the reporter with the eval set's logs when it returns."""
    reporter = (_Bar if kind == "progress" else _Reporter)(total, out or sys.stderr)
    console = rich.get_console()
    quiet, console.quiet = console.quiet, True  # Inspect's banners and panels: the display replaces them
    _active.append(reporter)
    try:
        yield reporter
    finally:
        _active.remove(reporter)
        console.quiet = quiet
        reporter.close(None)
