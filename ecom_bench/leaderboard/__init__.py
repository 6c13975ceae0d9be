"""Leaderboards: sweep models over envs × difficulties, then compare them.

`ecom-bench sweep` runs the grid as an Inspect eval set; `ecom-bench leaderboard DIR`
reads the logs with `inspect_ai.analysis` and writes the table (markdown, CSV), the
plots (PNG) and each model's ability frontier d50 per env, for one task configuration
(`config.py`) at a time.
"""

from ecom_bench.leaderboard.build import LeaderboardFiles, build_leaderboard
from ecom_bench.leaderboard.frontier import Frontier, FrontierRange, estimate_frontier, fit_logistic
from ecom_bench.leaderboard.report import Row, by_difficulty, leaderboard_rows, to_frame, to_markdown
from ecom_bench.leaderboard.results import Episodes, read_episodes
from ecom_bench.leaderboard.sweep import (
    ModelOptions,
    SweepGrid,
    make_grid,
    parse_difficulties,
    parse_key_values,
    parse_model_roles,
    run_sweep,
)

__all__ = ["Episodes", "Frontier", "FrontierRange", "LeaderboardFiles", "ModelOptions", "Row", "SweepGrid",
           "build_leaderboard", "by_difficulty", "estimate_frontier", "fit_logistic", "leaderboard_rows", "make_grid",
           "parse_difficulties", "parse_key_values", "parse_model_roles", "read_episodes", "run_sweep", "to_frame", "to_markdown"]
