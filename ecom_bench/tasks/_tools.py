"""Inspect tools generated from the core toolkit, bound to one episode (tools are defined once, in the core).

The schema, name and description come from the core `ToolSpec`. Our solver steps the
episode itself and only shows the model these schemas; run by another solver, each
call is a step of the episode (or part of one: `ToolBatches`), and a core error becomes
an Inspect `ToolError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspect_ai.tool import ToolDef, ToolError, ToolParams
from inspect_ai.util import JSONSchema

from ecom_bench.conversation import AgentAction, ToolCallRequest
from ecom_bench.episode import Episode, EpisodeOver
from ecom_bench.world.toolkit import ToolSpec


@dataclass
class ToolBatches:
    """Which tool calls make one action: the calls an agent's tool runner runs between two lookups of
    the tools (Inspect's `execute_tools` looks its tools up once, then runs one generation's calls).

    The default solver steps a generation's calls as one action; an agent's tool runner runs them
    one by one. Grouped again here, they are one step of the episode, one assistant message in its
    transcript (what scripted models read), as the default solver makes them.
    """

    new_batch: bool = True
    calls: int = 0  # numbers the calls: their ids pair each result with its call in the transcript

    def looked_up(self) -> None:
        """The tools were looked up: the next call starts a new action."""
        self.new_batch = True

    def next_call(self, name: str, arguments: dict[str, Any]) -> tuple[ToolCallRequest, bool]:
        """The call, with its id, and whether it continues the current action."""
        more_calls, self.new_batch = not self.new_batch, False
        self.calls += 1
        return ToolCallRequest(name, arguments, f"{name}-{self.calls}"), more_calls


def _params(spec: ToolSpec) -> ToolParams:
    props = {name: JSONSchema.model_validate(schema) for name, schema in spec.parameters["properties"].items()}
    return ToolParams(properties=props, required=list(spec.parameters.get("required", [])))


def _tool_def(episode: Episode, spec: ToolSpec, batches: ToolBatches | None) -> ToolDef:
    async def execute(**kwargs: Any) -> str:
        # Our solver steps the episode itself; a solver that runs these tools (react(), say)
        # still goes through the one loop.
        if batches is None:
            call, more_calls = ToolCallRequest(spec.name, kwargs), False
        else:
            call, more_calls = batches.next_call(spec.name, kwargs)
        try:
            [result], *_ = await episode.astep(AgentAction(tool_calls=(call,)), more_calls=more_calls)
        except EpisodeOver as e:
            raise ToolError(str(e)) from None
        if result.error:
            raise ToolError(result.text)
        return result.text

    execute.__name__ = spec.name
    # One call at a time, in the model's order, as a step runs them (and never two steps at once).
    return ToolDef(execute, name=spec.name, description=spec.description, parameters=_params(spec), parallel=False)


def episode_tools(episode: Episode, batches: ToolBatches | None = None) -> list[ToolDef]:
    """The env's tools, bound to this episode's world and user; with `batches`, the calls of one
    batch are one action (else each call is one)."""
    return [_tool_def(episode, spec, batches) for spec in episode.tool_specs()]
