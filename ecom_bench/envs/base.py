"""The environment contract: what one environment declares and provides.

An environment is one package (`ecom_bench/envs/<name>/`) whose `Environment` subclass
declares its summary, goal type, customer, toolkits, final tool, own difficulty axes and
journey role, and implements `build` (the generator) and `verify` (the verifier). Register
it with `ecom_bench.register_env`; every front (core runner, Inspect task, training env,
journey, CLI) reads the registry, so nothing else has to change.

An environment contributes a `SubTask` (hidden goal, persona, user simulator) to a
`World` it populates (orders, policy rules, stock-outs, ...). `build` writes into a world
it is given, so E_JOURNEY can chain several environments over one world; `generate`
is the atomic case: a fresh world plus one sub-task. `verify` reads the same
world the tools acted on, and the answers the agent gave for that sub-task's intent.
Nothing is rebuilt a second way (docs/design.md §Upstream pitfalls, 3).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ecom_bench._seeding import derive_seed
from ecom_bench.catalog import Catalog
from ecom_bench.conversation import Policy
from ecom_bench.difficulty import Difficulty
from ecom_bench.domains import DOMAIN_STATES
from ecom_bench.users import UserSimulator
from ecom_bench.world import World
from ecom_bench.world.state import FinalAnswer
from ecom_bench.world._tooling import ToolBase
from ecom_bench.world.toolkit import Toolkit, compose_toolkit


@dataclass
class EnvContext:
    """The shared, read-only resources every episode is generated over: the catalogue and its
    search engine (`envs.context.load_context` builds one per process and spec)."""

    catalog: Catalog
    search_engine: Any  # ecom_bench.catalog.search.SearchEngine


@dataclass
class SubTask:
    """What one environment asks of the agent inside a world. `goal`/`persona` are hidden."""

    env: str
    goal: Any  # env-specific dataclass with to_dict()
    user: UserSimulator
    persona: dict[str, Any] = field(default_factory=dict)
    intent: int = 0  # its index among the world's intents (0 unless in a journey)

    def hidden_state(self) -> dict[str, Any]:
        return {"env": self.env, "intent": self.intent, "goal": self.goal.to_dict(), "persona": self.persona}


@dataclass
class Problem:
    """One generated episode: the world and the sub-task (a composite one for E_JOURNEY)."""

    env: str
    seed: int
    difficulty: Difficulty
    world: World
    task: SubTask

    @property
    def goal(self) -> Any:
        return self.task.goal

    @property
    def user(self) -> UserSimulator:
        return self.task.user

    @property
    def persona(self) -> dict[str, Any]:
        return self.task.persona

    def hidden_state(self) -> dict[str, Any]:
        """Everything the agent must not see: for score metadata and the oracle."""
        return {"env": self.env, "seed": self.seed, "difficulty": self.difficulty.level,
                "goal": self.goal.to_dict(), "persona": self.persona}


@dataclass(frozen=True)
class Verdict:
    """The verifier's judgement of the final world state."""

    task: float  # r_task in [-1, 1]
    success: bool
    explanation: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EnvAxis:
    """A difficulty axis of one environment, beside the 12 shared ones of `Difficulty`.

    `value(d)` is the schedule the generator reads; `schedule` is the same formula in words,
    for `ecom-bench show` and the docs.
    """

    name: str
    description: str
    schedule: str
    value: Callable[[int], float]

    def at(self, difficulty: Difficulty | int) -> Any:
        level = difficulty.level if isinstance(difficulty, Difficulty) else difficulty
        return self.value(level)


@dataclass(frozen=True)
class JourneyRole:
    """How an environment's requests join a journey (E_JOURNEY chains several envs' requests).

    `answer_phrase` names the request's final answer in the journey's instructions;
    `request_cues` are words of a customer's opening that mark this kind of request (the
    honest scripted journey agents route by them, checked in `cue_order`); an env with no
    cues is where a request that matches no other goes.
    """

    answer_phrase: str
    request_cues: tuple[str, ...] = ()
    cue_order: int = 0


def new_world(context: EnvContext, env: str, seed: int, difficulty: Difficulty) -> World:
    """An empty world over the shared catalogue, seeded for this episode, with every built-in
    domain's state (empty: every snapshot reports the same keys, whichever env fills them)."""
    return World(catalog=context.catalog, difficulty=difficulty, seed=derive_seed(f"{env}-world", seed, difficulty.level),
                 search_engine=context.search_engine, domains={kind: kind() for kind in DOMAIN_STATES})


