"""`ecom-bench leaderboard DIR`: read the logs, write the table, CSVs and plots."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ecom_bench.leaderboard.config import describe
from ecom_bench.leaderboard.frontier import BOOTSTRAP_RESAMPLES
from ecom_bench.leaderboard.report import by_difficulty, leaderboard_rows, to_frame, to_markdown
from ecom_bench.leaderboard.results import Episodes, read_episodes


@dataclass(frozen=True)
class LeaderboardFiles:
    markdown: str
    markdown_path: Path
    table_csv: Path
    by_difficulty_csv: Path
    plots: tuple[Path, ...]
    episodes: Episodes


def build_leaderboard(log_dir: str | Path, out_dir: str | Path | None = None,
                      resamples: int = BOOTSTRAP_RESAMPLES, plots: bool = True,
                      config: Mapping[str, str] | None = None) -> LeaderboardFiles:
    """Everything `ecom-bench leaderboard` writes; `out_dir` defaults to `<log_dir>/leaderboard`.

    `config` selects one configuration where the logs hold several (`results.read_episodes`).
    """
    episodes = read_episodes(log_dir, config)
    out = Path(out_dir) if out_dir is not None else Path(log_dir) / "leaderboard"
    out.mkdir(parents=True, exist_ok=True)
    rows = leaderboard_rows(episodes.table, resamples=resamples)
    points = by_difficulty(episodes.table)
    markdown = f"Configuration: {describe(episodes.config)}\n\n{to_markdown(rows)}"
    markdown_path = out / "leaderboard.md"
    markdown_path.write_text(markdown + "\n")
    table_csv, points_csv = out / "leaderboard.csv", out / "by_difficulty.csv"
    to_frame(rows).assign(**dict(episodes.config)).to_csv(table_csv, index=False)  # the settings beside every row
    points.to_csv(points_csv, index=False)
    written: tuple[Path, ...] = ()
    if plots:
        from ecom_bench.leaderboard.plots import heatmap, success_vs_difficulty

        written = (success_vs_difficulty(points, rows, out / "success_vs_difficulty.png"),
                   heatmap(rows, out / "heatmap.png"))
    return LeaderboardFiles(markdown, markdown_path, table_csv, points_csv, written, episodes)
