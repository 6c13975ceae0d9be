"""A new environment written outside the package, with a tool of its own, through every front.

Everything the env needs is in this file: its goal, customer, tools, generator, verifier and
scripted agents, one `register_env` call, and a journey that chains it with a built-in env.
It runs through the core loop, Inspect (with our scripted provider), the gymnasium `EcomEnv`
and that journey without touching any file of the package. docs/extending.md walks through it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval

from conftest import TEST_CATALOG_SIZE, play
from ecom_bench import (AgentAction, EnvAxis, Environment, JourneyRole, SubTask, ToolCallRequest, UserAct,
                        UserMessage, Verdict, World, new_episode, register_env, run_policy, unregister_env)
from ecom_bench.agents import get_policy
from ecom_bench.envs.base import budget_turns
from ecom_bench.envs.journey import JourneyEnv
from ecom_bench.tasks import env_task
from ecom_bench.training import EcomEnv
from ecom_bench.world import ToolError
from ecom_bench.world.toolkit import tool_method
from ecom_bench.world.tools.catalog import CatalogTools


# ------------------------------------------------------------------ the env's own data and tools
def points_for(price: float) -> int:
    """The store's loyalty scheme: one point per whole unit of price."""
    return int(price)


class LoyaltyTools(CatalogTools):
    """The loyalty domain's tools (a read tool and the final answer)."""

    @tool_method("read")
    def loyalty_points(self, product_id: str) -> str:
        """The loyalty points a product earns when bought.

        Args:
            product_id: The product's id, from catalog_search.
        """
        product = self._product(product_id)
        self._reference(product.id)
        return json.dumps({"product_id": product.id, "points": points_for(product.price)})

    @tool_method("final")
    def report_loyalty_points(self, product_id: str, points: int) -> str:
        """Tell the store how many points the customer's product earns. Ends the conversation.

        Args:
            product_id: The product the customer asked about.
            points: The points it earns.
        """
        if points < 0:
            raise ToolError("points cannot be negative")
        self._reference(product_id)
        self._answer("report_loyalty_points", {"product_id": product_id.strip(), "points": points})
        return "Recorded."


# ------------------------------------------------------------------------------ goal and customer
@dataclass(frozen=True)
class LoyaltyGoal:
    product_id: str
    title: str
    points: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class LoyaltyCustomer:
    """Asks once, thanks the agent for an answer, gives up at the last turn."""

    def __init__(self, goal: LoyaltyGoal) -> None:
        self.goal = goal

    def opening(self) -> UserMessage:
        return UserMessage(f"How many loyalty points would I earn with the {self.goal.title}?", UserAct.OPENING)

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        if last_turn:
            return UserMessage("Never mind, bye.", UserAct.QUIT, ends_episode=True)
        return UserMessage(f"I mean the {self.goal.title}; how many points is it?", UserAct.CONTINUE)

    def disclosure(self) -> dict[str, bool]:
        return {}


# ------------------------------------------------------------------------------- scripted agents
def _call(name: str, **arguments: Any) -> AgentAction:
    return AgentAction(tool_calls=(ToolCallRequest(id=f"call-{name}", name=name, arguments=arguments),))


class LoyaltyOracle:
    """Finds the product by its title (ids count only once a tool has shown them), reads its points,
    reports them; says a word to the customer when the turn's tool budget is spent."""

    name = "oracle"
    reads_hidden_goal = True

    def act(self, messages, hidden, status) -> AgentAction:  # noqa: ANN001
        goal = hidden["goal"]
        done = {m.tool_name for m in messages if m.role == "tool" and not m.error}
        if "loyalty_points" in done:
            return _call("report_loyalty_points", product_id=goal["product_id"], points=goal["points"])
        if status.calls_left == 0:
            return AgentAction(text="Let me look that up.")
        if "catalog_search" not in done:
            return _call("catalog_search", query=goal["title"])
        return _call("loyalty_points", product_id=goal["product_id"])


class LoyaltyGuess:
    name = "random"
    reads_hidden_goal = False

    def act(self, messages, hidden, status) -> AgentAction:  # noqa: ANN001
        return _call("report_loyalty_points", product_id="P-none", points=0)


