"""E_SUB: the wanted item is out of stock; find a similar, compatible substitute.

The customer names the original p0 (out of stock from the start; also in the visit
history). A substitute must offer p0's value of p0's variant attribute (connector,
size, material, ...) and meet the m constraints (drawn from a hidden solvable
substitute, as in E_PD). The customer buys the compatible variant, so the budget and
stock are those of that variant (`_ranking.price_paid`), in the generator, verifier
and customer alike. Scoring, pool and the success rule are `envs._ranking`'s;
r_task is the design's 0.8·nDCG term + 0.2·OOS term (centred, so a perfect
list scores +1). Success is validity: every pick is in stock, compatible, not p0 and
meets every constraint, and the list has k picks (or all that qualify); the order
(similarity to p0, constraint fit) is scored by r_task only.
"""

from __future__ import annotations

from typing import ClassVar

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs._ranking import reference_turns
from ecom_bench.envs.base import Environment, JourneyRole, SubTask, Verdict
from ecom_bench.envs.substitution.generator import build_substitution
from ecom_bench.envs.substitution.agents import SUBSTITUTION_POLICIES
from ecom_bench.envs.substitution.verifier import verify_substitution
from ecom_bench.envs.substitution.goal import SubstitutionGoal
from ecom_bench.envs.substitution.user import SubstitutionUser
from ecom_bench.world.tools.catalog import CatalogTools
from ecom_bench.world.tools.recommend import RecommendTools
from ecom_bench.world import World
from ecom_bench.world._tooling import ToolBase

SUBSTITUTION_INSTRUCTIONS = """\
You are a shopping assistant for an online store. The product the customer wants is \
out of stock. Find in-stock substitutes that are similar, compatible with what they \
had (same connector, size, material, ...) and meet their other requirements, the \
budget on the price of the compatible variant they would buy (look the original up with \
catalog_search or user_get_visit_history, compare with catalog_get_product), ask \
the customer when a requirement may be missing, and give your final answer with recommend_products: the product ids, best first, no more than \
the customer asked for, never the out-of-stock original. Write plain replies to talk \
to the customer."""


class SubstitutionEnv(Environment):
    name: ClassVar[str] = "substitution"
    title: ClassVar[str] = "E_SUB: substitution"
    summary: ClassVar[str] = "E_SUB: the wanted item is out of stock; recommend a similar, compatible substitute."
    goal_type: ClassVar[type] = SubstitutionGoal
    customer_type: ClassVar[type] = SubstitutionUser
    toolkits: ClassVar[tuple[type[ToolBase], ...]] = (CatalogTools, RecommendTools)
    tool_names: ClassVar[tuple[str, ...]] = (
        "catalog_search", "catalog_get_product", "catalog_get_variants", "user_get_visit_history", "ask_user",
        "recommend_products",
    )
    final_tool: ClassVar[str | None] = "recommend_products"
    instructions: ClassVar[str] = SUBSTITUTION_INSTRUCTIONS
    policies = SUBSTITUTION_POLICIES
    journey: ClassVar[JourneyRole | None] = JourneyRole(
        "recommend_products (finding products or a substitute)",
        ("out of stock", "sold out", "substitute", "something similar", "similar instead"),
        cue_order=1)

    def build(self, world: World, seed: int, difficulty: Difficulty, intent: int = 0) -> SubTask:
        return build_substitution(world, seed, difficulty, intent, customer=self.customer_type)

    def verify(self, task: SubTask, world: World) -> Verdict:
        return verify_substitution(task, world, self.answer_of(task, world))

    def min_turns(self, task: SubTask, tool_budget: int) -> int:
        """One search, then views of the ideal list around the scheduled stock-outs (`reference_turns`)."""
        goal = task.goal
        return reference_turns(goal.ranked_ids, goal.doomed_ids, goal.k, tool_budget)


__all__ = ["SubstitutionEnv"]
