"""The ability frontier d50: the difficulty at which an agent succeeds half the time.

Success is fitted against difficulty with a logistic regression, p(d) = expit(a + b·d),
by maximum likelihood (`scipy.optimize.minimize`) with a weak ridge on the slope: an
agent that solves everything up to d=6 and nothing from d=9 separates the data
perfectly, where the plain MLE has no finite solution; the ridge keeps the crossing
between the two levels instead. The interval resamples whole samples (all epochs of
one episode together) with `scipy.stats.bootstrap`.

Where the fitted curve stays above 0.5 over the whole tested range the frontier lies
beyond it (reported as "> d_max"), where it stays below, under it ("< d_min"): a number
outside the tested range would be extrapolation.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
from scipy import optimize, special, stats

#: Ridge on the slope (per unit of difficulty scaled to the tested range).
SLOPE_RIDGE = 0.05
BOOTSTRAP_RESAMPLES = 1000
CONFIDENCE = 0.95


class FrontierRange(str, Enum):
    WITHIN = "within"
    BEYOND = "beyond"  # succeeds more than half the time at every tested difficulty
    BELOW = "below"  # succeeds less than half the time at every tested difficulty


@dataclass(frozen=True)
class Frontier:
    """d50 of one agent on one env, or where it lies relative to the tested range."""

    range: FrontierRange
    d50: float | None  # only WITHIN
    low: float | None  # bootstrap interval (clipped to the tested range), only WITHIN
    high: float | None
    d_min: int
    d_max: int

    def label(self) -> str:
        if self.range is FrontierRange.BEYOND:
            return f"> {self.d_max} (beyond tested range)"
        if self.range is FrontierRange.BELOW:
            return f"< {self.d_min} (below tested range)"
        return f"{self.d50:.1f} [{self.low:.1f}, {self.high:.1f}]"


@dataclass(frozen=True)
class LogisticFit:
    intercept: float  # on the scaled difficulty x = (d - d_min) / (d_max - d_min)
    slope: float
    d_min: int
    d_max: int

    def probability(self, d: np.ndarray | float) -> np.ndarray:
        return special.expit(self.intercept + self.slope * self._scale(d))

    def crossing(self) -> float | None:
        """The d where p = 0.5 (None for a flat curve)."""
        if abs(self.slope) < 1e-12:
            return None
        return self.d_min - self.intercept / self.slope * (self.d_max - self.d_min)

    def _scale(self, d: np.ndarray | float) -> np.ndarray:
        return (np.asarray(d, dtype=float) - self.d_min) / max(self.d_max - self.d_min, 1)


def fit_logistic(difficulty: np.ndarray, successes: np.ndarray, trials: np.ndarray) -> LogisticFit:
    """Binomial logistic fit of successes/trials against difficulty (one row per sample)."""
    d = np.asarray(difficulty, dtype=float)
    c = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    d_min, d_max = int(d.min()), int(d.max())
    x = (d - d_min) / max(d_max - d_min, 1)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = theta[0] + theta[1] * x
        # -log-likelihood of c successes in n trials, with log(1 + e^z) computed stably
        nll = float(np.sum(n * np.logaddexp(0.0, z) - c * z)) + 0.5 * SLOPE_RIDGE * theta[1] ** 2
        residual = n * special.expit(z) - c
        return nll, np.array([residual.sum(), (residual * x).sum() + SLOPE_RIDGE * theta[1]])

    def hessian(theta: np.ndarray) -> np.ndarray:
        p = special.expit(theta[0] + theta[1] * x)
        w = n * p * (1.0 - p)
        return np.array([[w.sum(), (w * x).sum()], [(w * x).sum(), (w * x * x).sum() + SLOPE_RIDGE]])

    # Newton-CG with the exact Hessian: ~1 ms a fit, so a 1000-resample bootstrap takes about a second
    result = optimize.minimize(loss, np.zeros(2), jac=True, hess=hessian, method="Newton-CG")
    return LogisticFit(float(result.x[0]), float(result.x[1]), d_min, d_max)


def estimate_frontier(difficulty: np.ndarray, successes: np.ndarray, trials: np.ndarray,
                      resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> Frontier:
    """d50 with a bootstrap interval, or where the frontier lies relative to the tested range.

    Needs at least two distinct difficulties to say anything about a slope; with one,
    the frontier is beyond or below it by the observed rate.
    """
    d = np.asarray(difficulty, dtype=float)
    fit = fit_logistic(d, successes, trials)
    at_min, at_max = (float(fit.probability(v)) for v in (fit.d_min, fit.d_max))
    if min(at_min, at_max) >= 0.5:
        return Frontier(FrontierRange.BEYOND, None, None, None, fit.d_min, fit.d_max)
    if max(at_min, at_max) < 0.5 or fit.d_min == fit.d_max:
        return Frontier(FrontierRange.BELOW, None, None, None, fit.d_min, fit.d_max)

    def d50(d_: np.ndarray, c_: np.ndarray, n_: np.ndarray) -> float:
        crossing = fit_logistic(d_, c_, n_).crossing() if np.unique(d_).size > 1 else None
        if crossing is None:  # a resample with one level or a flat fit: the edge it leans to
            return float(fit.d_max if np.sum(c_) >= 0.5 * np.sum(n_) else fit.d_min)
        return float(np.clip(crossing, fit.d_min, fit.d_max))

    point = d50(d, np.asarray(successes, float), np.asarray(trials, float))
    interval = stats.bootstrap((d, np.asarray(successes, float), np.asarray(trials, float)), d50,
                               paired=True, vectorized=False, n_resamples=resamples, method="percentile",
                               confidence_level=CONFIDENCE, rng=np.random.default_rng(seed)).confidence_interval
    return Frontier(FrontierRange.WITHIN, point, float(interval.low), float(interval.high), fit.d_min, fit.d_max)
