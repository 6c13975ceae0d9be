"""PNG plots of a leaderboard with matplotlib (headless `Agg` backend, no display needed)."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ecom_bench.leaderboard.frontier import FrontierRange  # noqa: E402
from ecom_bench.leaderboard.report import ALL_ENVS, Row  # noqa: E402


def success_vs_difficulty(points: pd.DataFrame, rows: list[Row], path: Path) -> Path:
    """One panel per env: success against d, one line per model (±1 stderr), d50 marked."""
    envs = sorted(points["env"].unique())
    models = sorted(points["model"].unique())
    colours = {m: plt.get_cmap("tab10")(i % 10) for i, m in enumerate(models)}
    frontiers = {(r.model, r.env): r.frontier for r in rows if r.frontier}
    cols = min(4, len(envs))
    nrows = math.ceil(len(envs) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols, 3.0 * nrows), squeeze=False, sharey=True)
    step = float(np.diff(sorted(points["difficulty"].unique())).min()) if points["difficulty"].nunique() > 1 else 1.0
    # a small horizontal offset per model, so that lines at the same success do not hide each other
    offsets = {m: (i - (len(models) - 1) / 2) * 0.04 * step for i, m in enumerate(models)}
    for ax, env in zip(axes.flat, envs, strict=False):  # a full grid may have spare axes
        for model in models:
            pts = points[(points["env"] == env) & (points["model"] == model)].sort_values("difficulty")
            if pts.empty:
                continue
            frontier = frontiers.get((model, env))
            label = model if frontier is None else f"{model}: d50 {frontier.label().split(' (')[0]}"
            ax.errorbar(pts["difficulty"] + offsets[model], pts["success"], yerr=pts["success_stderr"].fillna(0), marker="o",
                        ms=4, capsize=2, color=colours[model], label=label)
            if frontier is not None and frontier.range is FrontierRange.WITHIN:
                ax.axvline(frontier.d50, color=colours[model], ls=":", lw=1)
                ax.axvspan(frontier.low, frontier.high, color=colours[model], alpha=0.08)
        ax.axhline(0.5, color="grey", lw=0.6, ls="--")
        ax.set_title(env)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("difficulty d")
        ax.legend(fontsize=6, loc="center left", framealpha=0.85)
    for ax in axes[:, 0]:
        ax.set_ylabel("success")
    for ax in list(axes.flat)[len(envs):]:
        ax.axis("off")
    fig.suptitle("Success against difficulty (dotted: d50, shaded: its 95% interval)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def heatmap(rows: list[Row], path: Path) -> Path:
    """Model × env: mean success over the tested difficulties, each cell annotated with d50."""
    models = sorted({r.model for r in rows})
    envs = sorted({r.env for r in rows if r.env != ALL_ENVS})
    cells = {(r.model, r.env): r for r in rows}
    grid = np.full((len(models), len(envs)), np.nan)
    for i, m in enumerate(models):
        for j, e in enumerate(envs):
            if (m, e) in cells:
                grid[i, j] = cells[(m, e)].success.value
    fig, ax = plt.subplots(figsize=(1.3 * len(envs) + 2.5, 0.8 * len(models) + 1.6))
    image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(envs)), envs, rotation=30, ha="right")
    ax.set_yticks(range(len(models)), models)
    for i, m in enumerate(models):
        for j, e in enumerate(envs):
            row = cells.get((m, e))
            if row is None:
                continue
            d50 = row.frontier.label().split(" (")[0].split(" [")[0] if row.frontier else ""
            ax.text(j, i, f"{row.success.value:.2f}\nd50 {d50}", ha="center", va="center", fontsize=7,
                    color="white" if row.success.value < 0.6 else "black")
    fig.colorbar(image, ax=ax, label="success (mean over tested d)")
    ax.set_title("Success by model and env")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
