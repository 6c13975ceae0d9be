"""E_POLICY verifier: recompute the rule's answer and score the agent's against it.

Numeric: r_task = 2·(min/max)^4 − 1 (`ratio_reward`, which documents 0 and negatives);
categorical: +1 for the exact outcome (case and punctuation aside), else −1.
Success: r_task ≥ 0.95, i.e. a numeric answer within about 0.6% of the rule's value
(exact for whole days or months under about 150). Every numeric rule scales with one of
the customer's amounts, so that tolerance is far narrower than the spread of answers a
reader of the rule alone must consider.
"""

from __future__ import annotations

from typing import Any

from ecom_bench.domains.policy.rulebook import Rulebook
from ecom_bench.envs.base import SubTask, Verdict
from ecom_bench.envs.policy.goal import PolicyGoal, ratio_reward
from ecom_bench.world import World
from ecom_bench.world.state import FinalAnswer
from ecom_bench.domains.policy.answers import format_amount

SUCCESS_THRESHOLD = 0.95


def verify_policy(task: SubTask, world: World, answer: FinalAnswer | None) -> Verdict:
    goal: PolicyGoal = task.goal
    rule = world.state(Rulebook).get(goal.rule_id)
    if rule is None:
        raise RuntimeError(f"policy rule {goal.rule_id} is missing from the world's rule book")
    expected = rule.compute(goal.situation)
    if expected != goal.answer:
        raise RuntimeError(f"rule {goal.rule_id} computes {expected!r}, the goal says {goal.answer!r}")
    head = f"Rule {goal.rule_id} ({goal.title}, {goal.n_clauses} clause(s)) gives {goal.answer_text()}"
    retrieved = goal.rule_id in world.seen_ids
    details: dict[str, Any] = {"expected": expected, "rule_id": goal.rule_id, "n_clauses": goal.n_clauses,
                               "retrieved_rule": retrieved}
    if answer is None:
        score, why = -1.0, "no answer was given"
    elif goal.kind == "choice":
        given = answer.arguments.get("option")
        details["given"] = given
        if given is None:
            score, why = -1.0, f"the agent answered {answer.arguments.get('answer')!r}, not one of the outcomes"
        else:
            score = 1.0 if given == expected else -1.0
            why = f"the agent answered {given!r}" + ("" if score > 0 else f", not {expected!r}")
    else:
        given = answer.arguments.get("value")
        details["given"] = given
        if given is None:
            score, why = -1.0, f"the agent named an outcome ({answer.arguments.get('option')!r}), not an amount"
        else:
            got, want = float(given), float(expected)
            score = ratio_reward(got, want)
            shown = format_amount(goal.unit, got)  # as recorded: 11.77 days is not "12 days"
            if score == 1.0:
                why = f"the agent answered {shown}"
            elif score == -1.0:
                why = f"the agent answered {shown} (zero or opposite sign: ratio 0)"
            else:
                ratio = min(abs(got), abs(want)) / max(abs(got), abs(want))
                why = f"the agent answered {shown}: ratio {ratio:.3f}, 2*{ratio:.3f}^4 - 1"
                details["ratio"] = ratio
    explanation = f"{head}; {why} -> task {score:+.2f}."
    if not retrieved:
        explanation += " The rule's document was never retrieved."
    return Verdict(task=score, success=score >= SUCCESS_THRESHOLD, explanation=explanation, details=details)
