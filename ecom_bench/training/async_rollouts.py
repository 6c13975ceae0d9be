"""Async batched rollouts: many episodes in flight against an OpenAI-compatible generation server.

    from openai import AsyncOpenAI
    from ecom_bench.training.async_rollouts import OpenAIChatPolicy, rollout_async

    policy = OpenAIChatPolicy(AsyncOpenAI(base_url="http://localhost:8000/v1", api_key="local"),
                              "Qwen/Qwen3-8B", logprobs=True, token_ids=True)   # token ids: vLLM only
    traces = rollout_async(policy, 256, envs="C8", difficulty=6, concurrency=64)
    traces[0].completions[0].logprobs, traces.episodes_per_second

Why it is shaped this way:

* **One event loop, many episodes.** A generation server (vLLM, SGLang) batches the requests
  it has at once, so throughput comes from keeping many conversations waiting on it, not
  from processes. Each episode is a coroutine; `concurrency` bounds how many are in flight.
  The environment's own work (world generation, tools, the customer) is plain Python on the
  loop: it is what `AsyncRollout.timings["env"]` counts, the overhead a step adds to generation.
* **The core loop, unchanged.** Episodes are `new_episode` + `Episode.astep` (the customer's
  words awaited when a model words them), so turns, budgets, the strict rule and the reward
  are the benchmark's. The plan is `rollouts.plan`'s and d is drawn from (seed, index) as the
  Ray rollouts draw it: with a fixed difficulty a deterministic policy gives the same
  per-episode results here, on Ray, and in `inspect eval` (sample ``i // k`` with ``-T seed=``).
* **The prompt is the benchmark's.** A policy sees the conversation as OpenAI chat messages in
  the form Inspect's `openai-api` provider sends (tool-call arguments as JSON strings, a
  refused tool call as ``Error: ...``), and the env's tools as OpenAI function schemas.
* **Everything the trainer needs is recorded.** Per episode: seed, sample, difficulty, env,
  messages, per model call its `Completion` (text, tool calls, finish reason, the server's raw
  answer, and logprobs / token ids when the server returns them), the reward parts and the end.

A policy is a scripted policy's name ("oracle", ...), an `OpenAIChatPolicy`, or any callable
``policy(messages, tools)`` returning (or returning an awaitable of) an action (raw model text,
an OpenAI-style assistant message, an `AgentAction`) or a `Generation` (an action with the
`Completion` it came from).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ecom_bench.agents import get_policy
from ecom_bench.conversation import AgentAction, Message, clipped_tool_error
from ecom_bench.envs.context import CatalogSpec, EnvContext, load_context
from ecom_bench.episode import Episode, new_episode
from ecom_bench.training.actions import parse_action
from ecom_bench.training.curriculum import TaskSampler
from ecom_bench.training.rollouts import PlannedEpisode, PolicyError, Rollout, RolloutError, _check_args, plan

if TYPE_CHECKING:
    from openai import AsyncOpenAI

#: How Inspect's OpenAI message conversion (and so the benchmark's prompt) writes a tool error.
TOOL_ERROR_PREFIX = "Error: "
#: vLLM's request extras for token ids: the prompt's (`prompt_token_ids`) and the completion's
#: (`choices[i].token_ids`), and logprob tokens written as ``token_id:<id>`` (what TRL asks for).
VLLM_TOKEN_IDS = {"return_token_ids": True, "return_tokens_as_token_ids": True}
#: A rollout policy: a scripted policy's name, or ``policy(messages, tools) -> action | Generation``
#: (sync or async).
AsyncPolicyLike = str | Callable[[list[dict[str, Any]], list[dict[str, Any]]], Any]


# ------------------------------------------------------------------------------ the wire form
def openai_messages(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The conversation as OpenAI chat messages, as the benchmark's `openai-api` provider sends it."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "assistant":
            message: dict[str, Any] = {"role": "assistant", "content": m.text}
            if m.tool_calls:
                message["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for c in m.tool_calls]
            out.append(message)
        elif m.role == "tool":
            text = TOOL_ERROR_PREFIX + clipped_tool_error(m.text) if m.error else m.text
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": text})
        else:
            out.append({"role": m.role, "content": m.text})
    return out


def openai_tools(episode: Episode) -> list[dict[str, Any]]:
    """The episode's tools as OpenAI function schemas."""
    return [spec.openai_schema() for spec in episode.tool_specs()]


