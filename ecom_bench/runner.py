"""Run a scripted policy through an episode with no Inspect: the core's own front.

It drives `Episode.step` exactly as the Inspect solver and the training env do, so
the three fronts cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from ecom_bench.agents import Message, Policy
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


def make_episode(env_name: str, difficulty: int, seed: int = 0, index: int = 0, *,
                 context: EnvContext | None = None, strict: bool = True) -> Episode:
    """Episode `index` of the (env, d, seed) dataset, exactly as the Inspect task builds it."""
    return new_episode(env_name, difficulty, seed, index, context=context, strict=strict)


def run_policy(episode: Episode, policy: Policy) -> EpisodeRun:
    """Play `policy` until the episode terminates or is truncated."""
    messages = [Message("system", episode.system_prompt()), Message("user", episode.opening)]
    hidden = episode.problem.hidden_state() if policy.reads_hidden_goal else None
    while not episode.done:
        action = policy.act(messages, hidden, episode.status())
        messages.append(Message("assistant", action.text, tool_calls=action.tool_calls))
        observation, *_ = episode.step(action)
        messages.extend(observation)
    return EpisodeRun(messages, episode.result())
