"""Run a scripted policy through an episode with no Inspect: the core's own front.

The loop mirrors the Inspect solver step for step (same Episode calls, same message
shapes), which is what lets tests compare the two fronts and what the training
environments build on.
"""

from __future__ import annotations

from dataclasses import dataclass

from ecom_bench._seeding import episode_seed
from ecom_bench.agents import Message, Policy
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs import get_env
from ecom_bench.envs.context import EnvContext, load_context
from ecom_bench.episode import Episode, EpisodeResult

MAX_STEPS = 500


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
    env = get_env(env_name)
    ctx = context or load_context()
    problem = env.generate(ctx, episode_seed(env_name, seed, difficulty, index), Difficulty.from_level(difficulty))
    return Episode(env, problem, strict=strict)


def run_policy(episode: Episode, policy: Policy) -> EpisodeRun:
    messages = [Message("system", episode.system_prompt()), Message("user", episode.opening)]
    hidden = episode.problem.hidden_state() if policy.reads_hidden_goal else None
    for _ in range(MAX_STEPS):
        if episode.done:
            break
        action = policy.act(messages, hidden)
        messages.append(Message("assistant", action.text, tool_calls=action.tool_calls))
        if action.tool_calls:
            for call in action.tool_calls:
                out = episode.call_tool(call.name, call.arguments)
                messages.append(Message("tool", out.text, tool_call_id=call.id, tool_name=call.name,
                                        error=out.error))
            continue
        reply = episode.agent_message(action.text)
        if reply is not None:
            messages.append(Message("user", reply.text))
    else:
        episode.abort("stopped: too many steps")
    return EpisodeRun(messages, episode.result())