# -------------------------------------------------------------------------------- the environment
class LoyaltyEnv(Environment):
    name = "loyalty"
    title = "E_LOYALTY: loyalty points"
    summary = "E_LOYALTY: tell the customer how many loyalty points a product earns."
    goal_type = LoyaltyGoal
    customer_type = LoyaltyCustomer
    toolkits = (LoyaltyTools,)
    tool_names = ("catalog_search", "loyalty_points", "ask_user", "report_loyalty_points")
    final_tool = "report_loyalty_points"
    instructions = "You are a store's assistant. Find the product the customer means and report its loyalty points."
    policies = {"oracle": LoyaltyOracle, "heuristic": LoyaltyGuess, "random": LoyaltyGuess}
    axes = (EnvAxis("price_floor", "cheapest product asked about", "10·d", lambda d: 10 * d),)
    journey = JourneyRole("report_loyalty_points (loyalty points)", ("loyalty", "points"), cue_order=-1)

    def build(self, world: World, seed: int, difficulty, intent: int = 0) -> SubTask:  # noqa: ANN001
        floor = self.axes[0].at(difficulty)
        products = [p for p in world.catalog.products[:500] if p.price >= floor] or world.catalog.products[:1]
        product = products[seed % len(products)]
        goal = LoyaltyGoal(product.id, product.title, points_for(product.price))
        return SubTask(env=self.name, goal=goal, user=LoyaltyCustomer(goal), intent=intent)

    def min_turns(self, task: SubTask, tool_budget: int) -> int:
        """A search and a points lookup, at `tool_budget` calls a turn."""
        return budget_turns(2, tool_budget)

    def verify(self, task: SubTask, world: World) -> Verdict:
        answer = self.answer_of(task, world)
        right = answer is not None and answer.arguments == {"product_id": task.goal.product_id,
                                                              "points": task.goal.points}
        return Verdict(task=1.0 if right else -1.0, success=right,
                       explanation=f"expected {task.goal.points} points for {task.goal.product_id}")


class LoyaltyJourney(JourneyEnv):
    """A journey of its own: a loyalty question and a store-policy question."""

    name = "loyalty_journey"
    title = "Loyalty + policy journey"
    members = ("loyalty", "policy")


@pytest.fixture
def registered() -> Iterator[None]:
    register_env(LoyaltyEnv)
    register_env(LoyaltyJourney)
    yield
    unregister_env("loyalty_journey")
    unregister_env("loyalty")


# ----------------------------------------------------------------------------------------- tests
def test_the_core_loop_runs_it_and_scores_it_from_the_goal(registered, context):
    oracle = run_policy(new_episode("loyalty", 3, 0, 0, context=context), get_policy("loyalty", "oracle")).result
    assert oracle.reward.success and oracle.reward.total == pytest.approx(0.9)
    guess = run_policy(new_episode("loyalty", 3, 0, 0, context=context), get_policy("loyalty", "random")).result
    assert not guess.reward.success and guess.reward.task == -1.0
    episode = new_episode("loyalty", 3, 0, 0, context=context)
    assert [s.name for s in episode.tool_specs()] == list(LoyaltyEnv.tool_names)
    assert "Find the product the customer means" in episode.system_prompt()


def test_its_own_tool_is_budgeted_and_validated_like_any_other(registered, context):
    episode = new_episode("loyalty", 0, 0, 0, context=context, strict=False)  # B_tool = 1
    observation, *_ = episode.step(_call("loyalty_points", product_id=episode.problem.goal.product_id))
    assert json.loads(observation[0].text)["points"] == episode.problem.goal.points
    refused, *_ = episode.step(_call("loyalty_points", product_id=episode.problem.goal.product_id))
    assert refused[0].error and "budget" in refused[0].text
    bad, *_ = episode.step(_call("report_loyalty_points", product_id="x", points="many"))
    assert bad[0].error and bad[0].invalid


def test_inspect_runs_it_with_the_scripted_provider(registered, tmp_path):
    [log] = inspect_eval(env_task("loyalty", difficulty=2, samples=3, catalog_size=TEST_CATALOG_SIZE),
                         model="ecom/oracle", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert [s.scores["success"].value for s in log.samples] == [1.0, 1.0, 1.0]
    assert log.eval.metadata["env"] == "loyalty" and log.eval.metadata["title"] == LoyaltyEnv.title


def test_the_gymnasium_env_runs_it(registered, context):
    env = EcomEnv("loyalty", difficulty=1, context=context)
    observation, info = env.reset(seed=0)
    assert "loyalty points" in observation["messages"][-1]["content"]
    total, info = play(env, "oracle")
    assert info["success"] and total == pytest.approx(0.9)


def test_a_journey_chains_it_with_a_built_in_env(registered, context):
    for index in range(3):
        run = run_policy(new_episode("loyalty_journey", 0, 0, index, context=context),
                         get_policy("loyalty_journey", "oracle"))
        subtasks = run.result.verdict.details["subtasks"]
        assert sorted(s["env"] for s in subtasks) == ["loyalty", "policy"]
        assert run.result.reward.success, run.result.explanation()
    episode = new_episode("loyalty_journey", 0, 0, 0, context=context)
    assert {"loyalty_points", "policy_search"} <= {s.name for s in episode.tool_specs()}
    assert "report_loyalty_points (loyalty points)" in episode.system_prompt()


def test_the_registry_refuses_a_broken_env():
    class NoSuchTool(LoyaltyEnv):
        name = "broken"
        tool_names = ("catalog_search", "loyalty_pointz", "report_loyalty_points")

    with pytest.raises(ValueError, match="loyalty_pointz"):
        register_env(NoSuchTool)
    with pytest.raises(ValueError, match="already registered"):
        register_env(type("Cart", (LoyaltyEnv,), {"name": "cart"}))
