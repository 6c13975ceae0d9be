"""TRL's `rollout_func` over the async rollouts: whole episodes as GRPO completions, token-faithful.

TRL 1.16's `GRPOTrainer(rollout_func=...)` calls ``rollout_func(prompts, trainer)`` with this
process's slice of prompts (each already repeated ``num_generations`` times: one group per
prompt) and takes back, per prompt, ``prompt_ids``, ``completion_ids`` and ``logprobs``; any
other key reaches the reward functions, and ``env_mask`` marks the completion tokens the model
generated (1) apart from those the environment wrote (0: tool results, the customer's replies),
so only the model's tokens are trained on.

Here one prompt is one episode, played to its end against the generation server (TRL's own
``trl vllm-serve`` is vLLM's OpenAI server) by `arollout`, many at once. The sequence is
stitched from the server's own token ids: the first call's prompt, then each call's generated
tokens, and between two calls the tokens the next prompt adds (the environment's answer, as
the chat template renders it). No text is re-tokenised, so the trained tokens are exactly
those sampled, with their sampling logprobs. The stitch needs a chat template whose prompt for
a call starts with the previous prompt and completion (Qwen's and Llama's do; a template that
drops earlier reasoning does not): where one does not, the sequence ends there and the row's
``stitched`` field says so.

    rollouts = EpisodeRollouts("C1", difficulty=6, rows=512, base_url="http://localhost:8000/v1",
                               model="Qwen/Qwen3-1.7B")
    trainer = GRPOTrainer(model, reward_funcs=[episode_reward], train_dataset=rollouts.dataset(),
                          rollout_func=rollouts, args=GRPOConfig(use_vllm=True, vllm_mode="server", ...))

The dataset's prompt is each episode's real opening (system prompt and the customer's first
message), each message tagged with its episode (`EPISODE_KEY`), which is how a prompt finds its
episode again.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ecom_bench.difficulty import validate_level
from ecom_bench.envs import resolve_envs
from ecom_bench.envs.context import CatalogSpec, EnvContext, load_context
from ecom_bench.episode import new_episode
from ecom_bench.training.async_rollouts import AsyncRollout, EpisodeTrace, OpenAIChatPolicy, arollout, openai_messages
from ecom_bench.training.rollouts import PlannedEpisode

if TYPE_CHECKING:
    import datasets


#: The key that tags each prompt message with its episode ("env/d/seed/index"): chat templates
#: ignore it, and a prompt finds its episode by it (two episodes may open with the same words).
EPISODE_KEY = "episode"


class TokensMissing(ValueError):
    """The server returned no token ids or logprobs (not vLLM, or asked without them)."""


@dataclass(frozen=True)
class EpisodeTokens:
    """One episode as one training sequence."""

    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]  # the sampling logprob of each model token; 0.0 for the environment's
    env_mask: list[int]  # 1: the model generated it; 0: the environment wrote it
    stitched: bool  # False: a prompt did not extend the one before, the sequence stops there


def episode_tokens(trace: EpisodeTrace, max_completion_length: int | None = None) -> EpisodeTokens:
    """The episode's model calls stitched into one sequence (see the module docstring)."""
    if not trace.completions:
        raise TokensMissing(f"episode {trace.index} recorded no completions (a scripted policy?)")
    for c in trace.completions:
        if c.prompt_token_ids is None or c.token_ids is None or c.logprobs is None:
            raise TokensMissing("the generation server returned no token ids or logprobs: ask for them "
                                "(OpenAIChatPolicy(logprobs=True, token_ids=True); vLLM serves them)")
        if len(c.token_ids) != len(c.logprobs):
            raise TokensMissing(f"episode {trace.index}, step {c.step}: {len(c.token_ids)} token ids but "
                                f"{len(c.logprobs)} logprobs")
    prompt = list(trace.completions[0].prompt_token_ids or [])
    ids: list[int] = []
    logprobs: list[float] = []
    mask: list[int] = []
    stitched = True
    for k, c in enumerate(trace.completions):
        if k:
            full, known = c.prompt_token_ids or [], len(prompt) + len(ids)
            if full[:len(prompt)] != prompt or full[len(prompt):known] != ids:
                stitched = False
                break
            added = full[known:]
            ids += added
            logprobs += [0.0] * len(added)
            mask += [0] * len(added)
        ids += c.token_ids or []
        logprobs += c.logprobs or []
        mask += [1] * len(c.token_ids or [])
    if max_completion_length is not None:
        ids, logprobs, mask = ids[:max_completion_length], logprobs[:max_completion_length], mask[:max_completion_length]
    return EpisodeTokens(prompt, ids, logprobs, mask, stitched)


