"""Inspect tools generated from the core toolkit, bound to one episode (tools are defined once, in the core).

The schema, name and description come from the core `ToolSpec`. Our solver steps the
episode itself and only shows the model these schemas; run by another solver, each
call is one `Episode.step`, and a core error becomes an Inspect `ToolError`.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.tool import ToolDef, ToolError, ToolParams
from inspect_ai.util import JSONSchema

from ecom_bench.conversation import AgentAction, ToolCallRequest
from ecom_bench.episode import Episode, EpisodeOver
from ecom_bench.world.toolkit import ToolSpec


def _params(spec: ToolSpec) -> ToolParams:
    props = {name: JSONSchema.model_validate(schema) for name, schema in spec.parameters["properties"].items()}
    return ToolParams(properties=props, required=list(spec.parameters.get("required", [])))


def _tool_def(episode: Episode, spec: ToolSpec) -> ToolDef:
    async def execute(**kwargs: Any) -> str:
        # Our solver steps the episode itself; a solver that runs these tools (react(), say)
        # still goes through the one loop, one call per step.
        try:
            [result], *_ = await episode.astep(AgentAction(tool_calls=(ToolCallRequest(spec.name, kwargs),)))
        except EpisodeOver as e:
            raise ToolError(str(e)) from None
        if result.error:
            raise ToolError(result.text)
        return result.text

    execute.__name__ = spec.name
    return ToolDef(execute, name=spec.name, description=spec.description, parameters=_params(spec))


def episode_tools(episode: Episode) -> list[ToolDef]:
    """The env's tools, bound to this episode's world and user."""
    return [_tool_def(episode, spec) for spec in episode.tool_specs()]
