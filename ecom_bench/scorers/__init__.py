"""The Inspect scorers over the core's verifiable reward: one per reward part."""

from ecom_bench.scorers.reward_scorers import (
    SCORE_PARTS,
    NoEpisodeError,
    efficiency_score,
    hallucination_score,
    pass_k,
    pass_k_estimates,
    pass_k_of_sample,
    reward_scorers,
    solved_score,
    success_score,
    task_score,
    total_score,
)

__all__ = ["SCORE_PARTS", "NoEpisodeError", "efficiency_score", "hallucination_score", "pass_k", "pass_k_estimates", "pass_k_of_sample",
           "reward_scorers", "solved_score", "success_score", "task_score", "total_score"]