# ------------------------------------------------------------------------------ generations
@dataclass(frozen=True)
class Completion:
    """One model call. The token fields are None when the server did not return them:
    `logprobs` needs ``logprobs=True``; `prompt_token_ids` and `token_ids` need vLLM's
    ``return_token_ids`` (`OpenAIChatPolicy(token_ids=True)`)."""

    text: str  # the assistant message's content ("" when it only called tools)
    tool_calls: list[dict[str, Any]]  # OpenAI form: {"id", "type", "function": {"name", "arguments"}}
    finish_reason: str | None
    logprobs: list[float] | None = None  # one per generated token
    token_ids: list[int] | None = None  # the generated tokens
    prompt_token_ids: list[int] | None = None  # the prompt as the server tokenised it (chat template applied)
    raw: dict[str, Any] = field(default_factory=dict)  # the server's answer, as sent
    step: int = 0  # the episode step this completion acted as (1-based; set by the rollout)
    prompt_messages: int = 0  # how many of the episode's messages its prompt held (set by the rollout)

    def action(self) -> dict[str, Any]:
        """The completion as an assistant message (what `parse_action` reads)."""
        return {"content": self.text, "tool_calls": self.tool_calls}


@dataclass(frozen=True)
class Generation:
    """What a recording policy returns: the action, and the completion it came from."""

    action: Any
    completion: Completion | None = None


def _token_id(token: str) -> int | None:
    return int(token.removeprefix("token_id:")) if token.startswith("token_id:") else None


def completion_from(raw: dict[str, Any]) -> Completion:
    """A chat completion (the server's JSON) as a `Completion` of its first choice."""
    choice = raw["choices"][0]
    message = choice.get("message") or {}
    calls = [{"id": c.get("id") or f"call-{i}", "type": "function",
              "function": {"name": (c.get("function") or {}).get("name"),
                           "arguments": (c.get("function") or {}).get("arguments") or "{}"}}
             for i, c in enumerate(message.get("tool_calls") or ())]
    content = (choice.get("logprobs") or {}).get("content")
    logprobs = [float(entry["logprob"]) for entry in content] if content is not None else None
    token_ids = choice.get("token_ids")
    if token_ids is None and content:  # return_tokens_as_token_ids alone: the ids are in the logprob tokens
        ids = [_token_id(entry.get("token", "")) for entry in content]
        token_ids = ids if all(i is not None for i in ids) else None
    prompt_ids = raw.get("prompt_token_ids", choice.get("prompt_token_ids"))
    return Completion(text=message.get("content") or "", tool_calls=calls, finish_reason=choice.get("finish_reason"),
                      logprobs=logprobs, token_ids=list(token_ids) if token_ids is not None else None,
                      prompt_token_ids=list(prompt_ids) if prompt_ids is not None else None, raw=raw)


class OpenAIChatPolicy:
    """A model behind an OpenAI-compatible chat-completions server, through the `openai` SDK's
    `AsyncOpenAI` client (vLLM: serve the model with ``--enable-auto-tool-choice
    --tool-call-parser <parser>`` so tool calls come back structured; without a parser the raw
    text, e.g. Hermes ``<tool_call>`` blocks, is parsed here).

    Args:
        client: the `AsyncOpenAI` client (its base_url is the server's ``.../v1``).
        model: the served model's name.
        temperature, max_tokens: sampling (None: the server's defaults).
        logprobs: ask for each generated token's logprob.
        token_ids: ask for the prompt's and the completion's token ids (vLLM's extras
            ``return_token_ids`` / ``return_tokens_as_token_ids``; other servers may refuse them).
        extra_body: more request fields for the server (``{"top_k": 20}``, a chat template's kwargs).
    """

    def __init__(self, client: "AsyncOpenAI", model: str, *, temperature: float | None = None,
                 max_tokens: int | None = None, logprobs: bool = False, token_ids: bool = False,
                 extra_body: dict[str, Any] | None = None) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be the served model's name, got {model!r}")
        self.client, self.model = client, model
        self.temperature, self.max_tokens = temperature, max_tokens
        self.logprobs = logprobs
        self.extra_body = {**(VLLM_TOKEN_IDS if token_ids else {}), **(extra_body or {})}

    async def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Generation:
        request: dict[str, Any] = {"model": self.model, "messages": messages, "tools": tools}
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
        if self.logprobs:
            request["logprobs"] = True
        request.update(self.extra_body)
        # The client's own request path (base URL, key, retries, errors), without its typed layer:
        # it walks every nested message of the request and builds typed objects for every logprob
        # of the answer, which cost more than the rest of a step; the server's extras (vLLM's token
        # ids) are read as sent.
        raw = await self.client.post("/chat/completions", body=request, cast_to=object)
        if not isinstance(raw, dict) or not raw.get("choices"):
            raise ValueError(f"the server's answer is no chat completion: {str(raw)[:200]}")
        completion = completion_from(raw)
        return Generation(completion.action(), completion)


