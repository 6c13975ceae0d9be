"""The scorer: reads the episode outcome the solver computed with the core reward.

Value keys: task, efficiency, hallucination, total, success (each with mean and
stderr; in a collection also the mean per env). The explanation says why; metadata
holds the hidden goal and final world.
"""

from __future__ import annotations

from inspect_ai.scorer import Metric, Score, Scorer, Target, grouped, mean, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from ecom_bench.rewards import FAILURE_SCORE
from ecom_bench.scorers._answer import answer_text
from ecom_bench.scorers._store import EpisodeStore

SCORE_KEYS = ("task", "efficiency", "hallucination", "total", "success")


def score_metrics(by_env: bool = False) -> dict[str, list[Metric]]:
    """Mean and stderr of every value key; `by_env` (collections) adds the mean per env."""
    per_key: list[Metric] = [mean(), stderr()]
    if by_env:
        per_key.append(grouped(mean(), "env", all=False))
    return {key: list(per_key) for key in SCORE_KEYS}


async def _score(state: TaskState, target: Target) -> Score:
    info = store_as(EpisodeStore)
    outcome = info.outcome
    if outcome is None:  # the solver never ran to its finally block
        value = dict.fromkeys(SCORE_KEYS, FAILURE_SCORE)
        value["success"] = 0.0
        return Score(value=value, explanation="No episode outcome recorded: failure score.",
                     metadata={"env": state.metadata.get("env")})
    final = outcome["final_state"]
    return Score(
        value=outcome["reward"],
        answer=answer_text(final, info.env),
        explanation=outcome["explanation"],
        metadata={
            "env": info.env,
            "difficulty": info.difficulty,
            "turns": outcome["turns"],
            "user_caused_turns": outcome["user_caused_turns"],
            "end_reason": outcome["end_reason"],
            "hard_fail": outcome["hard_fail"],
            "invented_ids": outcome["invented_ids"],
            "verdict": outcome["verdict"]["details"],
            "hidden_goal": outcome["hidden"],
            "final_state": final,
            "disclosure": outcome["disclosure"],
            "user_acts": outcome["user_acts"],
        },
    )


@scorer(metrics=score_metrics())
def episode_scorer() -> Scorer:
    """Score one episode from the outcome the solver recorded."""
    return _score
