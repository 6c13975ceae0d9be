"""The leaderboard: per model and env, success, r_total, pass^k / pass@k and d50.

Intervals: every mean has a standard error over samples (the epochs of one sample are
averaged first, since they are not independent draws of the task); d50 has a 95%
bootstrap interval (`frontier.py`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ecom_bench.leaderboard.frontier import BOOTSTRAP_RESAMPLES, Frontier, estimate_frontier
from ecom_bench.scorers import pass_k_of_sample

ALL_ENVS = "all"


@dataclass(frozen=True)
class Estimate:
    value: float
    stderr: float

    def label(self) -> str:
        return f"{self.value:.3f} ± {self.stderr:.3f}"


def _over_samples(per_sample: pd.Series) -> Estimate:
    n = len(per_sample)
    stderr = float(per_sample.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
    return Estimate(float(per_sample.mean()), stderr)


@dataclass(frozen=True)
class Row:
    """One model on one env (or on all envs together)."""

    model: str
    env: str
    success: Estimate
    total: Estimate
    epochs: int  # k: the fewest epochs any sample has
    pass_hat_k: Estimate | None  # pass^k, k = epochs >= 2
    pass_at_k: Estimate | None  # pass@k
    frontier: Frontier | None  # None for the all-envs row
    samples: int
    episodes: int
    difficulties: tuple[int, ...]


def _row(model: str, env: str, episodes: pd.DataFrame, resamples: int, with_frontier: bool) -> Row:
    per_sample = episodes.groupby("sample").agg(
        success=("success", "mean"), total=("total", "mean"), difficulty=("difficulty", "first"),
        wins=("success", "sum"), trials=("success", "size"))
    k = int(per_sample["trials"].min())
    hat = at = None
    if k >= 2:
        per_sample_k = [pass_k_of_sample(list(g["success"]), k) for _, g in episodes.groupby("sample")]
        hat = _over_samples(pd.Series([h for h, _ in per_sample_k]))
        at = _over_samples(pd.Series([a for _, a in per_sample_k]))
    frontier = None
    if with_frontier:
        frontier = estimate_frontier(per_sample["difficulty"].to_numpy(), per_sample["wins"].to_numpy(),
                                     per_sample["trials"].to_numpy(), resamples=resamples)
    return Row(model, env, _over_samples(per_sample["success"]), _over_samples(per_sample["total"]), k, hat, at,
               frontier, samples=len(per_sample), episodes=len(episodes),
               difficulties=tuple(sorted(int(d) for d in per_sample["difficulty"].unique())))


def model_ranking(episodes: pd.DataFrame) -> list[str]:
    """The models best first: by mean success over all their episodes (samples weighted equally,
    as in the table), ties by mean r_total (the headline), then by name."""
    per_sample = episodes.groupby(["model", "sample"]).agg(success=("success", "mean"), total=("total", "mean"))
    means = per_sample.groupby("model").mean()
    key = {str(m): (-float(r.success), -float(r.total), str(m)) for m, r in means.iterrows()}
    return sorted(key, key=key.__getitem__)


def env_order(envs: Iterable[str]) -> list[str]:
    """The envs in the package's own order (C8's: cart first, journey last), any others after by name."""
    from ecom_bench.envs import ENVIRONMENTS

    known = list(ENVIRONMENTS)
    return sorted(set(envs), key=lambda e: (known.index(e) if e in known else len(known), e))


def leaderboard_rows(episodes: pd.DataFrame, resamples: int = BOOTSTRAP_RESAMPLES) -> list[Row]:
    """A row per model and env, then per model over all its envs (equal weight per episode).

    Models are ranked best first (`model_ranking`); each model's envs come in one fixed order
    (`env_order`), so that the rows of two models line up.
    """
    rows = []
    for model in model_ranking(episodes):
        by_model = episodes[episodes["model"] == model]
        for env in env_order(by_model["env"]):
            rows.append(_row(model, env, by_model[by_model["env"] == env], resamples, with_frontier=True))
        if by_model["env"].nunique() > 1:
            rows.append(_row(model, ALL_ENVS, by_model, resamples, with_frontier=False))
    return rows


def by_difficulty(episodes: pd.DataFrame) -> pd.DataFrame:
    """Mean success and total per model, env and difficulty, with n (the plots' points)."""
    per_sample = episodes.groupby(["model", "env", "difficulty", "sample"], as_index=False).agg(
        success=("success", "mean"), total=("total", "mean"))
    grouped = per_sample.groupby(["model", "env", "difficulty"])
    out = grouped.agg(success=("success", "mean"), total=("total", "mean"), samples=("sample", "size"))
    out["success_stderr"] = grouped["success"].std(ddof=1) / np.sqrt(out["samples"])
    out["episodes"] = episodes.groupby(["model", "env", "difficulty"]).size()
    return out.reset_index()


def to_frame(rows: list[Row]) -> pd.DataFrame:
    """The CSV form: one column per figure, stderr and interval bounds alongside."""
    records = []
    for r in rows:
        f = r.frontier
        records.append({
            "model": r.model, "env": r.env,
            "success": r.success.value, "success_stderr": r.success.stderr,
            "total": r.total.value, "total_stderr": r.total.stderr,
            "epochs": r.epochs,
            "pass_hat_k": r.pass_hat_k.value if r.pass_hat_k else None,
            "pass_hat_k_stderr": r.pass_hat_k.stderr if r.pass_hat_k else None,
            "pass_at_k": r.pass_at_k.value if r.pass_at_k else None,
            "pass_at_k_stderr": r.pass_at_k.stderr if r.pass_at_k else None,
            "d50": f.d50 if f else None, "d50_low": f.low if f else None, "d50_high": f.high if f else None,
            "d50_range": f.range.value if f else None,
            "difficulties": " ".join(map(str, r.difficulties)), "samples": r.samples, "episodes": r.episodes,
        })
    return pd.DataFrame.from_records(records)


def to_markdown(rows: list[Row]) -> str:
    """model × env: success, r_total, pass^k / pass@k where epochs allow, d50, n."""
    ks = sorted({r.epochs for r in rows if r.pass_hat_k})
    k_label = str(ks[0]) if len(ks) == 1 else "k"
    header = ["model", "env", "success", "r_total"]
    if ks:
        header += [f"pass^{k_label} (success)", f"pass@{k_label} (success)"]
    header += ["d50 [95% CI]", "d tested", "n (samples × epochs)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        cells = [r.model, f"**{r.env}**" if r.env == ALL_ENVS else r.env, r.success.label(), r.total.label()]
        if ks:
            cells += [r.pass_hat_k.label() if r.pass_hat_k else "–", r.pass_at_k.label() if r.pass_at_k else "–"]
        d = r.difficulties
        cells += [r.frontier.label() if r.frontier else "–",
                  f"{d[0]}–{d[-1]} ({len(d)} levels)" if len(d) > 1 else str(d[0]),
                  f"{r.samples} × {r.epochs}" if r.episodes == r.samples * r.epochs else str(r.episodes)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
