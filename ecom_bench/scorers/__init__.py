"""Inspect scorers over the core verifier and reward."""

from ecom_bench.scorers.episode_scorer import episode_scorer

__all__ = ["episode_scorer"]
