"""E_RETURN verifier: three parts, each scored in {−1, (0,) +1}, weighted 0.45 / 0.45 / 0.10.

- identify (a): the answer names the target (order id, line id): +1, else −1.
- act (b), over the return/exchange records the agent created for this request:
  eligible target: +1 when the wanted record (return, or exchange to the wanted
  variant) exists for the target line with the customer's reason and method and the
  answer's outcome says so; 0 when a record exists for the line but a detail is wrong
  (reason, method, kind, variant, outcome); −1 when none exists.
  ineligible target: +1 when nothing was started and the outcome is not_eligible, −1
  otherwise. Any record for another line makes b = −1 (a wrong return is never free).
- replacement (c): wanted: +1 for an in-stock product of the same leaf category, other
  than the returned one, meeting the customer's constraint; −1 for none or a bad one.
  Not wanted: +1 for none, −1 for an unsolicited one.
r_task = 0.45·a + 0.45·b + 0.10·c ∈ [−1, 1]; no answer → −1. success = r_task ≥ 0.95,
i.e. all three parts right.
"""

from __future__ import annotations

from ecom_bench.domains.orders.book import OrderBook
from ecom_bench.envs.base import SubTask, Verdict
from ecom_bench.envs.returns.goal import ReturnsGoal
from ecom_bench.world import World

W_IDENTIFY, W_ACT, W_REPLACEMENT = 0.45, 0.45, 0.10


def _act_score(goal: ReturnsGoal, world: World, intent: int, outcome: str) -> tuple[int, str]:
    mine = [r for r in world.state(OrderBook).returns if r.intent == intent]
    wrong = [r for r in mine if r.line_id != goal.line_id]
    if wrong:
        return -1, "a " + wrong[-1].kind + f" was started for the wrong line {wrong[-1].line_id}"
    records = [r for r in mine if r.line_id == goal.line_id]
    if not goal.eligible:
        if records:
            return -1, "a return was started for an ineligible line"
        if outcome != "not_eligible":
            return -1, f"the line is not eligible ({goal.eligibility}) but the outcome says {outcome}"
        return 1, "correctly not started (not eligible)"
    if not records:
        return -1, f"no {goal.kind} was started for {goal.line_id}"
    r = records[-1]
    problems = []
    if r.kind != goal.kind:
        problems.append(f"a {r.kind} instead of an {goal.kind}" if goal.kind == "exchange"
                        else f"an {r.kind} instead of a {goal.kind}")
    if r.reason.value != goal.reason:
        problems.append(f"reason {r.reason.value} (customer: {goal.reason})")
    if r.method.value != goal.method:
        problems.append(f"method {r.method.value} (customer: {goal.method})")
    if goal.kind == "exchange" and r.new_variant_id != goal.new_variant_id:
        problems.append(f"exchanged for {r.new_variant_id} (wanted {goal.new_variant_id}, {goal.new_variant_value})")
    if outcome != goal.outcome:
        problems.append(f"outcome {outcome} (should be {goal.outcome})")
    if problems:
        return 0, f"{r.kind} {r.return_id} started but " + ", ".join(problems)
    return 1, f"{r.kind} {r.return_id} started with the right details"


def _replacement_score(goal: ReturnsGoal, world: World, pid: str | None) -> tuple[int, str]:
    wish = goal.replacement
    if wish is None:
        return (1, "no replacement asked or given") if pid is None else (-1, f"unsolicited replacement {pid}")
    if pid is None:
        return -1, "the customer asked for a replacement and none was given"
    p = world.product(pid)
    if p is None:
        return -1, f"replacement {pid} does not exist"
    problems = []
    if p.id == goal.product_id:
        problems.append("it is the returned product")
    if p.leaf_category != goal.leaf:
        problems.append(f"category {p.leaf_category} (wanted {goal.leaf})")
    if not world.in_stock(p):
        problems.append("out of stock")
    if not wish.satisfied_by(p.price, p.brand, p.rating):
        problems.append(f"not {wish.describe()} (price ${p.price:.2f}, brand {p.brand}, rating {p.rating})")
    if problems:
        return -1, f"replacement {pid} is wrong: " + "; ".join(problems)
    return 1, f"replacement {pid} fits ({wish.describe()})"


def verify_returns(task: SubTask, world: World, answer: dict | None) -> Verdict:
    goal: ReturnsGoal = task.goal
    if answer is None:
        return Verdict(-1.0, False, f"No answer: report_return_outcome was never called (target line "
                       f"{goal.line_id} of {goal.order_id}, {goal.outcome}).", {})
    a = 1 if (answer["order_id"], answer["line_id"]) == (goal.order_id, goal.line_id) else -1
    identify = "right line" if a > 0 else (f"wrong line {answer['line_id']} of {answer['order_id']} (meant "
                                           f"{goal.line_id} of {goal.order_id}, '{goal.reference_text}')")
    b, act = _act_score(goal, world, task.intent, answer["outcome"])
    c, repl = _replacement_score(goal, world, answer.get("replacement_product_id"))
    r_task = W_IDENTIFY * a + W_ACT * b + W_REPLACEMENT * c
    return Verdict(r_task, r_task >= 0.95,
                   f"Identify {a:+d}: {identify}. Action {b:+d}: {act}. Replacement {c:+d}: {repl}. "
                   f"-> task {r_task:+.2f}.",
                   {"identify": a, "act": b, "replacement": c, "expected": goal.to_dict(), "answer": dict(answer)})