class Environment(ABC):
    """An environment: subclass it in the env's own package and register it (`register_env`)."""

    #: Registry key, Inspect task name and CLI name.
    name: ClassVar[str]
    #: Short title ("E_CART: cart building") for logs and listings.
    title: ClassVar[str]
    #: One sentence: what the agent must do (the Inspect task's description and the CLI listing).
    summary: ClassVar[str]
    #: The hidden goal's type (a dataclass with `to_dict()`); `build` puts one in `SubTask.goal`.
    goal_type: ClassVar[type]
    #: The simulated customer's class; `build` makes one for each task.
    customer_type: ClassVar[type]
    #: The tool groups (`ToolBase` subclasses of `@tool_method`s) the episode binds to its world.
    toolkits: ClassVar[tuple[type[ToolBase], ...]]
    #: The tools the agent is offered, in order: a subset of the toolkits' tools.
    tool_names: ClassVar[tuple[str, ...]]
    #: The tool whose call is the agent's answer (None for an env with one per request).
    final_tool: ClassVar[str | None]
    #: The system prompt's task description (the rules of `rules()` follow it).
    instructions: ClassVar[str]
    #: Scripted agents by name, as factories of a `Policy` ("oracle" reads the hidden goal; the
    #: others must not).
    policies: ClassVar[Mapping[str, Callable[[], Policy]]]
    #: The env's own difficulty axes (the 12 shared ones are `Difficulty`'s).
    axes: ClassVar[tuple[EnvAxis, ...]] = ()
    #: How its requests join a journey; None: never part of one.
    journey: ClassVar[JourneyRole | None] = None

    def rules(self, difficulty: Difficulty) -> str:
        """The budgets and answer rule, appended to the instructions in the system prompt."""
        return (
            f"Rules: you may make at most {difficulty.tool_budget} tool call(s) before each message to the customer "
            f"(messages to the customer, including ask_user, and {self.final_tool} are not counted). "
            f"The customer's patience is {difficulty.max_turns} turns. Only use ids that a tool has returned. "
            f"Call {self.final_tool} exactly once, when you are done; it ends the conversation."
        )

    # ----------------------------------------------------------- generation
    def generate(self, context: EnvContext, seed: int, difficulty: Difficulty) -> Problem:
        """Build the task, its world and its user from one seed."""
        world = new_world(context, self.name, seed, difficulty)
        task = self.checked(self.build(world, seed, difficulty))
        return Problem(env=self.name, seed=seed, difficulty=difficulty, world=world, task=task)

    def checked(self, task: Any) -> SubTask:
        """`build`'s result, refused with a message naming the env if it breaks the contract."""
        where = f"environment {self.name!r}: build()"
        if not isinstance(task, SubTask):
            raise TypeError(f"{where} must return a SubTask, got {type(task).__name__}")
        if task.env != self.name:
            raise ValueError(f"{where} returned a SubTask of env {task.env!r}")
        if not callable(getattr(task.goal, "to_dict", None)):
            raise TypeError(f"{where}: the goal ({type(task.goal).__name__}) needs a to_dict() method")
        if not all(callable(getattr(task.user, m, None)) for m in ("opening", "reply", "disclosure")):
            raise TypeError(f"{where}: the customer ({type(task.user).__name__}) must implement UserSimulator "
                            "(opening, reply, disclosure)")
        return task

    @abstractmethod
    def build(self, world: World, seed: int, difficulty: Difficulty, intent: int = 0) -> SubTask:
        """Populate `world` with what this task needs and return its hidden goal and user.

        Must draw every random choice from `seed` (and `intent`), and must leave the
        task solvable: the env's oracle reaches success on it.
        """

    # --------------------------------------------------------- verification
    @abstractmethod
    def verify(self, task: SubTask, world: World) -> Verdict:
        """Score one sub-task against the final world and the answers for its intent (r_task)."""

    def answer_of(self, task: SubTask, world: World) -> FinalAnswer | None:
        """The agent's final answer to `task`: the last call of this env's final tool for its intent."""
        answers = world.answers_for(task.intent, self.final_tool)
        return answers[-1] if answers else None

    # ---------------------------------------------------------------- tools
    def toolkit_class(self) -> type[Toolkit]:
        """The class binding this env's toolkits (and `ask_user`) to one episode's world."""
        return compose_toolkit(self.toolkits)

    def axis_values(self, difficulty: Difficulty | int) -> dict[str, Any]:
        """The env's own axes at a difficulty, by name."""
        return {axis.name: axis.at(difficulty) for axis in self.axes}

    def has_answer(self, problem: Problem) -> bool:
        """Did the agent give a final answer at all? (No answer → hard fail.)"""
        return bool(problem.world.answers)

    def after_answer(self, problem: Problem) -> bool:
        """Called after each successful final-answer call; True when the episode is complete."""
        return True

    # ------------------------------------------------------------ efficiency
    def min_turns(self, task: SubTask, tool_budget: int) -> int:
        """T_min of r_eff: the turns the task's reference solution needs with `tool_budget` calls a
        turn, from the hidden goal. Turns the budget forces on an ideal agent are not charged.

        Envs whose answer needs more than one turn's calls override it; the count is at least
        what their oracle plays (tests/test_efficiency_fair.py), so the oracle's r_eff is +1.
        """
        return 1


def budget_turns(calls: int, tool_budget: int) -> int:
    """Turns that `calls` budgeted tool calls take at `tool_budget` a turn (the final answer rides
    on the last one): ⌈calls / B_tool⌉, at least 1."""
    return max(1, -(-calls // max(1, tool_budget)))
