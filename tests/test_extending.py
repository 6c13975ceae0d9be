"""A new environment written outside the package, with a tool of its own, through every front.

Everything the env needs is in this file: its goal, customer, tools, generator, verifier and
scripted agents, one `register_env` call, and a journey that chains it with a built-in env.
It runs through the core loop, Inspect (with our scripted provider), the gymnasium `EcomEnv`
and that journey without touching any file of the package. docs/extending.md walks through it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval

from conftest import TEST_CATALOG_SIZE, play
from ecom_bench import (AgentAction, CatalogTools, EcomEnv, EnvAxis, Environment, JourneyEnv, JourneyRole, SubTask,
                        ToolCallRequest, ToolError, UserAct, UserMessage, Verdict, World, budget_turns, check_env,
                        env_task, get_env, get_policy, new_episode, register_env, run_policy, tool_method, unregister_env)


# ------------------------------------------------------------------ the env's own data and tools
def points_for(price: float) -> int:
    """The store's loyalty scheme: one point per whole unit of price."""
    return int(price)


@dataclass
class LoyaltyBook:
    """The loyalty domain's state in one world (`world.state(LoyaltyBook)`): the lookups made."""

    lookups: list[str] = field(default_factory=list)

    def snapshot(self) -> dict[str, Any]:
        return {"lookups": list(self.lookups)}


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
        self.world.state(LoyaltyBook).lookups.append(product.id)
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
    assert oracle.final_state["domains"] == {"LoyaltyBook": {"lookups": [oracle.hidden["goal"]["product_id"]]}}
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


def test_check_env_confirms_it_reproducible_and_solvable(registered, context):
    check_env("loyalty", difficulties=(0, 6), samples=3, context=context)

    class Unsolvable(LoyaltyEnv):
        name = "unsolvable"
        policies = {"oracle": LoyaltyGuess}

    register_env(Unsolvable)
    try:
        with pytest.raises(ValueError, match="the oracle failed"):
            check_env("unsolvable", difficulties=(0,), samples=1, context=context)
    finally:
        unregister_env("unsolvable")


def _variant(**declarations: Any) -> type[LoyaltyEnv]:
    return type("Variant", (LoyaltyEnv,), {"name": "variant", **declarations})


@pytest.mark.parametrize("declarations, message", [
    ({"tool_names": ("catalog_search", "loyalty_pointz", "report_loyalty_points")}, "loyalty_pointz"),
    ({"tool_names": "report_loyalty_points"}, "tuple of tool names"),
    ({"tool_names": ("loyalty_points", "loyalty_points", "report_loyalty_points")}, "offers a tool twice"),
    ({"tool_names": ("report_loyalty_points", "loyalty_points")}, "last"),
    ({"final_tool": "loyalty_points"}, "marked @tool_method"),
    ({"toolkits": LoyaltyTools}, "tuple of ToolBase subclasses"),
    ({"policies": {"heuristic": LoyaltyGuess}}, "no 'oracle'"),
    ({"policies": {"oracle": LoyaltyOracle()}}, "Policy class"),
    ({"axes": (("price_floor", 1),)}, "EnvAxis"),
    ({"journey": "loyalty"}, "JourneyRole"),
    ({"name": "cart"}, "already registered"),
    ({"name": "two words"}, "identifier"),
])
def test_the_registry_refuses_a_broken_env_naming_the_problem(declarations, message):
    with pytest.raises((TypeError, ValueError), match=message):
        register_env(_variant(**declarations))


def test_a_tool_kind_must_be_one_of_the_four():
    with pytest.raises(ValueError, match="read, write, user, final"):
        tool_method("reads")  # type: ignore[arg-type]


def test_two_groups_may_not_define_one_tool_name():
    class Shadow(CatalogTools):
        @tool_method("write")
        def report_loyalty_points(self, product_id: str) -> str:
            """Another tool under the same name.

            Args:
                product_id: A product.
            """
            return product_id

    with pytest.raises(ValueError, match="defined by both"):
        register_env(_variant(toolkits=(LoyaltyTools, Shadow)))


