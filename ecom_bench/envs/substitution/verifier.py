"""E_SUB verifier: r_task = clip(0.8·(2·nDCG@k − 1) + 0.2·(1 − 2·OOS share)).

The design's OOS term is −share, which capped a perfect list at 0.80; centred like the nDCG
term (2·in-stock share − 1), a perfect list scores +1 as in every other env.

rel = (1 + base′)/2 for in-stock, compatible products other than p0 that meet every
constraint, priced and stocked in the compatible variant the customer would buy, base = λ·sim(p, p0) + (1−λ)·s(p) (the design's formula, rescaled over the pool);
0 otherwise, so the original, incompatible and out-of-stock picks earn nothing.
Success: every pick is such a product and the list has k picks, or all that qualify
(`envs._ranking`); the order counts in r_task only.
"""

from __future__ import annotations

from ecom_bench.envs._ranking import explain_problems, score_list, verdict_head
from ecom_bench.envs.base import SubTask, Verdict
from ecom_bench.envs.substitution.goal import SubstitutionGoal
from ecom_bench.world import World
from ecom_bench.world.state import FinalAnswer


def verify_substitution(task: SubTask, world: World, answer: FinalAnswer | None) -> Verdict:
    goal: SubstitutionGoal = task.goal
    if answer is None:
        return Verdict(-1.0, False, "No recommendation was made (recommend_products was never called).",
                       {"ndcg": 0.0})
    score = score_list(goal, world, list(answer.arguments.get("product_ids", [])))
    r_task = max(-1.0, min(1.0, 0.8 * (2 * score.ndcg - 1) + 0.2 * (1 - 2 * score.oos_share)))
    success = score.success()
    problems = explain_problems(goal, world, score)
    head = verdict_head(score, "Not every pick is an in-stock, compatible substitute meeting every requirement.")
    explanation = (
        f"{head} nDCG@{goal.k} {score.ndcg:.2f}, out of stock {score.oos_share:.0%} -> task {r_task:+.2f}. "
        + (("Problems: " + "; ".join(problems) + ". ") if problems else "")
        + f"Ideal list: {', '.join(score.ideal_ids)}."
    )
    return Verdict(r_task, success, explanation, {
        "ndcg": score.ndcg, "oos_share": score.oos_share, "all_ok": score.all_ok(),
        "recommended": list(score.ids), "ideal": list(score.ideal_ids), "problems": problems,
        "compatibility": goal.compatibility.describe(), "constraints": [c.describe() for c in goal.requirements]})
