"""Any Inspect `Agent` as the agent under test, driven through the one episode loop.

The agent takes each of the agent's turns: it runs on an `AgentState` holding the
conversation so far and reaches the episode through `ecom_tools()` (the calls of one model
generation are one `Episode.step`, as the default solver steps them: `_tools.ToolBatches`).
When it returns, its last plain-text message goes to the customer as one `step(AgentAction(text))`,
the customer's reply is appended, and the agent runs again, until the episode ends. Once it has ended (the final-answer tool, the customer leaving,
a hard fail, a cap), the agent is stopped at its next model call.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from inspect_ai._util.registry import registry_info, registry_params
from inspect_ai.agent import Agent, AgentState, is_agent
from inspect_ai.agent._agent import agent_display_name
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolSource
from inspect_ai.util import span

from ecom_bench.conversation import AgentAction
from ecom_bench.episode import Episode
from ecom_bench.envs.context import CatalogSpec
from ecom_bench.tasks._solver import running_episode, to_customer
from ecom_bench.tasks._tools import ToolBatches, episode_tools
from ecom_bench.tasks._user import USER_SIMULATOR


#: What `ecom_tools()` is called in an agent's logged parameters.
ECOM_TOOLS = "ecom_tools"
NO_TOOLS = ("the agent under test never looks up the episode's tools: give it tools=[ecom_tools()] "
            "(from ecom_bench.tasks), e.g. react(tools=[ecom_tools()], submit=False)")


class EpisodeEnded(Exception):
    """Raised at the agent's next model call once the episode is over; it ends the agent's run."""


class AgentSetupError(ValueError):
    """The agent cannot take part in an episode as configured (no episode tools, react's submit tool)."""


@dataclass
class _AgentTurns:
    episode: Episode
    tools: list[Tool]
    batches: ToolBatches
    asked: bool = False  # the agent looked the tools up (a model call with `ecom_tools()`)


_current: ContextVar[_AgentTurns | None] = ContextVar("ecom_bench_agent_turns", default=None)


class _EpisodeTools(ToolSource):
    def __init__(self) -> None:
        # The name an agent's logged parameters show for it (`react(tools=[ecom_tools()])` logs
        # tools: ["ecom_tools"]), and what `check_agent` looks for there.
        self.__name__ = ECOM_TOOLS

    async def tools(self) -> list[Tool]:
        turns = _current.get()
        if turns is None:
            raise AgentSetupError("ecom_tools() only has tools inside an ecom_bench task run with agent=...")
        if turns.episode.done:
            raise EpisodeEnded(turns.episode.end_reason)
        turns.asked = True
        turns.batches.looked_up()
        return turns.tools


def ecom_tools() -> ToolSource:
    """The running episode's tools, for an agent under test: `react(tools=[ecom_tools()], submit=False)`.

    A tool source (Inspect resolves it at every model call), so one agent serves every sample
    and every environment of a collection: each call sees its own sample's episode.
    """
    return _EpisodeTools()


def check_agent(agent: Any) -> None:
    """Refuse, before any sample, what is no agent (`-T agent=react` is text, a plain function is no
    Inspect agent) and a react() that cannot play: without the episode's tools, or with its submit
    tool, whose 'continue' prompt answers every plain-text reply. (What another agent does with its
    tools shows only when it runs: `run_agent_turns` refuses one that never looks them up.)"""
    if not is_agent(agent):
        raise AgentSetupError(f"agent must be an Inspect Agent (made with @agent, such as react(...)), passed to "
                              f"the task function in Python (`cart(agent=react(...))`), got {agent!r}")
    if registry_info(agent).name != "inspect_ai/react":
        return
    params = registry_params(agent)
    if params.get("submit") is not False:
        raise AgentSetupError("react() as the agent under test needs submit=False: a plain-text reply is the "
                              "agent's message to the customer, and the env's final-answer tool ends the episode")
    if ECOM_TOOLS not in (params.get("tools") or []):
        raise AgentSetupError(NO_TOOLS)


def _last_text(state: AgentState) -> str:
    last = state.messages[-1] if state.messages else None
    return last.text if isinstance(last, ChatMessageAssistant) else ""


async def run_agent_turns(agent: Agent, state: TaskState, episode: Episode) -> None:
    """Run `agent` for the agent's turns of `episode`, keeping the conversation in `state.messages`.

    The agent's own system messages (react's prompt) are dropped after each turn: it adds them
    again at its next run. The env's system prompt stays the conversation's first message.
    """
    batches = ToolBatches()
    turns = _AgentTurns(episode, [t.as_tool() for t in episode_tools(episode, batches)], batches)
    token = _current.set(turns)
    ours = {m.id for m in state.messages if isinstance(m, ChatMessageSystem)}
    try:
        while not episode.done:
            agent_state = AgentState(messages=list(state.messages))
            async with span(name=agent_display_name(agent), type="agent"):
                try:
                    agent_state = await agent(agent_state)
                except EpisodeEnded:
                    pass  # agent_state holds the conversation: the agent extends it in place
                finally:
                    state.messages = [m for m in agent_state.messages
                                      if not isinstance(m, ChatMessageSystem) or m.id in ours]
                    if agent_state.output:
                        state.output = agent_state.output
            if episode.done:
                break
            if not turns.asked:
                raise AgentSetupError(NO_TOOLS)
            state.messages.extend(await to_customer(episode, AgentAction(_last_text(agent_state))))
    finally:
        _current.reset(token)


@solver
def agent_conversation(agent: Agent, strict: bool = True, catalog: CatalogSpec | None = None,
                       embedder: str = "wordllama", user: str = USER_SIMULATOR) -> Solver:
    """Run one episode with an Inspect `Agent` taking the agent's turns."""
    catalog = catalog or CatalogSpec()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        async with running_episode(state, strict, catalog, embedder, user) as (episode, _):
            await run_agent_turns(agent, state, episode)
        return state

    return solve
