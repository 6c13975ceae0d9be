"""E_TRACK verifier: r_task = 2·(0.5·[order id right] + 0.5·[status right]) − 1; success = both right.

The status is compared with the target order's status in the world the tools read,
and the answer schema carries it (docs/design.md §Upstream pitfalls, 2).
"""

from __future__ import annotations

from ecom_bench.envs.base import SubTask, Verdict
from ecom_bench.envs.tracking.goal import TrackingGoal
from ecom_bench.world import World
from ecom_bench.domains.orders.book import find_order


def verify_tracking(task: SubTask, world: World, answer: dict | None) -> Verdict:
    goal: TrackingGoal = task.goal
    if answer is None:
        return Verdict(-1.0, False, f"No answer: report_order_status was never called (the order was "
                       f"{goal.order_id}, {goal.status}).", {"order_right": False, "status_right": False})
    order = find_order(world, goal.order_id)
    status = order.status.value if order is not None else goal.status
    order_right = answer["order_id"] == goal.order_id
    status_right = answer["status"] == status
    r_task = 2 * (0.5 * order_right + 0.5 * status_right) - 1
    parts = [f"order {answer['order_id']} " + ("right" if order_right else f"wrong (meant {goal.order_id}, "
                                               f"described as '{goal.reference_text}')"),
             f"status {answer['status']} " + ("right" if status_right else f"wrong (is {status})")]
    return Verdict(r_task, order_right and status_right, "Reported " + "; ".join(parts) + f" -> task {r_task:+.2f}.",
                   {"order_right": order_right, "status_right": status_right, "expected_order": goal.order_id,
                    "expected_status": status, "answer": dict(answer)})
