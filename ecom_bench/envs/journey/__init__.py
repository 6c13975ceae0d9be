"""E_JOURNEY: one conversation chaining 2-5 requests from the seven atomic environments.

L = min(5, 2+⌊d/4⌋) distinct atomic envs are drawn; each builds its sub-task into the
SAME world (orders, policy rules, visit history accumulate), with its own hidden goal,
user and answer. The user moves to the next request once the active one is answered
with its env's final-answer tool, and with p_switch(d) interrupts a request with the
next one before coming back (see `user.py`). r_task = mean of the sub-tasks' r_task;
success iff every sub-task succeeds. The user's patience is T_max(d) per request
(L·T_max in all), since one request's budget cannot cover five.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, ClassVar

from ecom_bench._seeding import derive_seed, seeded_rng
from ecom_bench.catalog import Catalog
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.base import EnvAxis, Environment, Problem, SubTask, Verdict, new_world
from ecom_bench.envs.context import EnvContext
from ecom_bench.envs.journey.goal import JourneyGoal
from ecom_bench.envs.journey.agents import JOURNEY_POLICIES
from ecom_bench.envs.journey.user import JourneyUser
from ecom_bench.world import World
from ecom_bench.users.customer import Customer
from ecom_bench.world._tooling import ToolBase

def _atomic(name: str) -> Environment:
    from ecom_bench.envs import get_env

    return get_env(name)


def journey_members() -> tuple[str, ...]:
    """The built-in environments whose requests join the built-in journey, in registry order
    (the draw of a journey's requests depends on it, so it does not follow later registrations)."""
    from ecom_bench.envs import BUILTIN_ENVS

    return tuple(n for n in BUILTIN_ENVS if n != "journey" and _atomic(n).journey is not None)


#: E_JOURNEY's own difficulty axis (p_switch, the interruptions, is a shared one).
JOURNEY_LENGTH = EnvAxis("journey_length", "requests chained in one conversation", "min(5, 2 + ⌊d/4⌋)",
                         lambda d: min(5, 2 + d // 4))


def journey_length(difficulty: Difficulty) -> int:
    return int(JOURNEY_LENGTH.at(difficulty))


def _answer_phrases(members: tuple[str, ...]) -> str:
    phrases: list[str] = []
    for name in members:
        role = _atomic(name).journey
        if role is not None and role.answer_phrase not in phrases:
            phrases.append(role.answer_phrase)
    if len(phrases) == 1:
        return phrases[0]
    return ", ".join(phrases[:-1]) + (", and " if len(phrases) > 2 else " and ") + phrases[-1]


def journey_instructions(members: tuple[str, ...]) -> str:
    """The journey's system prompt: each member's final answer named by its `JourneyRole`."""
    return (
        "You are a customer-service agent for an online store. The customer has several requests and "
        "brings them up one after another (sometimes interrupting one with another). Each kind of request "
        f"has its own final-answer tool: {_answer_phrases(members)}. Handle the customer's current request "
        "with the tools, give it its final answer, then tell the customer; they will move on to their next "
        "request. Ask when a detail you need was not given. Write plain replies to talk to the customer."
    )


def _strings_in(value: object, out: set[str]) -> set[str]:
    """Every string anywhere in a (hidden goal) structure, added to `out`."""
    if isinstance(value, str):
        out.add(value)
    elif isinstance(value, dict):
        for v in value.values():
            _strings_in(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _strings_in(v, out)
    return out


def _product_rows_in(value: object, catalog: Catalog) -> dict[str, int]:
    """Catalogue product ids anywhere in a (hidden goal) structure, with their rows. Each
    distinct string is looked up once, and none longer than the catalogue's longest id
    (reference texts, dates, openings): a lookup that misses is a binary search over the ids."""
    longest = catalog.id_width
    rows = {s: catalog.index_of(s) for s in _strings_in(value, set()) if len(s) <= longest}
    return {s: row for s, row in rows.items() if row is not None}


def _goal_items(task: SubTask, world: World) -> set[str]:
    """The product and variant ids a request's goal relies on (read from the catalogue's
    columns: no `Product` is made)."""
    rows = _product_rows_in(task.goal.to_dict(), world.catalog)
    return set(rows).union(*(world.catalog.variant_ids_at(row) for row in rows.values()))


def _keep_other_requests_solvable(world: World, used: dict[int, set[str]]) -> None:
    """Drop a request's scheduled stock-outs that would hit items another request's goal uses
    (`used`: intent -> `_goal_items`).

    Stock-outs already fire only while their own request is active; this keeps one
    request's p_oos event from making another request's answer (earlier or later)
    wrong, so every journey stays solvable.
    """
    world.stock_outs = [
        e for e in world.stock_outs
        if not any(set(e.item_ids) & ids for intent, ids in used.items() if intent != e.intent)
    ]


def _written_opening(task: SubTask) -> str:
    """A request's opening as the hidden goal records it: the template words, said to no one
    (a phraser words it when the request opens)."""
    if isinstance(task.user, Customer):
        return task.user.template_opening()
    return task.user.opening().text


class JourneyEnv(Environment):
    """Chains requests of its `members` in one conversation. A journey over other envs is a
    subclass naming them (and its own `name`), registered like any env."""

    name: ClassVar[str] = "journey"
    title: ClassVar[str] = "E_JOURNEY: multi-intent journey"
    summary: ClassVar[str] = "E_JOURNEY: handle a conversation chaining 2-5 of the other tasks in order."
    goal_type: ClassVar[type] = JourneyGoal
    customer_type: ClassVar[type] = JourneyUser
    final_tool: ClassVar[str | None] = None  # each request's own env's
    #: The envs whose requests it chains (each must have a `JourneyRole`); None: `journey_members()`.
    members: ClassVar[tuple[str, ...] | None] = None

    @property
    def chained(self) -> tuple[str, ...]:
        return self.members if self.members is not None else journey_members()

    @property
    def axes(self) -> tuple[EnvAxis, ...]:  # type: ignore[override]
        n = len(self.chained)
        if n >= 5:
            return (JOURNEY_LENGTH,)
        return (EnvAxis(JOURNEY_LENGTH.name, JOURNEY_LENGTH.description, f"min({n}, 2 + ⌊d/4⌋)",
                        lambda d: min(n, JOURNEY_LENGTH.value(d))),)

    @property
    def toolkits(self) -> tuple[type[ToolBase], ...]:  # type: ignore[override]
        groups: list[type[ToolBase]] = []
        for env in self.chained:
            groups.extend(g for g in _atomic(env).toolkits if g not in groups)
        return tuple(groups)

    @property
    def tool_names(self) -> tuple[str, ...]:  # type: ignore[override]
        names: list[str] = []
        for env in self.chained:
            names.extend(n for n in _atomic(env).tool_names if n not in names)
        return tuple(names)

    @property
    def instructions(self) -> str:  # type: ignore[override]
        return journey_instructions(self.chained)

    @property
    def policies(self) -> dict[str, Callable[[], Any]]:  # type: ignore[override]
        return {name: functools.partial(cls, members=self.chained) for name, cls in JOURNEY_POLICIES.items()}

    def rules(self, difficulty: Difficulty) -> str:
        return (
            f"Rules: you may make at most {difficulty.tool_budget} tool call(s) before each message to the customer "
            "(messages to the customer, including ask_user, and final-answer tools are not counted). "
            f"The customer's patience is {difficulty.max_turns} turns in all. Only use ids that a tool has returned. "
            "Give each request its final answer once; the conversation ends after the last request's answer."
        )

    def generate(self, context: EnvContext, seed: int, difficulty: Difficulty) -> Problem:
        world = new_world(context, self.name, seed, difficulty)
        task = self.build(world, seed, difficulty)
        patience = dataclasses.replace(difficulty, max_turns=difficulty.max_turns * len(task.goal.tasks))
        return Problem(env=self.name, seed=seed, difficulty=patience, world=world, task=task)

    def build(self, world: World, seed: int, difficulty: Difficulty, intent: int = 0) -> SubTask:
        rng = seeded_rng("journey", seed, difficulty.level)
        envs = rng.sample(self.chained, int(self.axes[0].at(difficulty)))
        tasks: list[SubTask] = []
        used: dict[int, set[str]] = {}
        for i, env in enumerate(envs):
            before = len(world.stock_outs)
            member = _atomic(env)
            built = member.build(world, derive_seed("journey", seed, difficulty.level, i, env), difficulty, intent=i)
            tasks.append(member.checked(built))
            for event in world.stock_outs[before:]:
                event.intent = i
            used[i] = _goal_items(tasks[-1], world)
            world.reserved_ids |= used[i]  # later requests' generators leave these in stock
        _keep_other_requests_solvable(world, used)
        openings = tuple(_written_opening(t) for t in tasks)
        switches = tuple(rng.random() < difficulty.p_switch for _ in tasks[:-1]) + (False,)
        world.intent = 0
        goal = JourneyGoal(tuple(tasks), openings, switches)
        return SubTask(env=self.name, goal=goal, user=JourneyUser(goal, derive_seed("journey-user", seed)),
                       intent=intent)

    def verify(self, task: SubTask, world: World) -> Verdict:
        goal: JourneyGoal = task.goal
        verdicts = [_atomic(t.env).verify(t, world) for t in goal.tasks]
        r_task = sum(v.task for v in verdicts) / len(verdicts)
        success = all(v.success for v in verdicts)
        lines = [f"{i + 1}. {t.env}: {'success' if v.success else 'FAILED'} (task {v.task:+.2f}). {v.explanation}"
                 for i, (t, v) in enumerate(zip(goal.tasks, verdicts, strict=True))]
        head = (f"{sum(v.success for v in verdicts)} of {len(verdicts)} requests succeeded; "
                f"task = mean {r_task:+.2f}.")
        # one line per request: a run-on paragraph hid which request failed
        return Verdict(task=r_task, success=success, explanation="\n".join([head, *lines]),
                       details={"subtasks": [{"env": t.env, "task": v.task, "success": v.success,
                                              "details": v.details} for t, v in zip(goal.tasks, verdicts, strict=True)]})

    def min_turns(self, task: SubTask, tool_budget: int) -> int:
        """Each request's own T_min: its last turn is the message that tells the customer it is done."""
        goal: JourneyGoal = task.goal
        return sum(_atomic(t.env).min_turns(t, tool_budget) for t in goal.tasks)

    def after_answer(self, problem: Problem) -> bool:
        goal: JourneyGoal = problem.goal
        world = problem.world
        answer = world.answers[-1]
        active = goal.tasks[world.intent]
        if answer.intent != active.intent or answer.tool != _atomic(active.env).final_tool:
            return False  # another request's tool: recorded, but this request stays open
        user: JourneyUser = problem.user  # type: ignore[assignment]
        return user.on_answer(world)


__all__ = ["JourneyEnv", "journey_instructions", "journey_length", "journey_members"]
