"""The leaderboard's table and figures are publishable: ranked rows, one legend outside the
panels, no type under 9 pt. On a synthetic episode table (no eval needed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.text import Text

from ecom_bench.leaderboard.plots import MIN_FONT_PT, heatmap_figure, success_vs_difficulty_figure
from ecom_bench.leaderboard.report import ALL_ENVS, by_difficulty, leaderboard_rows, to_markdown

ENVS = ("cart", "discovery", "substitution", "returns", "tracking", "policy", "bundle", "journey")
#: Success probability at d = 0 per model; names chosen so that alphabetical order is not rank order.
SKILL = {"a-weak": 0.1, "m-strong": 0.95, "z-middle": 0.6}


@pytest.fixture(scope="module")
def episodes() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    records = []
    for model, skill in SKILL.items():
        for env in ENVS:
            for d in (0, 4, 8, 12):
                for i in range(6):
                    win = rng.random() < skill * (1 - d / 20)
                    records.append({"model": model, "env": env, "difficulty": d, "sample": f"{env}-d{d}-{i}",
                                    "epoch": 1, "task": 1.0 if win else -0.5, "efficiency": 1.0,
                                    "hallucination": 0.0, "total": 0.9 if win else -0.3, "success": float(win)})
    return pd.DataFrame.from_records(records)


@pytest.fixture(scope="module")
def rows(episodes):
    return leaderboard_rows(episodes, resamples=50)


def test_table_rows_are_ranked_best_first(rows):
    models = list(dict.fromkeys(r.model for r in rows))
    assert models == ["m-strong", "z-middle", "a-weak"]
    overall = {r.model: r.success.value for r in rows if r.env == ALL_ENVS}
    assert [overall[m] for m in models] == sorted(overall.values(), reverse=True)
    # each model's envs in the same fixed order, its all-envs row last
    for model in models:
        assert [r.env for r in rows if r.model == model] == [*ENVS, ALL_ENVS]
    table = [line.split(" | ")[0].strip("| ") for line in to_markdown(rows).splitlines()[2:]]
    assert list(dict.fromkeys(table)) == models


def _texts(fig) -> list[Text]:
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def test_success_plot_has_one_legend_outside_the_panels_and_readable_type(episodes, rows):
    fig = success_vs_difficulty_figure(by_difficulty(episodes), rows)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert len(fig.legends) == 1 and not [ax for ax in fig.axes if ax.get_legend() is not None]
    [legend] = fig.legends
    box = legend.get_window_extent(renderer)
    panels = [ax for ax in fig.axes if ax.axison]
    assert len(panels) == len(ENVS)
    assert not [ax for ax in panels if box.overlaps(ax.get_window_extent(renderer))]
    assert [t.get_text() for t in legend.get_texts()][:3] == ["m-strong", "z-middle", "a-weak"]
    small = {t.get_text(): t.get_fontsize() for t in _texts(fig) if t.get_fontsize() < MIN_FONT_PT}
    assert not small and MIN_FONT_PT >= 9


def test_heatmap_rows_are_ranked_and_readable(rows):
    fig = heatmap_figure(rows)
    fig.canvas.draw()
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["m-strong", "z-middle", "a-weak"]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(ENVS)
    assert not {t.get_text(): t.get_fontsize() for t in _texts(fig) if t.get_fontsize() < MIN_FONT_PT}


def test_a_one_env_figure_keeps_its_titles_and_legend_whole(episodes, tmp_path):
    """One panel is narrower than the legend and the titles: the saved image grows to hold them."""
    from matplotlib.image import imread

    from ecom_bench.leaderboard.plots import success_vs_difficulty

    one = episodes[episodes["env"] == "cart"].assign(model=lambda df: df["model"] + " (temperature=0.7, a long label)")
    rows = leaderboard_rows(one, resamples=20)
    figure = success_vs_difficulty_figure(by_difficulty(one), rows)
    renderer = figure.canvas.get_renderer()
    needed = max(t.get_window_extent(renderer).width for t in figure.findobj(Text) if t.get_text())
    legend = figure.legends[0].get_window_extent(renderer).width
    path = success_vs_difficulty(by_difficulty(one), rows, tmp_path / "one.png")
    assert imread(path).shape[1] >= max(needed, legend)