# ------------------------------------------------------------------------------ the records
@dataclass
class EpisodeTrace:
    """One finished episode, with every model call that played it."""

    index: int  # position in the rollout, 0..n-1
    env: str
    difficulty: int
    seed: int  # dataset seed (Inspect's -T seed=)
    sample: int  # sample index in that env's dataset
    success: bool
    reward: float  # r_total in [-1, 0.9]
    reward_parts: dict[str, float]  # task, efficiency, hallucination, total, success
    turns: int
    steps: int  # actions taken (model calls)
    end_reason: str  # an `EndReason` value
    end_detail: str  # the end in words
    messages: list[dict[str, Any]]  # the whole conversation, OpenAI form
    completions: list[Completion]  # one per step when the policy records them, else empty
    env_seconds: float = 0.0  # time in the environment (world, tools, customer, conversions)
    policy_seconds: float = 0.0  # time waiting for the policy (generation)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class AsyncRollout(Rollout[EpisodeTrace]):
    """The `EpisodeTrace`s of one rollout in episode order, plus `curriculum` (the adaptive one,
    updated; None for a fixed difficulty) and `timings`: ``context`` (catalogue load, once),
    ``episodes`` (wall time of the episodes), ``env`` (summed time in the environment)."""

    @property
    def steps(self) -> int:
        return sum(t.steps for t in self)

    @property
    def env_ms_per_step(self) -> float:
        """The environment's own time per step (generation excluded): the overhead it adds."""
        return 1000 * self.timings.get("env", 0.0) / self.steps if self.steps else float("nan")


# ------------------------------------------------------------------------------ the driver
async def _generate(policy: AsyncPolicyLike, episode: Episode, where: str) -> tuple[AgentAction, Completion | None]:
    if isinstance(policy, str):
        scripted = get_policy(episode.env.name, policy)
        hidden = episode.problem.hidden_state() if scripted.reads_hidden_goal else None
        return scripted.act(episode.messages, hidden, episode.status()), None
    try:
        out = policy(openai_messages(episode.messages), openai_tools(episode))
        if inspect.isawaitable(out):
            out = await out
    except Exception as e:  # the user's code or the server: reported by episode and step
        raise PolicyError(f"the policy raised {type(e).__name__}: {e} at {where}") from e
    completion = out.completion if isinstance(out, Generation) else None
    try:
        return parse_action(out.action if isinstance(out, Generation) else out), completion
    except TypeError as e:
        raise PolicyError(f"the policy returned no action at {where}: {e}") from None


