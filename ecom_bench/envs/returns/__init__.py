"""E_RETURN: identify the right order line, start its return or exchange, recommend a replacement.

Design (docs/design.md §Per-environment verifiers, RETURN; the world is built once and the
verifier reads the same order and return objects the tools acted on, docs/design.md §Upstream pitfalls, 3):
- History: as E_TRACK (`domains.orders.history.build_order_history`): look-alike groups of
  H_orders(d) delivered orders, one leaf category each, drawn by one process; the target
  is a random member of one group and its line sits at a random position among its
  order's lines. The customer names the order id (and the item), or (p_ref =
  σ((d−2)/1.5)) describes the item by name, brand, date, note, variant or its place in
  time ("my oldest wall charger order").
- Edge cases with p_edge(d) = 0.7·σ((d−4)/1.5), for every group order alike: delivered on the window's last day or
  the day before (eligible), the day after (not), a final-sale item, or a line already
  returned. For an ineligible target the right outcome is to start nothing, tell the
  customer, and answer outcome="not_eligible" (the tools refuse ineligible returns,
  so the score rests on the outcome the agent reports and on starting nothing wrong).
- The customer wants an exchange (another variant of the same product, in stock) with
  probability 0.25 when one exists, else a return; with probability 0.5 a return also
  asks for a replacement: same leaf category, in stock, and one stated constraint
  (a price cap, another brand, or a minimum rating), satisfiable by construction.
- Slots withheld at p_missing(d), each revealed when asked (any request discloses what
  it names, or everything withheld when it names nothing withheld): order, item (with
  an order id), reason, method, variant (exchange). A return started for another line
  is objected to and counts as a strike (two and the customer gives up). Reason and method are always scored:
  the customer has one of each and states it in the opening or when asked.
- r_task = 0.45·a + 0.45·b + 0.10·c with a (right order+line), b (right action) and c
  (replacement) each in {−1, +1} (b is 0 when the right line got a return with a wrong
  detail); see `verifier`. success = r_task ≥ 0.95: every part right.
"""

from __future__ import annotations

from typing import ClassVar

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.base import EnvAxis, Environment, JourneyRole, SubTask, Verdict, budget_turns
from ecom_bench.envs.returns.generator import build_returns
from ecom_bench.envs.returns.agents import ReturnsHeuristic, ReturnsOracle, ReturnsRandom
from ecom_bench.envs.returns.verifier import verify_returns
from ecom_bench.envs.tracking.references import lookup_calls
from ecom_bench.envs.returns.goal import ReturnsGoal
from ecom_bench.envs.returns.user import ReturnsUser
from ecom_bench.world.tools.catalog import CatalogTools
from ecom_bench.domains.orders.tools import OrderTools
from ecom_bench.envs.returns.generator import P_EDGE
from ecom_bench.envs.tracking.references import P_INDIRECT, P_SIMILAR
from ecom_bench.world import World
from ecom_bench.world._tooling import ToolBase

RETURNS_INSTRUCTIONS = """\
You are a customer-service agent for an online store. The customer wants to return or \
exchange an item they bought. Find the order and the order line (order_list, order_get; \
datetime_now gives today's date), check the store's return rule \
(return_check_eligibility), and start the return (return_initiate) or the exchange \
(return_exchange, with the variant id from catalog_get_variants) with the customer's \
reason and method. If the item cannot be returned, start nothing and tell the customer \
why. If they ask for a replacement, recommend one in-stock product of the same kind \
that meets their wishes (catalog_search). Ask the customer for anything you need that \
they did not say. Finish with report_return_outcome. Write plain replies to talk to the \
customer."""


class ReturnsEnv(Environment):
    name: ClassVar[str] = "returns"
    title: ClassVar[str] = "E_RETURN: return + exchange"
    summary: ClassVar[str] = "E_RETURN: find the right order line, start its return, recommend a replacement."
    goal_type: ClassVar[type] = ReturnsGoal
    customer_type: ClassVar[type] = ReturnsUser
    toolkits: ClassVar[tuple[type[ToolBase], ...]] = (OrderTools, CatalogTools)
    tool_names: ClassVar[tuple[str, ...]] = (
        "order_list", "order_get", "datetime_now", "return_check_eligibility", "return_initiate",
        "return_exchange", "catalog_search", "catalog_get_product", "catalog_get_variants", "ask_user",
        "report_return_outcome",
    )
    final_tool: ClassVar[str | None] = "report_return_outcome"
    instructions: ClassVar[str] = RETURNS_INSTRUCTIONS
    policies = {"oracle": ReturnsOracle, "heuristic": ReturnsHeuristic, "random": ReturnsRandom}
    axes: ClassVar[tuple[EnvAxis, ...]] = (P_INDIRECT, P_SIMILAR, P_EDGE)
    journey: ClassVar[JourneyRole | None] = JourneyRole(
        "the return answer tool",
        ("return the", "exchange the", "to return", "to exchange", "send back", "refund"),
        cue_order=2)

    def build(self, world: World, seed: int, difficulty: Difficulty, intent: int = 0) -> SubTask:
        return build_returns(world, seed, difficulty, intent, customer=self.customer_type)

    def verify(self, task: SubTask, world: World) -> Verdict:
        answer = self.answer_of(task, world)
        return verify_returns(task, world, answer.arguments if answer else None)

    def min_turns(self, task: SubTask, tool_budget: int) -> int:
        """Find the order (`lookup_calls`) and its lines (order_get); then the return, or the
        variants and the exchange, or the eligibility check that says no; one search for a
        replacement the customer asked for."""
        goal = task.goal
        act = 2 if goal.eligible and goal.kind == "exchange" else 1
        calls = lookup_calls(goal.reference) + 1 + act + (goal.replacement is not None)
        return budget_turns(calls, tool_budget)


__all__ = ["ReturnsEnv"]
