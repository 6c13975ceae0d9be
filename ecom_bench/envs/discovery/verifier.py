"""E_PD verifier (docs/design.md §Per-environment verifiers, with the pool computed from the catalogue).

r_task = clip(0.55·(2·nDCG@k − 1) + 0.35·(2·s_best^α − 1) + 0.10·(1 − 2·OOS share)),
α = 4 + ⌊d/4⌋, s_best = the best s(p) in the list. Upstream's third term, −OOS share,
capped a perfect answer at 0.90; centring it like the other two (2·in-stock share − 1)
lets a perfect list score +1, as in every other env. Success is `envs._ranking`'s rule:
every pick is in stock and meets every constraint, and the list has k picks (or all
that qualify); ranking counts in r_task only.
"""

from __future__ import annotations

from ecom_bench.envs._ranking import explain_problems, score_list, verdict_head
from ecom_bench.envs.base import SubTask, Verdict
from ecom_bench.envs.discovery.goal import DiscoveryGoal
from ecom_bench.world import World
from ecom_bench.world.state import FinalAnswer


def _clip(x: float) -> float:
    return max(-1.0, min(1.0, x))


def verify_discovery(task: SubTask, world: World, answer: FinalAnswer | None) -> Verdict:
    goal: DiscoveryGoal = task.goal
    if answer is None:
        return Verdict(-1.0, False, "No recommendation was made (recommend_products was never called).",
                       {"ndcg": 0.0})
    score = score_list(goal, world, list(answer.arguments.get("product_ids", [])))
    r_task = _clip(0.55 * (2 * score.ndcg - 1) + 0.35 * (2 * score.s_best ** goal.alpha - 1)
                   + 0.10 * (1 - 2 * score.oos_share))
    success = score.success()
    problems = explain_problems(goal, world, score)
    head = verdict_head(score, "Not every pick meets every requirement and is in stock.")
    explanation = (
        f"{head} nDCG@{goal.k} {score.ndcg:.2f}, best s(p) {score.s_best:.2f} (^{goal.alpha}), "
        f"out of stock {score.oos_share:.0%} -> task {r_task:+.2f}. "
        + (("Problems: " + "; ".join(problems) + ". ") if problems else "")
        + f"Ideal list: {', '.join(score.ideal_ids)}."
    )
    return Verdict(r_task, success, explanation, {
        "ndcg": score.ndcg, "s_best": score.s_best, "oos_share": score.oos_share, "all_ok": score.all_ok(),
        "recommended": list(score.ids), "ideal": list(score.ideal_ids), "problems": problems,
        "constraints": [c.describe() for c in goal.requirements]})
