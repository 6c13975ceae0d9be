"""E_POLICY's hidden goal and the answer-scoring rule (docs/design.md §Per-environment verifiers)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from ecom_bench.domains.policy.rules import fmt_quantity


@dataclass(frozen=True)
class PolicyGoal:
    """The question, the rule that answers it, and the customer's full situation.

    `answer` is `rule.compute(situation)` at build time; the verifier recomputes it from
    the rule in the world's rule book, so the two can be checked against each other.
    """

    rule_id: str
    family: str
    title: str
    question: str
    kind: Literal["number", "choice"]
    unit: str  # "$", "day", "month"; "" for a categorical answer
    n_clauses: int
    slots: tuple[str, ...]  # the situation slots the rule reads (the scope aside)
    scope_slot: str
    situation: dict[str, Any]  # slot -> value, for every slot the customer can be asked about
    answer: float | str

    def answer_text(self) -> str:
        return str(self.answer) if self.kind == "choice" else fmt_quantity(self.unit, float(self.answer))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["slots"] = list(self.slots)
        d["answer_text"] = self.answer_text()
        return d


def ratio_reward(given: float, expected: float) -> float:
    """The design's numeric r_task = 2·(min(a, b)/max(a, b))^4 − 1, made total over the reals.

    Equal values (0 and 0 included) score +1. Otherwise the ratio is of magnitudes when
    both have the same sign; a zero against a non-zero, or opposite signs, is ratio 0,
    i.e. r_task = −1 (a zero answer is never "close" to a positive amount).
    """
    if given == expected:
        return 1.0
    if given == 0 or expected == 0 or (given > 0) != (expected > 0):
        return -1.0
    a, b = abs(given), abs(expected)
    return 2.0 * (min(a, b) / max(a, b)) ** 4 - 1.0
