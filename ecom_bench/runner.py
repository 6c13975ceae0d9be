"""Run a scripted policy through an episode with no Inspect: the core's own front.

It drives `Episode.step` exactly as the Inspect solver and the training env do, and the
policy reads the episode's own transcript (`Episode.messages`), so the three fronts cannot
drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from ecom_bench.conversation import Message, Policy
from ecom_bench.envs.context import EnvContext
from ecom_bench.episode import Episode, EpisodeResult, new_episode


@dataclass
class EpisodeRun:
    messages: list[Message]
    result: EpisodeResult

    def customer_words(self) -> str:
        """Everything the customer said, replies to ask_user included (e.g. to tell whether they
        named an order id themselves)."""
        return " ".join(m.text for m in self.messages if m.role == "user" or m.tool_name == "ask_user")


def run_policy(episode: Episode, policy: Policy) -> EpisodeRun:
    """Play `policy` until the episode terminates or is truncated; the run's messages are the
    episode's transcript (from the system prompt, whatever was played before this call included)."""
    hidden = episode.problem.hidden_state() if policy.reads_hidden_goal else None
    while not episode.done:
        episode.step(policy.act(episode.messages, hidden, episode.status()))
    return EpisodeRun(episode.messages, episode.result())


def check_env(env_name: str, difficulties: tuple[int, ...] = (0, 3, 6, 9, 12), samples: int = 5, *,
              context: EnvContext | None = None) -> None:
    """Check what registration cannot: that the env's tasks are reproducible and solvable.

    For `samples` episodes at each difficulty: the same seed builds the same hidden goal and
    opening twice, and the env's oracle succeeds. Raises ValueError listing every failure.
    """
    from ecom_bench.agents import get_policy

    problems = []
    for d in difficulties:
        for index in range(samples):
            first = new_episode(env_name, d, 0, index, context=context)
            again = new_episode(env_name, d, 0, index, context=context)
            if (first.problem.hidden_state(), first.opening) != (again.problem.hidden_state(), again.opening):
                problems.append(f"d={d} index={index}: the same seed built a different task (draw every random "
                                "choice from the seed)")
            result = run_policy(first, get_policy(env_name, "oracle")).result
            if not result.reward.success:
                problems.append(f"d={d} index={index}: the oracle failed: {result.explanation()}")
    if problems:
        raise ValueError(f"environment {env_name!r} fails {len(problems)} check(s):\n" + "\n".join(problems))

