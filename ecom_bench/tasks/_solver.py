"""The conversation solver: the model under test talks to the simulated user.

A small loop of our own rather than `react()`: every step goes through the core
`Episode`, which owns turn counting, the per-turn tool budget, the user's patience
and the hard-fail rule, so evaluation and training count the same way. Plain
assistant replies go to the simulated user; tool calls run against the world.
"""

from __future__ import annotations

from dataclasses import replace

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    execute_tools,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span, store_as

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs import get_env
from ecom_bench.envs.context import CatalogSpec, load_context
from ecom_bench.episode import Episode
from ecom_bench.scorers._store import EpisodeStore
from ecom_bench.tools import episode_tools

#: Model generations allowed per episode before it is stopped (a safety net: the
#: episode's own budgets normally end it far earlier).
MAX_GENERATIONS_PER_TURN = 12
#: Longest tool error the model reads back. Inspect's schema errors quote the offending
#: value (a 1 MB argument comes back as a 1 MB error); our own tool errors are far shorter.
MAX_TOOL_ERROR_CHARS = 2000


def _bounded(message: ChatMessage) -> ChatMessage:
    """The tool message with its error clipped to MAX_TOOL_ERROR_CHARS."""
    if isinstance(message, ChatMessageTool) and message.error and len(message.error.message) > MAX_TOOL_ERROR_CHARS:
        text = message.error.message
        clipped = f"{text[:MAX_TOOL_ERROR_CHARS]}... (error clipped, {len(text)} characters)"
        return message.model_copy(update={"error": replace(message.error, message=clipped)})
    return message


def build_episode(metadata: dict, strict: bool, catalog: CatalogSpec, embedder: str) -> Episode:
    env = get_env(metadata["env"])
    context = load_context(catalog, embedder)
    problem = env.generate(context, metadata["episode_seed"], Difficulty.from_level(metadata["difficulty"]))
    return Episode(env, problem, strict=strict)


@solver
def customer_conversation(strict: bool = True, catalog: CatalogSpec | None = None,
                          embedder: str = "wordllama") -> Solver:
    """Run one episode: system prompt + opening, then agent turns until the episode ends."""
    catalog = catalog or CatalogSpec()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        episode = build_episode(state.metadata, strict, catalog, embedder)
        info = store_as(EpisodeStore)
        info.env = episode.env.name
        info.difficulty = episode.difficulty.level
        info.hidden = episode.problem.hidden_state()
        tools = episode_tools(episode)
        state.tools = tools
        state.messages = [ChatMessageSystem(content=episode.system_prompt()),
                          ChatMessageUser(content=episode.opening, metadata={"act": "opening"})]
        model = get_model()
        generations = 0
        max_generations = MAX_GENERATIONS_PER_TURN * (episode.difficulty.max_turns + 1)
        try:
            while not episode.done:
                if generations >= max_generations:
                    episode.abort("stopped: too many model generations")
                    break
                generations += 1
                state.output = await model.generate(state.messages, tools)
                message = state.output.message
                state.messages.append(message)
                if message.tool_calls:
                    # One call at a time, in order, as the core front runs them: an invalid
                    # call ends a strict episode before the next call (even a final answer) runs.
                    before = state.messages[:-1]
                    for call in message.tool_calls:
                        single = message.model_copy(update={"tool_calls": [call]})
                        result = await execute_tools([*before, single], tools)
                        messages = [_bounded(m) for m in result.messages]
                        state.messages.extend(messages)
                        for m in messages:
                            # Inspect rejects unparseable calls, unknown tools and schema
                            # failures before our tool runs: report them to the episode.
                            if isinstance(m, ChatMessageTool) and m.error and m.error.type == "parsing":
                                episode.invalid_output(f"{m.function}: {m.error.message}")
                    continue
                async with span("simulated_user", type="user"):
                    reply = episode.agent_message(message.text)
                    if reply is not None:
                        state.messages.append(ChatMessageUser(content=reply.text,
                                                              metadata={"act": reply.act.value}))
                        transcript().info({"user_act": reply.act.value, "revealed": list(reply.revealed)})
                info.turns = episode.turns
        finally:
            outcome = episode.result()
            info.turns = outcome.turns
            info.user_acts = outcome.user_acts
            info.outcome = outcome.to_dict()
        return state

    return solve