class EpisodeRollouts:
    """A `rollout_func` for TRL's `GRPOTrainer`, and the dataset whose prompts it plays.

    Args:
        envs: an environment, a collection ("C4") or a comma list; row i plays env i mod k.
        difficulty: the level d of every episode.
        rows: the dataset's size; row i is episode ``i // k`` of its env's (env, d, seed) dataset.
        seed: the dataset seed (Inspect's ``-T seed=``).
        base_url, model, api_key: the generation server (``.../v1``) and the served model; or
        policy: an `OpenAIChatPolicy` of one's own (it must ask for logprobs and token ids).
        temperature, max_tokens: sampling per model call (with base_url).
        concurrency: episodes in flight at once.
        catalog, context, strict: as for `EcomEnv`.
    """

    def __init__(self, envs: str = "C1", difficulty: int = 6, rows: int = 256, seed: int = 0, *,
                 base_url: str | None = None, model: str | None = None, api_key: str = "local",
                 policy: OpenAIChatPolicy | None = None, temperature: float | None = 1.0,
                 max_tokens: int | None = None, concurrency: int = 64, catalog: CatalogSpec | None = None,
                 context: EnvContext | None = None, strict: bool = True) -> None:
        if (policy is None) == (base_url is None or model is None):
            raise ValueError("give the generation server (base_url= and model=) or a policy=, not both")
        if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
            raise ValueError(f"rows must be an integer >= 1, got {rows!r}")
        self.names = resolve_envs(envs)
        self.level = validate_level(difficulty)
        self.rows, self.seed, self.concurrency, self.strict = rows, seed, concurrency, strict
        self._catalog, self._context = catalog, context
        if policy is None:
            from openai import AsyncOpenAI

            policy = OpenAIChatPolicy(AsyncOpenAI(base_url=base_url, api_key=api_key), str(model),
                                      temperature=temperature, max_tokens=max_tokens, logprobs=True, token_ids=True)
        self.policy = policy
        self._event_loop: asyncio.AbstractEventLoop | None = None

    @property
    def context(self) -> EnvContext:
        if self._context is None:
            self._context = load_context((self._catalog or CatalogSpec()).validate())
        return self._context

    def _planned(self) -> list[PlannedEpisode]:
        return [PlannedEpisode(i, self.names[i % len(self.names)], i // len(self.names)) for i in range(self.rows)]

    def _prompt(self, task: PlannedEpisode) -> list[dict[str, Any]]:
        episode = new_episode(task.env, self.level, self.seed, task.sample, context=self.context, strict=self.strict)
        tag = f"{task.env}/{self.level}/{self.seed}/{task.sample}"
        return [{**m, EPISODE_KEY: tag} for m in openai_messages(episode.messages)]

    def dataset(self) -> "datasets.Dataset":
        """The prompt dataset: column `prompt` (each episode's system prompt and opening, each
        message tagged with its episode under `episode`), and `env`, `difficulty`, `seed`,
        `index` (which episode it is)."""
        import datasets

        tasks = self._planned()
        return datasets.Dataset.from_dict({
            "prompt": [self._prompt(t) for t in tasks], "env": [t.env for t in tasks],
            "difficulty": [self.level] * len(tasks), "seed": [self.seed] * len(tasks),
            "index": [t.sample for t in tasks]})

    def _lookup(self, prompt: Any) -> PlannedEpisode:
        """The episode a prompt was made for, from its tag (two episodes may open alike)."""
        tag = prompt[0].get(EPISODE_KEY) if isinstance(prompt, list) and prompt and isinstance(prompt[0], dict) \
            else None
        env, level, seed, sample = (str(tag).split("/") + ["", "", "", ""])[:4]
        if env not in self.names or level != str(self.level) or seed != str(self.seed) or not sample.isdigit():
            raise ValueError(f"a prompt that is no episode of this EpisodeRollouts (tag {tag!r}; envs "
                             f"{','.join(self.names)}, d {self.level}, seed {self.seed}): train on its dataset()")
        return PlannedEpisode(0, env, int(sample))

    def traces(self, prompts: list[Any]) -> AsyncRollout:
        """Play one episode per prompt (the dataset's), all at once; their traces in prompt order."""
        found = [self._lookup(p) for p in prompts]
        plan = [PlannedEpisode(i, t.env, t.sample) for i, t in enumerate(found)]
        rollout = arollout(self.policy, len(plan), self.names, self.level, seed=self.seed,
                           concurrency=self.concurrency, context=self.context, strict=self.strict, episodes=plan)
        return asyncio.run_coroutine_threadsafe(rollout, self._loop()).result()

    def play(self, prompts: list[Any], max_completion_length: int | None = None) -> dict[str, list[Any]]:
        """Play one episode per prompt; TRL's rollout output (lists in prompt order)."""
        traces = self.traces(prompts)
        tokens = [episode_tokens(t, max_completion_length) for t in traces]
        return {
            "prompt_ids": [t.prompt_ids for t in tokens], "completion_ids": [t.completion_ids for t in tokens],
            "logprobs": [t.logprobs for t in tokens], "env_mask": [t.env_mask for t in tokens],
            "episode_reward": [t.reward for t in traces], "episode_success": [float(t.success) for t in traces],
            "end_reason": [t.end_reason for t in traces], "stitched": [t.stitched for t in tokens],
        }

    def _loop(self) -> asyncio.AbstractEventLoop:
        """The event loop every rollout of this object runs on (a daemon thread's): the policy's
        HTTP client keeps its connections on one loop, from one training step to the next, and
        a trainer that already runs a loop in its own thread is left alone."""
        if self._event_loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="ecom-rollouts", daemon=True).start()
            self._event_loop = loop
        return self._event_loop

    def close(self) -> None:
        """Stop the rollouts' event loop (a later rollout starts another)."""
        if self._event_loop is not None:
            self._event_loop.call_soon_threadsafe(self._event_loop.stop)
            self._event_loop = None

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        """TRL's ``rollout_func(prompts, trainer)``: sequences cut at the trainer's max_completion_length."""
        limit = getattr(getattr(trainer, "args", None), "max_completion_length", None)
        return self.play(prompts, limit)


def episode_reward(completions: list[Any], episode_reward: list[float], **kwargs: Any) -> list[float]:
    """A GRPO reward function: each episode's r_total in [-1, 0.9]."""
    return [float(r) for r in episode_reward]


def episode_success(completions: list[Any], episode_success: list[float], **kwargs: Any) -> list[float]:
    """A GRPO reward function: 1 when the episode succeeded, else 0."""
    return [float(s) for s in episode_success]


__all__ = ["EPISODE_KEY", "EpisodeRollouts", "EpisodeTokens", "TokensMissing", "episode_reward", "episode_success",
           "episode_tokens"]