def test_a_journey_must_chain_registered_members_with_a_role(registered):
    class Bad(JourneyEnv):
        name = "bad_journey"
        members = ("loyalty", "nowhere")

    with pytest.raises(ValueError, match="'nowhere', which is not registered"):
        register_env(Bad)
    with pytest.raises(ValueError, match="chained by the journey"):
        unregister_env("loyalty")
    assert get_env("loyalty_journey").axis_values(12) == {"journey_length": 2}  # two members


def test_what_build_verify_and_tools_return_is_checked_naming_the_env(registered, context):
    class NoGoalDict(LoyaltyEnv):
        name = "no_goal_dict"

        def build(self, world, seed, difficulty, intent=0):  # noqa: ANN001, ANN201
            task = super().build(world, seed, difficulty, intent)
            return SubTask(env=self.name, goal={"points": 1}, user=task.user)

    class Overconfident(LoyaltyEnv):
        name = "overconfident"

        def verify(self, task, world):  # noqa: ANN001, ANN201
            return Verdict(task=5.0, success=True, explanation="too sure")

    class Buggy(LoyaltyTools):
        @tool_method("read")
        def loyalty_lookup(self, product_id: str) -> str:
            """A tool with a bug.

            Args:
                product_id: A product.
            """
            return {"points": 1}[product_id]

    class BuggyEnv(LoyaltyEnv):
        name = "buggy"
        toolkits = (Buggy,)
        tool_names = ("loyalty_lookup", "report_loyalty_points")

    for env in (NoGoalDict, Overconfident, BuggyEnv):
        register_env(env)
    try:
        with pytest.raises(TypeError, match="'no_goal_dict'.*to_dict"):
            new_episode("no_goal_dict", 0, context=context)
        with pytest.raises(ValueError, match="'overconfident'.*task in"):
            run_policy(new_episode("overconfident", 0, context=context), get_policy("overconfident", "oracle"))
        episode = new_episode("buggy", 0, context=context)
        with pytest.raises(RuntimeError, match="tool 'loyalty_lookup' of environment 'buggy' raised KeyError"):
            episode.step(_call("loyalty_lookup", product_id="x"))
    finally:
        for name in ("no_goal_dict", "overconfident", "buggy"):
            unregister_env(name)


PLUGIN = """
from test_extending import LoyaltyEnv


class PluginLoyalty(LoyaltyEnv):
    name = "plugin_loyalty"
"""


def test_an_installed_package_registers_envs_through_the_entry_point_group(tmp_path, monkeypatch, capsys):
    """A package declaring `[project.entry-points."ecom_bench.envs"]` is found by every front."""
    import ecom_bench.envs as registry
    from ecom_bench.cli import main

    (tmp_path / "plug_envs.py").write_text(PLUGIN)
    dist = tmp_path / "plug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: plug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[ecom_bench.envs]\nplugin_loyalty = plug_envs:PluginLoyalty\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    try:
        assert main(["envs"]) == 0
        assert "| plugin_loyalty | E_LOYALTY" in capsys.readouterr().out
        assert get_env("plugin_loyalty").name == "plugin_loyalty"
    finally:
        unregister_env("plugin_loyalty")


def test_the_cli_imports_a_module_that_registers_envs(tmp_path, monkeypatch, capsys):
    from ecom_bench.cli import main

    (tmp_path / "cli_envs.py").write_text(PLUGIN.replace("plugin_loyalty", "cli_loyalty") + """
from ecom_bench import register_env

register_env(PluginLoyalty)
""")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert main(["--import", "cli_envs", "envs"]) == 0
        assert "| cli_loyalty | catalog_search, loyalty_points, ask_user, report_loyalty_points |" in \
            capsys.readouterr().out
    finally:
        unregister_env("cli_loyalty")
    assert main(["--import", "no_such_module_here", "envs"]) == 2
    assert "--import no_such_module_here: No module named" in capsys.readouterr().err
