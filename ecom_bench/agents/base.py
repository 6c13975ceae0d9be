"""Front-neutral conversation types and the policy registry."""

from __future__ import annotations

from typing import Any, Protocol

from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, ToolCallRequest


class Policy(Protocol):
    name: str
    reads_hidden_goal: bool

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        """The next action given the conversation so far, the hidden goal (only for a policy that
        `reads_hidden_goal`) and the episode's counters (turn, budgets left) as data."""
        ...


def tool_results(messages: list[Message]) -> list[tuple[ToolCallRequest, Message]]:
    """Pair every tool result with the call that produced it, in order."""
    calls: dict[str, ToolCallRequest] = {}
    out = []
    for m in messages:
        for c in m.tool_calls:
            calls[c.id] = c
        if m.role == "tool" and m.tool_call_id in calls:
            out.append((calls[m.tool_call_id], m))
    return out


def calls_since_last_message(messages: list[Message]) -> int:
    """Budgeted tool calls made in the current turn (since the agent last spoke)."""
    from ecom_bench.envs import unbudgeted_tools

    free = unbudgeted_tools()
    n = 0
    for m in reversed(messages):
        if m.role == "assistant":
            if not m.tool_calls:
                break
            n += sum(1 for c in m.tool_calls if c.name not in free)
            if any(c.name == "ask_user" for c in m.tool_calls):
                break
    return n


def get_policy(env: str, name: str) -> Policy:
    """The scripted policy `name` ('oracle', 'heuristic', ...) of environment `env`.

    The env's own policies come first; the generic adversarial ones
    (`ecom_bench.agents.adversarial`: recommend_all, all_variants, answer_now,
    invent_ids) serve every env.
    """
    from ecom_bench.agents.adversarial import ADVERSARIAL
    from ecom_bench.envs import get_env

    policies = get_env(env).policies
    if name in policies:
        return policies[name]()
    if name in ADVERSARIAL:
        return ADVERSARIAL[name](env)
    raise ValueError(
        f"no scripted policy {name!r} for env {env!r}; known policies: "
        f"{', '.join(sorted(policies) + sorted(ADVERSARIAL))}"
    )
