"""Front-neutral conversation types and the policy registry."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCallRequest:
    name: str
    arguments: dict[str, Any]
    id: str = ""


@dataclass(frozen=True)
class Message:
    """One conversation message, as any front presents it to a scripted policy."""

    role: Role
    text: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    error: bool = False

    def json(self) -> Any:
        """The tool result parsed as JSON (None if it is not JSON)."""
        try:
            return json.loads(self.text)
        except (TypeError, ValueError):
            return None


@dataclass(frozen=True)
class AgentAction:
    """What the agent does next: tool calls, or (when there are none) a message to the user."""

    text: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = field(default=())


class Policy(Protocol):
    name: str
    reads_hidden_goal: bool

    def act(self, messages: list[Message], hidden: dict[str, Any] | None) -> AgentAction: ...


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
    from ecom_bench.world.toolkit import unbudgeted_tools

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
