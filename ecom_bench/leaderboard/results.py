"""Episode outcomes read from Inspect logs with `inspect_ai.analysis`, one row per episode.

Any logs of ecom_bench tasks work: an `ecom-bench sweep` directory, single `inspect eval`
runs, collections (each sample's metadata says its env and difficulty). Logs run with other
task settings (`config.py`: catalogue, its size and seed, strict, embedder, customer, task
version) are never merged: a directory holding several configurations is refused with the
settings that differ, unless filters pick one. Within one configuration, a sample run again
by the same agent (a separate run) counts once: the newest log that scored it supplies all
its epochs, so a rerun replaces rather than double-counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from inspect_ai.analysis import EvalInfo, EvalModel, SampleSummary, samples_df
from inspect_ai.log import list_eval_logs, read_eval_log

from ecom_bench.leaderboard.config import Config, agent_label, select, task_config
from ecom_bench.scorers import SCORE_PARTS

#: Columns of the episode table: who, where, which episode, then the five reward parts.
KEYS = ("model", "env", "difficulty", "sample", "epoch")


@dataclass(frozen=True)
class Episodes:
    """The tidy episode table of one configuration plus what was left out of it, and why."""

    table: pd.DataFrame  # columns KEYS + SCORE_PARTS
    logs: int
    errored: int  # samples with an error (no score): left out
    superseded: int  # epochs replaced by a newer log of the same sample, agent and configuration
    config: Config = ()
    replaced: tuple[str, ...] = ()  # which: "ecom/heuristic on cart: 2"
    other_configs: int = 0  # logs of other configurations left out by the filters


def _log_settings(locations: pd.Series) -> pd.DataFrame:
    """Per log file: its configuration and the agent's label (from the log header)."""
    rows = []
    for location in locations.unique():
        spec = read_eval_log(str(location), header_only=True).eval
        rows.append({"log": location, "_config": task_config(spec), "_agent": agent_label(spec)})
    return pd.DataFrame(rows, columns=["log", "_config", "_agent"])


def read_episodes(log_dir: str | Path, config: Mapping[str, str] | None = None) -> Episodes:
    """Every scored episode of the ecom_bench logs under `log_dir`, of one configuration.

    `config` selects settings (`{"catalog": "synthetic"}`); what is left must be one configuration.
    """
    path = Path(log_dir)
    if not path.exists():
        raise ValueError(f"log directory does not exist: {str(log_dir)!r}")
    raw = samples_df(str(path), columns=SampleSummary + EvalModel + EvalInfo, quiet=True)
    if raw.empty or "metadata_env" not in raw.columns:
        logs = len(list_eval_logs(str(path)))
        if logs:
            raise ValueError(f"the {logs} log(s) under {str(log_dir)!r} hold no finished ecom_bench sample: "
                             "an interrupted sweep? Rerun `ecom-bench sweep` with the same arguments to complete it")
        raise ValueError(f"no ecom_bench samples in the logs under {str(log_dir)!r} "
                         "(run `ecom-bench sweep` or `inspect eval ecom_bench/...` with --log-dir first)")
    missing = [f"score_{p}" for p in SCORE_PARTS if f"score_{p}" not in raw.columns]
    if missing:
        raise ValueError(f"the logs under {str(log_dir)!r} lack {', '.join(missing)}: "
                         "they were written by an older ecom-bench (one dict-valued scorer); rerun them")
    raw = raw[raw["metadata_env"].notna()]
    raw = raw.merge(_log_settings(raw["log"]), on="log", how="left")
    chosen = select(set(raw["_config"]), config or {}, repr(str(log_dir)))
    is_chosen = raw["_config"].map(lambda c: c == chosen)  # whole tuples compared, never element by element
    other_logs = int(raw.loc[~is_chosen, "eval_id"].nunique())
    raw = raw[is_chosen]
    scores = raw[[f"score_{p}" for p in SCORE_PARTS]].astype(float)
    errored = int(scores.isna().any(axis=1).sum())
    raw = raw[scores.notna().all(axis=1)]
    table = pd.DataFrame({
        "model": raw["_agent"].astype(str),
        "env": raw["metadata_env"].astype(str),
        "difficulty": raw["metadata_difficulty"].astype(int),
        "sample": raw["id"].astype(str),
        "epoch": raw["epoch"].astype(int),
        **{p: raw[f"score_{p}"].astype(float) for p in SCORE_PARTS},
        "_created": pd.to_datetime(raw["created"], utc=True, format="ISO8601"),
        "_log": raw["log"].astype(str),
    }).sort_values("_created")
    # the newest log that scored a sample (for this agent) supplies all its epochs
    newest = table.groupby(["model", "sample"])["_log"].transform("last")
    kept = table["_log"] == newest
    replaced = table[~kept].groupby(["model", "env"]).size()
    table = (table[kept].drop(columns=["_created", "_log"])
             .sort_values(list(KEYS), ignore_index=True))
    return Episodes(table, logs=int(raw["eval_id"].nunique()), errored=errored, superseded=int((~kept).sum()),
                    config=chosen, replaced=tuple(f"{r.model} on {r.env}: {r.n}" for r in replaced.reset_index(name="n").itertuples()),
                    other_configs=other_logs)
