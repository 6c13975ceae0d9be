"""E_BUNDLE verifier: r_task = clip(2·F1(categories) − 1 − over-budget fraction, −1, 1).

The counting rule is `goal.assess` (shared with the user's review of proposals).
Success is r_task = 1: every required category covered by an in-stock product that
meets the requirements, no extra, duplicate, out-of-stock or non-conforming product,
and within budget. (r_task ≥ 0.95 would
admit a bundle up to 5% over budget; one missing item out of 12 already scores 0.91.)
"""

from __future__ import annotations

from ecom_bench.envs.base import SubTask, Verdict
from ecom_bench.envs.bundle.goal import BundleGoal, assess
from ecom_bench.envs.bundle.user import money
from ecom_bench.world import World
from ecom_bench.world.state import FinalAnswer


def verify_bundle(task: SubTask, world: World, answer: FinalAnswer | None) -> Verdict:
    """Score `answer` (the task's last submit_bundle call, or None) against the goal."""
    goal: BundleGoal = task.goal
    n = len(goal.required)
    if answer is None:
        return Verdict(-1.0, False, f"No bundle was submitted ({n} categories were required) -> task -1.00.",
                       {"required": list(goal.required)})
    a = assess(goal, list(answer.arguments.get("product_ids", [])), world)
    problems: list[str] = []
    if a.missing:
        problems.append("missing " + ", ".join(a.missing))
    problems += [f"extra {pid} ({cat}, not needed)" for pid, cat in a.extra]
    problems += [f"duplicate {pid} ({cat} already covered)" for pid, cat in a.duplicates]
    problems += [f"{pid} ({cat}) is out of stock" for pid, cat in a.out_of_stock]
    problems += [f"{pid} breaks '{rule.describe()}'" for pid, rule in a.violations]
    problems += [f"unknown id {pid}" for pid in a.unknown]
    budget = ""
    if goal.budget is not None:
        budget = f" Total {money(a.total)} vs budget {money(goal.budget)}"
        budget += f" ({a.over_budget:.0%} over)." if a.over_budget > 0 else " (within budget)."
    head = "Bundle correct." if a.perfect else "Bundle wrong: " + "; ".join(problems or ["over budget"]) + "."
    explanation = (f"{head} Covered {len(a.covered)} of {n} required categories with {len(a.submitted)} "
                   f"products (precision {a.precision:.2f}, recall {a.recall:.2f}, F1 {a.f1:.2f}).{budget} "
                   f"task = 2*F1 - 1 - {a.over_budget:.2f} = {a.task:+.2f}.")
    return Verdict(
        task=a.task,
        success=a.perfect,
        explanation=explanation,
        details={"f1": a.f1, "precision": a.precision, "recall": a.recall, "covered": a.covered,
                 "missing": a.missing, "extra": [p for p, _ in a.extra],
                 "duplicates": [p for p, _ in a.duplicates],
                 "out_of_stock": [p for p, _ in a.out_of_stock],
                 "violations": [p for p, _ in a.violations], "total": a.total, "budget": goal.budget,
                 "over_budget": a.over_budget, "required": list(goal.required)},
    )
