"""E_BUNDLE: recommend a complete shopping list for a project within a budget.

projects.py holds the project templates (lists of real catalogue leaf categories),
generator.py builds the task, user.py is the simulated shopper, goal.py the hidden
goal and the counting rule, verifier.py the score, agents.py the scripted agents.

Axes consumed: n = min(12, 3+⌊d/2⌋) required categories; p_missing (items and the
budget withheld from the opening, revealed on asking); p_noise; p_oos (a category's
cheapest product sells out once shown); T_max and B_tool through the episode; top_k
and ε_rank through search. A budget exists for d ≥ 2 with probability 0.6. The
constraint count m is not used: a bundle's constraints are its categories and budget.
Success is r_task = 1 (see verifier.py): every category covered, nothing else, within
budget.
"""

from __future__ import annotations

from typing import ClassVar

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.base import EnvAxis, Environment, JourneyRole, SubTask, Verdict, budget_turns
from ecom_bench.envs.bundle.generator import build_bundle
from ecom_bench.envs.bundle.agents import BundleHeuristic, BundleOracle, BundleRandom
from ecom_bench.envs.bundle.verifier import verify_bundle
from ecom_bench.envs.bundle.goal import BundleGoal
from ecom_bench.envs.bundle.user import BundleUser
from ecom_bench.world.tools.bundle import BundleTools
from ecom_bench.world.tools.catalog import CatalogTools
from ecom_bench.envs.bundle.generator import BUNDLE_AXES
from ecom_bench.world import World
from ecom_bench.world._tooling import ToolBase

BUNDLE_INSTRUCTIONS = """\
You are a shopping assistant for an online store. The customer is planning a project \
(a trip, a new pet, a home setup, ...) and wants a complete shopping list for it: one \
in-stock product for each item they need, nothing they don't need, and within their \
budget if they have one. Find products with catalog_search (its category filter narrows \
results to a category) and catalog_get_product. If the customer hints that they need more \
than they listed, or has a budget they have not stated, ask them. You may propose a list \
to the customer before submitting it. Submit the final list with submit_bundle. Write \
plain replies to talk to the customer."""


class BundleEnv(Environment):
    name: ClassVar[str] = "bundle"
    title: ClassVar[str] = "E_BUNDLE: bundle planning"
    summary: ClassVar[str] = "E_BUNDLE: recommend a complete shopping list for a project within a budget."
    goal_type: ClassVar[type] = BundleGoal
    customer_type: ClassVar[type] = BundleUser
    toolkits: ClassVar[tuple[type[ToolBase], ...]] = (CatalogTools, BundleTools)
    tool_names: ClassVar[tuple[str, ...]] = (
        "catalog_search", "catalog_get_product", "ask_user", "submit_bundle",
    )
    final_tool: ClassVar[str | None] = "submit_bundle"
    instructions: ClassVar[str] = BUNDLE_INSTRUCTIONS
    policies = {"oracle": BundleOracle, "heuristic": BundleHeuristic, "random": BundleRandom}
    axes: ClassVar[tuple[EnvAxis, ...]] = BUNDLE_AXES
    journey: ClassVar[JourneyRole | None] = JourneyRole(
        "submit_bundle (a project shopping list)",
        ("what i need", "need:", "find:", "few other things", "more things", "not everything", "in total",
         "going on", "bringing home", "setting up"),
        cue_order=4)

    def build(self, world: World, seed: int, difficulty: Difficulty, intent: int = 0) -> SubTask:
        return build_bundle(world, seed, difficulty, intent, customer=self.customer_type)

    def verify(self, task: SubTask, world: World) -> Verdict:
        return verify_bundle(task, world, self.answer_of(task, world))

    def min_turns(self, task: SubTask, tool_budget: int) -> int:
        """One catalogue call per item of the project (a search or a product view)."""
        return budget_turns(len(task.goal.items), tool_budget)


__all__ = ["BundleEnv"]
