"""The three-part verifiable reward and its composition (docs/design.md §Reward).

r_total = clip(0.75·r_task + 0.15·r_eff + 0.10·r_hall, −1, 1), or −1 on a hard fail.
With the design's reference r_eff (T_min = 1) these weights reproduce both published
E_CART examples (0.80 and −0.064); the tests check that. r_eff here does not charge the
turns the tool budget forces on the reference solution (T_min), so the best r_total,
0.90, is reachable at every difficulty.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np

TASK_WEIGHT = 0.75
EFFICIENCY_WEIGHT = 0.15
HALLUCINATION_WEIGHT = 0.10
FAILURE_SCORE = -1.0


def _clip(x: float) -> float:
    return float(np.clip(x, -1.0, 1.0))


def compose(task: float, efficiency: float, hallucination: float) -> float:
    """Combine the three reward components into r_total in [−1, 1]."""
    return _clip(TASK_WEIGHT * task + EFFICIENCY_WEIGHT * efficiency + HALLUCINATION_WEIGHT * hallucination)


def effective_turns(turns: int, user_caused_turns: int) -> int:
    """T_eff = max(1, T − turns answered by a confirm/clarify user reply)."""
    return max(1, turns - user_caused_turns)


def efficiency(turns: int, user_caused_turns: int, max_turns: int, min_turns: int = 1) -> float:
    """r_eff = clip(1 − 2·(T_eff − T_min)/(T_max − T_min)); with T_max ≤ T_min: +1 if T_eff ≤ T_min else −1.

    T_min is the episode's floor: the turns its reference solution needs at B_tool calls a
    turn (`Environment.min_turns`, from the hidden goal). A turn the budget forces on the
    ideal agent is no mistake, so it is not charged; T_min = 1 is the design's reference
    formula. T_min is fixed before the agent acts, so padding a turn with calls buys nothing.
    """
    t_eff = effective_turns(turns, user_caused_turns)
    t_min = max(1, min(min_turns, max_turns))
    if max_turns <= t_min:
        return 1.0 if t_eff <= t_min else -1.0
    return _clip(1.0 - 2.0 * (t_eff - t_min) / (max_turns - t_min))


def hallucination(referenced_ids: Iterable[str], retrieved_ids: set[str]) -> tuple[float, list[str]]:
    """r_hall = −|referenced ids never retrieved| / max(|referenced|, 1).

    `referenced_ids` are the ids the agent acted on (final answers, cart and return calls
    that the tools carried out; a refused call acts on nothing), counted once each;
    `retrieved_ids` every world id a tool showed, error messages included. Returns the
    penalty and the offending ids.
    """
    referenced = list(dict.fromkeys(referenced_ids))
    invented = [i for i in referenced if i not in retrieved_ids]
    return -len(invented) / max(len(referenced), 1), invented


@dataclass(frozen=True)
class Reward:
    """A scored episode: the components, the total and the success flag."""

    task: float
    efficiency: float
    hallucination: float
    total: float
    success: bool
    hard_fail: bool = False

    @classmethod
    def of(cls, task: float, efficiency: float, hallucination: float, success: bool) -> "Reward":
        return cls(task, efficiency, hallucination, compose(task, efficiency, hallucination), success)

    @classmethod
    def failure(cls, efficiency: float, hallucination: float) -> "Reward":
        """The hard-fail score: r_total = r_task = −1, success false."""
        return cls(FAILURE_SCORE, efficiency, hallucination, FAILURE_SCORE, False, hard_fail=True)

    def to_dict(self) -> dict[str, float]:
        d = asdict(self)
        d["success"] = 1.0 if self.success else 0.0
        d.pop("hard_fail")
        return d
