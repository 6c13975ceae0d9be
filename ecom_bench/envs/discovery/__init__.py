"""E_PD: find products that satisfy all of the customer's constraints.

generator.py draws a hidden in-stock target and m constraints it meets (budget
price·(1+δ), its leaf category, then brand / rating / ship days / attribute values);
user.py is the shopper (strategic omission with a signal that more is withheld,
answers to any plain question, feedback on proposals that is no oracle and costs
patience); verifier.py scores the list with the design's formula (docs/design.md) over a pool computed from
the catalogue (`envs._ranking`); agents.py holds the scripted agents.

Success is validity: every pick is in stock and meets every constraint, and the list
has k picks (or every product that qualifies, when fewer do). Ranking by the hidden
persona lives only in r_task (the nDCG term): the persona is never told, so success
cannot fairly depend on it (a condition such as nDCG@k >= 0.6 is met by every valid
list anyway). The leaf category is the request's subject, always stated and
not counted in m (the design counts it among the m−1 others; a plain search gets it right for
free, which let random lists pass). m is capped at the constraint types the target has
(budget, brand, rating, ship days and its 2-4 attributes: 6-8), so m stops growing from
d = 10-14 on.
"""

from __future__ import annotations

from typing import ClassVar

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs._ranking import reference_turns
from ecom_bench.envs.base import Environment, JourneyRole, SubTask, Verdict
from ecom_bench.envs.discovery.generator import build_discovery
from ecom_bench.envs.discovery.agents import DISCOVERY_POLICIES
from ecom_bench.envs.discovery.verifier import verify_discovery
from ecom_bench.envs.discovery.goal import DiscoveryGoal
from ecom_bench.envs.discovery.user import DiscoveryUser
from ecom_bench.world.tools.catalog import CatalogTools
from ecom_bench.world.tools.recommend import RecommendTools
from ecom_bench.world import World
from ecom_bench.world._tooling import ToolBase

DISCOVERY_INSTRUCTIONS = """\
You are a shopping assistant for an online store. The customer is looking for a kind of \
product and has requirements (budget, brand, rating, shipping time, features such as \
connector, size or colour). Find products that meet every requirement and are in stock \
(catalog_search with its filters, catalog_get_product for details), ask the customer \
when a requirement may be missing, and give your final answer with recommend_products: \
the product ids, best first, no more than the customer asked for. Write plain replies \
to talk to the customer."""


class DiscoveryEnv(Environment):
    name: ClassVar[str] = "discovery"
    title: ClassVar[str] = "E_PD: product discovery"
    summary: ClassVar[str] = "E_PD: recommend products that satisfy all of the customer's constraints."
    goal_type: ClassVar[type] = DiscoveryGoal
    customer_type: ClassVar[type] = DiscoveryUser
    toolkits: ClassVar[tuple[type[ToolBase], ...]] = (CatalogTools, RecommendTools)
    tool_names: ClassVar[tuple[str, ...]] = (
        "catalog_search", "catalog_get_product", "catalog_get_variants", "ask_user", "recommend_products",
    )
    final_tool: ClassVar[str | None] = "recommend_products"
    instructions: ClassVar[str] = DISCOVERY_INSTRUCTIONS
    policies = DISCOVERY_POLICIES
    #: No cues: a journey request that matches no other kind is a discovery request.
    journey: ClassVar[JourneyRole | None] = JourneyRole(
        "recommend_products (finding products or a substitute)")

    def build(self, world: World, seed: int, difficulty: Difficulty, intent: int = 0) -> SubTask:
        return build_discovery(world, seed, difficulty, intent, customer=self.customer_type)

    def verify(self, task: SubTask, world: World) -> Verdict:
        return verify_discovery(task, world, self.answer_of(task, world))

    def min_turns(self, task: SubTask, tool_budget: int) -> int:
        """One search, then views of the ideal list around the scheduled stock-outs (`reference_turns`)."""
        goal = task.goal
        return reference_turns(goal.ranked_ids, goal.doomed_ids, goal.k, tool_budget)


__all__ = ["DiscoveryEnv"]
