"""E_TRACK: resolve which order the customer means and report its current status.

Design (docs/design.md §Per-environment verifiers, TRACK):
- The account always has a long history (`domains.orders.history.build_order_history`): look-alike
  groups of H_orders(d) = 1 + ⌊d/2⌋ recent orders each, one leaf category per group
  ("wall charger"), and ~36 old background orders. The target is a random member of one
  group; the others are its *confusable* set, which a vague reference ("the wall charger
  I ordered") cannot tell apart. Every group and every member is drawn by the same
  process (status, age, note), and there are max(10, ⌈32/H⌉) groups (as the free leaves
  allow), so a guess from structure alone ("the largest group's newest order") is right
  ~1/32 of the time or less (`tests/test_orders_adversarial.py`).
- The customer gives the order id, or (p_ref = σ((d−2)/1.5)) a description: the
  product's name, brand + kind, kind + date placed ("on June 3" / "12 days ago" / "last
  Tuesday"), kind + what it was for (the order note), variant + kind, or its place in
  time ("my second-oldest wall charger order", "my most recent ..."). The description is
  chosen at build among those matching exactly one order line of the whole world, so
  it always identifies the target; asked again, the customer adds another such
  description. With p_missing(d) the "order" slot is withheld (the opening names only
  the kind of product, or nothing for an id reference) and any question gets the full
  reference. A customer who described the order never saw its id: messages naming
  order ids get the same reply whether or not theirs is among them.
- Dates are consistent with statuses (`STATUS_AGE_DAYS`): confirmed orders are 0-1 days
  old with a future ETA and no tracking, shipped / in transit ones have a carrier,
  tracking number and future ETA, delivered ones a past delivery date.
- r_task = 2·(0.5·[order id right] + 0.5·[status right]) − 1; success = both right.
"""

from __future__ import annotations

from typing import ClassVar

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.base import EnvAxis, Environment, JourneyRole, SubTask, Verdict, budget_turns
from ecom_bench.envs.tracking.generator import build_tracking
from ecom_bench.envs.tracking.agents import TrackingHeuristic, TrackingOracle, TrackingRandom
from ecom_bench.envs.tracking.references import lookup_calls
from ecom_bench.envs.tracking.verifier import verify_tracking
from ecom_bench.envs.tracking.goal import TrackingGoal
from ecom_bench.envs.tracking.user import TrackingUser
from ecom_bench.domains.orders.tools import OrderTools
from ecom_bench.envs.tracking.references import P_INDIRECT, P_SIMILAR
from ecom_bench.world import World
from ecom_bench.world._tooling import ToolBase

TRACKING_INSTRUCTIONS = """\
You are a customer-service agent for an online store. The customer asks about one of \
their orders. Work out which order they mean (order_list shows every order with its \
items, date and note; order_get shows one in full; datetime_now gives today's date), \
ask the customer when you cannot tell which order it is, and tell them its current \
status. Finish with report_order_status (the order id and its status). Write plain \
replies to talk to the customer."""


class TrackingEnv(Environment):
    name: ClassVar[str] = "tracking"
    title: ClassVar[str] = "E_TRACK: order tracking"
    summary: ClassVar[str] = "E_TRACK: resolve which order the customer means and report its current status."
    goal_type: ClassVar[type] = TrackingGoal
    customer_type: ClassVar[type] = TrackingUser
    toolkits: ClassVar[tuple[type[ToolBase], ...]] = (OrderTools,)
    tool_names: ClassVar[tuple[str, ...]] = ("order_list", "order_get", "datetime_now", "ask_user",
                                             "report_order_status")
    final_tool: ClassVar[str | None] = "report_order_status"
    instructions: ClassVar[str] = TRACKING_INSTRUCTIONS
    policies = {"oracle": TrackingOracle, "heuristic": TrackingHeuristic, "random": TrackingRandom}
    axes: ClassVar[tuple[EnvAxis, ...]] = (P_INDIRECT, P_SIMILAR)
    journey: ClassVar[JourneyRole | None] = JourneyRole(
        "the tracking answer tool",
        ("status", "where the", "where my", "track"),
        cue_order=3)

    def build(self, world: World, seed: int, difficulty: Difficulty, intent: int = 0) -> SubTask:
        return build_tracking(world, seed, difficulty, intent, customer=self.customer_type)

    def verify(self, task: SubTask, world: World) -> Verdict:
        answer = self.answer_of(task, world)
        return verify_tracking(task, world, answer.arguments if answer else None)

    def min_turns(self, task: SubTask, tool_budget: int) -> int:
        """Find the order (`lookup_calls`); order_list shows its status, else one order_get does."""
        return budget_turns(max(1, lookup_calls(task.goal.reference)), tool_budget)


__all__ = ["TrackingEnv"]
