"""Front-neutral conversation types: what every front shows an agent and takes back from it.

The core episode speaks these; the Inspect solver, the scripted provider and the
training env convert to and from them, so no front has its own notion of a turn. A
scripted agent is a `Policy` over them; the envs' own policies are written against this
module (with its helpers `tool_results` and `calls_since_last_message`), and the registry
that names them (`agents.get_policy`) sits above the envs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Protocol

from ecom_bench.domains.toolkits import unbudgeted_tools

Role = Literal["system", "user", "assistant", "tool"]
#: Longest tool error a model reads back (an argument-schema error can quote a 1 MB value).
MAX_TOOL_ERROR_CHARS = 2000


def clipped_tool_error(text: str) -> str:
    """A tool error as a model's prompt shows it (every front that sends errors to a model clips them alike)."""
    if len(text) <= MAX_TOOL_ERROR_CHARS:
        return text
    return f"{text[:MAX_TOOL_ERROR_CHARS]}... (error clipped, {len(text)} characters)"


@dataclass(frozen=True)
class ToolCallRequest:
    """One tool call as the agent asked for it. `parse_error` says why the agent's call could not
    be read (malformed JSON arguments, say): the episode treats it as invalid output."""

    name: str
    arguments: dict[str, Any]
    id: str = ""
    parse_error: str | None = None


@dataclass(frozen=True)
class Message:
    """One conversation message, as any front presents it to a scripted policy."""

    role: Role
    text: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    error: bool = False
    invalid: bool = False  # a tool result for a malformed call (unknown tool, bad or unparseable arguments)

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


@dataclass(frozen=True)
class EpisodeStatus:
    """The episode's counters as data: what an agent may still do, and why it stopped.

    Scripted agents read budgets from here (never from the prompt's wording); the
    training env puts the same fields in `info`.
    """

    turn: int  # the turn the agent is in now, 1-based
    max_turns: int  # T_max(d): the customer's patience, in agent turns
    turns_left: int  # turns the customer will still wait (this one included)
    tool_budget: int  # B_tool(d): budgeted tool calls per turn
    calls_left: int  # budgeted calls left in this turn
    step: int  # agent actions taken so far
    max_steps: int  # the safety cap on actions (truncation)
    done: bool = False
    end_reason: str | None = None  # an `EndReason` value once done

    def to_dict(self) -> dict[str, Any]:
        # Every field is a scalar: a flat copy is `asdict`'s result without its recursive
        # walk (built on every step, for `info`).
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "EpisodeStatus":
        return cls(**data)


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


def ask_user_as_spoken(messages: list[Message]) -> list[Message]:
    """The transcript with each answered `ask_user` call read as what it is: the agent's message to
    the customer, and the customer's reply as a user message.

    The episode counts both ways of speaking alike (a turn each); the envs' scripted policies read
    the customer's words from user messages. An action's other calls stay one action, before and
    after the question; its results follow each call in order, as the episode appends them.
    """
    out: list[Message] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        if message.role != "assistant" or not any(c.name == "ask_user" for c in message.tool_calls):
            out.append(message)
            i += 1
            continue
        results = messages[i + 1 : i + 1 + len(message.tool_calls)]
        calls: list[ToolCallRequest] = []
        answers: list[Message] = []
        text = message.text
        for call, result in zip(message.tool_calls, results, strict=False):  # a cut transcript may lack results
            if call.name != "ask_user" or result.error:
                calls.append(call)
                answers.append(result)
                continue
            if calls:
                out.extend([Message("assistant", text, tool_calls=tuple(calls)), *answers])
                calls, answers, text = [], [], ""
            out.extend([Message("assistant", str(call.arguments.get("question", ""))), Message("user", result.text)])
        if calls:
            out.extend([Message("assistant", text, tool_calls=tuple(calls)), *answers])
        i += 1 + len(results)
    return out


__all__ = ["AgentAction", "EpisodeStatus", "Message", "Policy", "Role", "ToolCallRequest", "ask_user_as_spoken",
           "calls_since_last_message", "tool_results"]
