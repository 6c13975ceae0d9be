"""Turn the core toolkit's specs into Inspect `ToolDef`s bound to one episode.

The schema, name and description come from the core `ToolSpec`; the function just
forwards to `Episode.call_tool`, and a core error becomes an Inspect `ToolError` the
model reads in the transcript.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.tool import ToolDef, ToolError, ToolParams
from inspect_ai.util import JSONSchema

from ecom_bench.episode import Episode
from ecom_bench.world.toolkit import ToolSpec


def _params(spec: ToolSpec) -> ToolParams:
    props = {name: JSONSchema.model_validate(schema) for name, schema in spec.parameters["properties"].items()}
    return ToolParams(properties=props, required=list(spec.parameters.get("required", [])))


def _tool_def(episode: Episode, spec: ToolSpec) -> ToolDef:
    async def execute(**kwargs: Any) -> str:
        outcome = episode.call_tool(spec.name, kwargs)
        if outcome.error:
            raise ToolError(outcome.text)
        return outcome.text

    execute.__name__ = spec.name
    return ToolDef(execute, name=spec.name, description=spec.description, parameters=_params(spec))


def episode_tools(episode: Episode) -> list[ToolDef]:
    """The env's tools, bound to this episode's world and user."""
    return [_tool_def(episode, spec) for spec in episode.tool_specs()]
