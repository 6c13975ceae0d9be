"""The conversation solver: the model under test talks to the simulated customer.

A thin adapter over the core loop rather than `react()`: each model generation becomes
one `AgentAction` for `Episode.step`, and the step's observation (tool results, the
customer's reply) becomes Inspect messages. Turn counting, the per-turn tool budget,
the customer's patience, hard fails and the safety cap are the core's, identical to
the training env's. With `agent=`, an Inspect agent takes the agent's turns instead
(`_agent.py`), through the same loop.

The solver keeps Inspect's own message list (`state.messages`) beside the episode's
transcript (`Episode.messages`, the same conversation in the core's form, which the
scripted models read): the model's input must be Inspect messages, the model's own
generations carry what only Inspect holds (content blocks, reasoning, the model's name and
call ids), and the log, the viewer and Inspect's message limits read `state.messages`.
Only the step's observation is converted, once, as it arrives.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolCallError
from inspect_ai.util import span, store_as

from ecom_bench.conversation import AgentAction, Message, ToolCallRequest
from ecom_bench.conversation import clipped_tool_error as _clipped
from ecom_bench.envs.context import CatalogSpec, load_context
from ecom_bench.episode import Episode, new_episode
from ecom_bench.scorers._store import EpisodeStore, LiveSample, live_sample, write_episode
from ecom_bench.tasks import _prebuilt
from ecom_bench.tasks._tools import episode_tools
from ecom_bench.tasks._user import USER_SIMULATOR, check_user_role, customer_phraser
from ecom_bench.users.phrasing import Phraser

def to_action(message: ChatMessageAssistant) -> AgentAction:
    """The model's generation as a core action (a call Inspect could not parse keeps its error)."""
    calls = tuple(ToolCallRequest(c.function, c.arguments, c.id, c.parse_error) for c in message.tool_calls or ())
    return AgentAction(message.text, calls)


def to_inspect(observation: list[Message], episode: Episode) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for m in observation:
        if m.role == "tool":
            error = ToolCallError("parsing" if m.invalid else "unknown", _clipped(m.text)) if m.error else None
            out.append(ChatMessageTool(content="" if error else m.text, tool_call_id=m.tool_call_id,
                                       function=m.tool_name, error=error))
        else:
            out.append(ChatMessageUser(content=m.text, metadata={"act": episode.user_messages[-1].act.value}))
    return out


def sample_episode(metadata: dict, strict: bool, catalog: CatalogSpec, embedder: str,
                   phraser: Phraser | None = None) -> Episode:
    """The episode the dataset builder made for this sample (rebuilt from its seed if gone, or
    when a `phraser` words the customer: the builder's has said its opening in the templates)."""
    episode = _prebuilt.take(_prebuilt.key(metadata, catalog, embedder, strict))
    if episode is not None and phraser is None:
        return episode
    return new_episode(metadata["env"], metadata["difficulty"], metadata["seed"], metadata["index"],
                       context=load_context(catalog, embedder), strict=strict, phraser=phraser)


@contextlib.asynccontextmanager
async def running_episode(state: TaskState, strict: bool, catalog: CatalogSpec, embedder: str,
                          user: str = USER_SIMULATOR) -> AsyncIterator[tuple[Episode, dict]]:
    """The sample's episode, live for its solver; its outcome is written to the store at the end."""
    check_user_role(user)
    episode = sample_episode(state.metadata, strict, catalog, embedder, customer_phraser(user))
    hidden = episode.problem.hidden_state()
    store_as(EpisodeStore)  # binds the store: every field in it from the start, as the viewer shows it
    # The hidden goal enters the store only when the episode is over: an agent under test
    # (`agent=`) runs in this sample and can read its store.
    write_episode(state.store, env=episode.env.name, difficulty=episode.difficulty.level)
    state.messages = [ChatMessageSystem(content=episode.system_prompt()),
                      ChatMessageUser(content=await episode.aopen(), metadata={"act": "opening"})]
    live = live_sample.set(LiveSample(episode, hidden))
    try:
        yield episode, hidden
    finally:
        live_sample.reset(live)
        # The store is written once at the end (each write re-validates the whole store
        # and is a logged change): the scorers read it, the viewer shows it.
        outcome = episode.result()
        write_episode(state.store, hidden=hidden, turns=outcome.turns, user_acts=outcome.user_acts,
                      status=episode.status().to_dict(), outcome=outcome.to_dict())


async def to_customer(episode: Episode, action: AgentAction) -> list[ChatMessage]:
    """The agent's message to the customer as one step; the customer's reply as Inspect messages."""
    async with span("simulated_user", type="user"):
        observation, *_ = await episode.astep(action)
        if observation:
            reply = episode.user_messages[-1]
            transcript().info({"user_act": reply.act.value, "revealed": list(reply.revealed)})
    return to_inspect(observation, episode)


@solver
def customer_conversation(strict: bool = True, catalog: CatalogSpec | None = None,
                          embedder: str = "wordllama", user: str = USER_SIMULATOR) -> Solver:
    """Run one episode: system prompt + opening, then agent actions until the episode ends."""
    catalog = catalog or CatalogSpec()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        async with running_episode(state, strict, catalog, embedder, user) as (episode, _):
            # The schemas the model sees; calls run through `Episode.step`, not through these.
            # Handed to generate as ToolDefs, and not put in `state.tools`: nothing here reads
            # them there, every model event logs them already, and Inspect would re-parse them
            # from the Tools it keeps there and diff them into the solver's state event (~10% of
            # a scripted sample's Python work; tests/test_inspect_overhead_tools.py).
            tools = episode_tools(episode)
            model = get_model()
            while not episode.done:
                state.output = await model.generate(state.messages, tools)
                message = state.output.message
                state.messages.append(message)
                action = to_action(message)
                if action.tool_calls:
                    observation, *_ = await episode.astep(action)
                    state.messages.extend(to_inspect(observation, episode))
                else:
                    state.messages.extend(await to_customer(episode, action))
        return state

    return solve

