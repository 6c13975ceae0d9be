"""What every environment provides: a generator, a user, a verifier and its tools.

An environment is a small class; its `generate` builds the whole `Problem` (hidden
goal, persona, world, user simulator) once from (seed, difficulty), and `verify`
reads the same world the tools acted on. Nothing is rebuilt a second way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.context import EnvContext
from ecom_bench.users import UserSimulator
from ecom_bench.world import World


@dataclass
class Problem:
    """One generated task. `goal` and `persona` are hidden from the agent."""

    env: str
    seed: int
    difficulty: Difficulty
    world: World
    goal: Any  # env-specific dataclass with to_dict()
    user: UserSimulator
    persona: dict[str, Any] = field(default_factory=dict)

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


class Environment(ABC):
    """Base class of the eight environments."""

    name: ClassVar[str]
    title: ClassVar[str]
    tool_names: ClassVar[tuple[str, ...]]
    final_tool: ClassVar[str]
    instructions: ClassVar[str]
    #: Scripted agents by name ("oracle" reads the hidden goal; the others must not).
    policies: ClassVar[dict[str, type]]

    @abstractmethod
    def generate(self, context: EnvContext, seed: int, difficulty: Difficulty) -> Problem:
        """Build the task, its world and its user from one seed."""

    @abstractmethod
    def verify(self, problem: Problem) -> Verdict:
        """Score the final world state against the hidden goal (r_task)."""

    def has_answer(self, problem: Problem) -> bool:
        """Did the agent give a final answer at all? (No answer → hard fail.)"""
        return problem.world.final_answer is not None

    def answer_ids(self, problem: Problem) -> list[str]:
        """Ids in the final answer that count for the hallucination check (beyond cart/return calls)."""
        return []
