"""PNG plots of a leaderboard with matplotlib (headless `Agg` backend, no display needed).

Made to be published: one legend for the whole figure, outside the panels (a legend per
panel repeated itself and hid data points), no type under `MIN_FONT_PT`, and models in
the leaderboard's rank order (best first: `report.leaderboard_rows`), envs in one fixed order.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from ecom_bench.leaderboard.frontier import Frontier, FrontierRange  # noqa: E402
from ecom_bench.leaderboard.report import ALL_ENVS, Row, env_order  # noqa: E402

#: The smallest type in a figure, in points (at the figure's own size).
MIN_FONT_PT = 9
_STYLE: dict[Any, Any] = {"font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "xtick.labelsize": MIN_FONT_PT,
          "ytick.labelsize": MIN_FONT_PT, "legend.fontsize": 10, "figure.titlesize": 12}
DPI = 150


def _models(rows: list[Row]) -> list[str]:
    """The models in the rows' (rank) order."""
    return list(dict.fromkeys(r.model for r in rows))


def _d50_label(frontier: Frontier) -> str:
    """"8.7 [7.4, 10.2]", "> 12", "< 0": the frontier's label without its note."""
    return frontier.label().split(" (")[0]


def success_vs_difficulty_figure(points: pd.DataFrame, rows: list[Row]) -> Figure:
    """One panel per env: success against d, one line per model (±1 stderr), d50 marked; the
    d50 estimates inside the tested range are written under each panel's title."""
    envs = env_order(points["env"])
    models = [m for m in _models(rows) if m in set(points["model"])] or sorted(points["model"].unique())
    colours = {m: plt.get_cmap("tab10")(i % 10) for i, m in enumerate(models)}
    frontiers = {(r.model, r.env): r.frontier for r in rows if r.frontier}
    cols = min(4, len(envs))
    nrows = math.ceil(len(envs) / cols)
    tested = sorted(int(d) for d in points["difficulty"].unique())
    step = float(np.diff(tested).min()) if len(tested) > 1 else 1.0
    # a small horizontal offset per model, so that lines at the same success do not hide each other
    offsets = {m: (i - (len(models) - 1) / 2) * 0.04 * step for i, m in enumerate(models)}
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(nrows, cols, figsize=(3.1 * cols, 2.9 * nrows + 0.9), squeeze=False, sharey=True,
                                 layout="constrained")
        for ax, env in zip(axes.flat, envs, strict=False):  # a full grid may have spare axes
            inside = []
            for model in models:
                pts = points[(points["env"] == env) & (points["model"] == model)].sort_values("difficulty")
                if pts.empty:
                    continue
                ax.errorbar(pts["difficulty"] + offsets[model], pts["success"], yerr=pts["success_stderr"].fillna(0),
                            marker="o", ms=4, capsize=2, color=colours[model])
                frontier = frontiers.get((model, env))
                if frontier is not None and frontier.range is FrontierRange.WITHIN:
                    ax.axvline(frontier.d50, color=colours[model], ls=":", lw=1.2)
                    ax.axvspan(frontier.low, frontier.high, color=colours[model], alpha=0.08)
                    inside.append(f"{model} {_d50_label(frontier)}")
            ax.axhline(0.5, color="grey", lw=0.6, ls="--")
            ax.set_title(env + ("\nd50: " + "; ".join(inside) if inside else ""), fontsize=11 if not inside else 10)
            ax.set_ylim(-0.05, 1.05)
            ax.set_xticks(tested)
            ax.set_xlabel("difficulty d")
        for ax in axes[:, 0]:
            ax.set_ylabel("success")
        for ax in list(axes.flat)[len(envs):]:
            ax.axis("off")
        handles = [Line2D([], [], color=colours[m], marker="o", ms=5, lw=1.5) for m in models]
        handles.append(Line2D([], [], color="grey", ls=":", lw=1.2))
        fig.legend(handles, [*models, "d50 (shaded: its 95% interval)"], loc="outside lower center",
                   ncol=min(len(handles), 4), frameon=False)
        fig.suptitle("Success against difficulty (models best first)")
    return fig


def heatmap_figure(rows: list[Row]) -> Figure:
    """Model × env: mean success over the tested difficulties, each cell annotated with d50;
    models best first (top), envs in their fixed order."""
    models = _models([r for r in rows if r.env != ALL_ENVS] or rows)
    envs = env_order(r.env for r in rows if r.env != ALL_ENVS)
    cells = {(r.model, r.env): r for r in rows}
    grid = np.full((len(models), len(envs)), np.nan)
    for i, m in enumerate(models):
        for j, e in enumerate(envs):
            if (m, e) in cells:
                grid[i, j] = cells[(m, e)].success.value
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(1.15 * len(envs) + 2.6, 0.75 * len(models) + 1.9), layout="constrained")
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(envs)), envs, rotation=30, ha="right")
        ax.set_yticks(range(len(models)), models)
        for i, m in enumerate(models):
            for j, e in enumerate(envs):
                row = cells.get((m, e))
                if row is None:
                    continue
                d50 = _d50_label(row.frontier).split(" [")[0] if row.frontier else ""
                ax.text(j, i, f"{row.success.value:.2f}\nd50 {d50}", ha="center", va="center", fontsize=MIN_FONT_PT,
                        color="white" if row.success.value < 0.6 else "black")
        fig.colorbar(image, ax=ax, label="success (mean over tested d)")
        ax.set_title("Success by model (best first) and env")
    return fig


def _save(fig: Figure, path: Path) -> Path:
    fig.savefig(path, dpi=DPI, bbox_inches="tight")  # a one-panel figure is narrower than its titles and legend
    plt.close(fig)
    return path


def success_vs_difficulty(points: pd.DataFrame, rows: list[Row], path: Path) -> Path:
    """`success_vs_difficulty_figure` written to `path` (PNG)."""
    return _save(success_vs_difficulty_figure(points, rows), path)


def heatmap(rows: list[Row], path: Path) -> Path:
    """`heatmap_figure` written to `path` (PNG)."""
    return _save(heatmap_figure(rows), path)
