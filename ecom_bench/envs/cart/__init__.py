"""E_CART: add the exact products, variants and quantities the customer asks for.

generator.py builds the task, user.py is the simulated shopper, verifier.py scores
the cart, agents.py holds the oracle and heuristic scripted agents.
"""

from __future__ import annotations

from typing import ClassVar

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.base import EnvAxis, Environment, JourneyRole, SubTask, Verdict, budget_turns
from ecom_bench.envs.cart.generator import CART_AXES, build_cart
from ecom_bench.envs.cart.agents import CartHeuristic, CartOracle, CartRandom
from ecom_bench.envs.cart.verifier import verify_cart
from ecom_bench.envs.cart.goal import CartGoal
from ecom_bench.envs.cart.user import CartUser
from ecom_bench.world.tools.cart import CartTools
from ecom_bench.world.tools.catalog import CatalogTools
from ecom_bench.world import World
from ecom_bench.world._tooling import ToolBase

CART_INSTRUCTIONS = """\
You are a customer-service agent for an online store. The customer wants you to put \
specific products in their cart. Find each product (catalog_search, or the customer's \
visit history), pick the exact variant (size, colour, connector, ...) and quantity they \
need, add them with cart_add, fix anything the customer corrects, and place the order \
with checkout when the cart is exactly right. If a detail you need (a variant or a \
quantity) was not given, ask the customer. Write plain replies to talk to the customer."""


class CartEnv(Environment):
    name: ClassVar[str] = "cart"
    title: ClassVar[str] = "E_CART: cart building"
    summary: ClassVar[str] = "E_CART: add the exact products, variants and quantities the customer asks for."
    goal_type: ClassVar[type] = CartGoal
    customer_type: ClassVar[type] = CartUser
    toolkits: ClassVar[tuple[type[ToolBase], ...]] = (CatalogTools, CartTools)
    tool_names: ClassVar[tuple[str, ...]] = (
        "catalog_search", "catalog_get_product", "catalog_get_variants", "cart_add", "cart_remove",
        "cart_set_quantity", "cart_view", "user_get_visit_history", "ask_user", "checkout",
    )
    final_tool: ClassVar[str | None] = "checkout"
    instructions: ClassVar[str] = CART_INSTRUCTIONS
    policies = {"oracle": CartOracle, "heuristic": CartHeuristic, "random": CartRandom}
    axes: ClassVar[tuple[EnvAxis, ...]] = CART_AXES
    journey: ClassVar[JourneyRole | None] = JourneyRole(
        "checkout (building a cart order)",
        ("cart", "i'd like to order", "shopping list"),
        cue_order=5)

    def build(self, world: World, seed: int, difficulty: Difficulty, intent: int = 0) -> SubTask:
        return build_cart(world, seed, difficulty, intent, customer=self.customer_type)

    def verify(self, task: SubTask, world: World) -> Verdict:
        return verify_cart(task, world)

    def min_turns(self, task: SubTask, tool_budget: int) -> int:
        """The visit history (it shows every target), then one cart_add per item."""
        return budget_turns(1 + len(task.goal.targets), tool_budget)


__all__ = ["CartEnv"]
