"""Episode outcomes read from Inspect logs with `inspect_ai.analysis`, one row per episode.

Any logs of ecom_bench tasks work: an `ecom-bench sweep` directory, single `inspect eval`
runs, collections (each sample's metadata says its env and difficulty). A sample run
twice in the same directory by the same model (two separate runs) counts once: the
newest log's epochs are kept, so a rerun replaces rather than double-counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from inspect_ai.analysis import EvalInfo, EvalModel, SampleSummary, samples_df
from inspect_ai.log import list_eval_logs

from ecom_bench.scorers import SCORE_PARTS

#: Columns of the episode table: who, where, which episode, then the five reward parts.
KEYS = ("model", "env", "difficulty", "sample", "epoch")


@dataclass(frozen=True)
class Episodes:
    """The tidy episode table plus what was left out of it, and why."""

    table: pd.DataFrame  # columns KEYS + SCORE_PARTS
    logs: int
    errored: int  # samples with an error (no score): left out
    superseded: int  # rows replaced by a newer log of the same sample


def read_episodes(log_dir: str | Path) -> Episodes:
    """Every scored episode of the ecom_bench logs under `log_dir`."""
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
    scores = raw[[f"score_{p}" for p in SCORE_PARTS]].astype(float)
    errored = int(scores.isna().any(axis=1).sum())
    raw = raw[scores.notna().all(axis=1)]
    table = pd.DataFrame({
        "model": raw["model"].astype(str),
        "env": raw["metadata_env"].astype(str),
        "difficulty": raw["metadata_difficulty"].astype(int),
        "sample": raw["id"].astype(str),
        "epoch": raw["epoch"].astype(int),
        **{p: raw[f"score_{p}"].astype(float) for p in SCORE_PARTS},
        "_created": pd.to_datetime(raw["created"], utc=True, format="ISO8601"),
    })
    before = len(table)
    table = (table.sort_values("_created")
             .drop_duplicates(subset=["model", "sample", "epoch"], keep="last")
             .drop(columns="_created")
             .sort_values(list(KEYS), ignore_index=True))
    return Episodes(table, logs=int(raw["eval_id"].nunique()), errored=errored, superseded=before - len(table))
