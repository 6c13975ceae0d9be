"""The Inspect scorer over the core's verifiable reward."""

from ecom_bench.scorers.episode_scorer import SCORE_KEYS, episode_scorer, score_metrics

__all__ = ["SCORE_KEYS", "episode_scorer", "score_metrics"]