async def play_episode(policy: AsyncPolicyLike, task: PlannedEpisode, seed: int, sampler: TaskSampler,
                       context: EnvContext, strict: bool = True) -> EpisodeTrace:
    """Play one planned episode to its end (d drawn from (seed, index), as the Ray workers draw it)."""
    clock = time.perf_counter()
    _, level = sampler.sample(np.random.default_rng([seed, task.index]))
    episode = new_episode(task.env, level, seed, task.sample, context=context, strict=strict)
    await episode.aopen()
    env_s, policy_s = time.perf_counter() - clock, 0.0
    completions: list[Completion] = []
    info: dict[str, Any] = {}
    done = False
    while not done:
        where = f"episode {task.index} (env {task.env}, d {level}, sample {task.sample}), step {episode.steps + 1}"
        prompt_messages = len(episode.messages)
        clock = time.perf_counter()
        action, completion = await _generate(policy, episode, where)
        now = time.perf_counter()
        policy_s += now - clock
        if completion is not None:
            completions.append(_placed(completion, episode.steps + 1, prompt_messages))
        _, _, terminated, truncated, info = await episode.astep(action)
        done = terminated or truncated
        env_s += time.perf_counter() - now
    clock = time.perf_counter()
    sampler.record(task.env, level, bool(info["success"]))
    result = episode.result()
    trace = EpisodeTrace(
        index=task.index, env=task.env, difficulty=level, seed=seed, sample=task.sample,
        success=bool(info["success"]), reward=float(result.reward.total), reward_parts=dict(info["reward_parts"]),
        turns=result.turns, steps=episode.steps, end_reason=info["end_reason"], end_detail=info["end_detail"],
        messages=openai_messages(episode.messages), completions=completions, policy_seconds=policy_s)
    trace.env_seconds = env_s + time.perf_counter() - clock
    return trace


def _placed(completion: Completion, step: int, prompt_messages: int) -> Completion:
    return replace(completion, step=step, prompt_messages=prompt_messages)


async def arollout(policy: AsyncPolicyLike, n: int, envs: str | Iterable[str] = "cart",
                   difficulty: int | str | None = None, curriculum: Any = None, seed: int = 0, *,
                   concurrency: int = 32, catalog: CatalogSpec | None = None, context: EnvContext | None = None,
                   strict: bool = True, episodes: list[PlannedEpisode] | None = None) -> AsyncRollout:
    """Play `n` planned episodes on this event loop, at most `concurrency` at once.

    Args are `rollouts.rollout`'s (policy, n, envs, difficulty, curriculum, seed, catalog,
    strict), plus: `concurrency` (episodes in flight: enough to keep the generation server's
    batch full), `context` (an already-loaded catalogue context, shared), `episodes` (the
    plan to play instead of ``plan(n, envs, seed)``; `n` must be its length).

    Raises `PolicyError` (naming the episode and step) when the policy or the server fails;
    the episodes still in flight are cancelled.
    """
    names, level, curriculum = _check_args(policy, n, envs, difficulty, curriculum, 0, seed)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be an integer >= 1, got {concurrency!r}")
    tasks = plan(n, names, seed) if episodes is None else list(episodes)
    if len(tasks) != n:
        raise ValueError(f"episodes holds {len(tasks)} planned episodes, n is {n}")
    clock = time.perf_counter()
    if context is None:
        context = load_context((catalog or CatalogSpec()).validate())
    loaded = time.perf_counter() - clock
    slots = asyncio.Semaphore(concurrency)
    samplers = {env: TaskSampler(env, level, curriculum) for env in names}

    async def one(task: PlannedEpisode) -> EpisodeTrace:
        async with slots:
            return await play_episode(policy, task, seed, samplers[task.env], context, strict)

    clock = time.perf_counter()
    running = [asyncio.ensure_future(one(t)) for t in tasks]
    try:
        traces = await asyncio.gather(*running)
    except BaseException:
        for future in running:
            future.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        raise
    timings = {"context": loaded, "episodes": time.perf_counter() - clock, "env": sum(t.env_seconds for t in traces)}
    return AsyncRollout(sorted(traces, key=lambda t: t.index), curriculum if level == "adaptive" else None, timings)


def rollout_async(policy: AsyncPolicyLike, n: int, envs: str | Iterable[str] = "cart",
                  difficulty: int | str | None = None, curriculum: Any = None, seed: int = 0,
                  **options: Any) -> AsyncRollout:
    """`arollout` from synchronous code (its own event loop; inside a running loop, await `arollout`)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(arollout(policy, n, envs, difficulty, curriculum, seed, **options))
    raise RolloutError("rollout_async() was called inside a running event loop: await arollout(...) instead")


__all__ = ["TOOL_ERROR_PREFIX", "VLLM_TOKEN_IDS", "AsyncPolicyLike", "AsyncRollout", "Completion", "EpisodeTrace",
           "Generation", "OpenAIChatPolicy", "arollout", "completion_from", "openai_messages", "openai_tools",
           "play_episode", "rollout_async"]
