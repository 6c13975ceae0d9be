"""`EcomEnv`: the environments as a gymnasium env for text agents.

A thin front over the core loop (`ecom_bench.episode`): `reset` builds one episode's world
once; `step` parses the agent's action (raw model text or an OpenAI-style message, see
`ecom_bench.training.actions`) and hands it to `Episode.step`, the same loop the Inspect
solver drives. Reward is 0 until the episode ends, then r_total in [-1, 0.9]; `info`
carries `success` (what the curriculum and pass^k count), the reward parts, the turn,
calls left this turn and patience left.

Every observation holds the whole conversation in chat-template form (``messages``, ``tools``);
a step's also holds what it added (``new_messages``) and the agent's action as the env read it
(``assistant``). The env keeps each raw completion as produced, so a trainer can render the
next prompt as an exact extension of the last (`ecom_bench.training.prompts`).

    env = EcomEnv()            # or gymnasium.make("ecom_bench/cart-v0") once ecom_bench.training is imported
    obs, info = env.reset(seed=0, options={"env": "cart", "difficulty": 6})
    obs, reward, terminated, truncated, info = env.step('<tool_call>{"name": ...}</tool_call>')
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

import gymnasium as gym

from ecom_bench.agents import get_policy
from ecom_bench.conversation import AgentAction, Message, Policy, ToolCallRequest
from ecom_bench.envs import COLLECTIONS
from ecom_bench.envs.context import CatalogSpec, EnvContext, load_context
from ecom_bench.episode import Episode, EpisodeOver, new_episode
from ecom_bench.rewards import EFFICIENCY_WEIGHT, FAILURE_SCORE, TASK_WEIGHT
from ecom_bench.training.actions import Action, Completion, chat_message, default_call_ids, read_action, strip_end_of_turn
from ecom_bench.training.curriculum import AdaptiveCurriculum, TaskSampler
from ecom_bench.users.llm import Generate, LLMPhraser
from ecom_bench.users.phrasing import Phraser

#: The largest dataset seed a reset draws (Inspect's `-T seed=` takes the same values).
MAX_SEED = 2**31 - 1
#: The rewards an episode can pay: -1 (a hard fail) up to 0.90 (solved, no turn wasted; the
#: hallucination part is never above 0).
REWARD_RANGE = (FAILURE_SCORE, TASK_WEIGHT + EFFICIENCY_WEIGHT)


class ChatSpace(gym.spaces.Space):
    """Observations: ``{"messages": [chat messages], ...}`` (OpenAI / HF chat-template dicts)."""

    def __init__(self) -> None:
        super().__init__(shape=None, dtype=None)

    def contains(self, x: Any) -> bool:
        return isinstance(x, dict) and isinstance(x.get("messages"), list) and all(
            isinstance(m, dict) and isinstance(m.get("role"), str) for m in x["messages"])

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        return {"messages": [{"role": "user", "content": "Hi, I need some help with an order."}]}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


class ActionSpace(gym.spaces.Space):
    """Actions: raw model text, an OpenAI-style assistant message, or an `AgentAction`."""

    def __init__(self) -> None:
        super().__init__(shape=None, dtype=None)

    def contains(self, x: Any) -> bool:
        return isinstance(x, (str, AgentAction)) or (isinstance(x, dict) and ("content" in x or "tool_calls" in x))

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        replies = ("Could you tell me a bit more about what you need?", "Let me check that for you.",
                   "Is there anything else I can help with?")
        return replies[int(self.np_random.integers(len(replies)))]

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


def _check_user(user: str, customer_model: Generate | None, phraser: Phraser | None) -> None:
    if user not in ("template", "llm"):
        raise ValueError(f"user must be 'template' or 'llm', got {user!r}")
    if customer_model is not None and phraser is not None:
        raise ValueError("give the customer's model (customer_model=) or a phraser (phraser=), not both")
    if user == "llm" and customer_model is None and phraser is None:
        raise ValueError("user='llm' needs the customer's model: customer_model=<callable: chat messages -> text> "
                         "(or phraser=<a Phraser>)")
    if user == "template" and (customer_model is not None or phraser is not None):
        raise ValueError("customer_model= and phraser= word the customer with a model: pass user='llm' too")
    if customer_model is not None and not callable(customer_model):
        raise TypeError(f"customer_model must be a callable (chat messages -> text), got "
                        f"{type(customer_model).__name__}")


def _model_id(model: Generate) -> str:
    """The name a callable goes by in cache keys."""
    return str(getattr(model, "model_id", None) or getattr(model, "__qualname__", None) or type(model).__qualname__)


def chat(m: Message, completion: Completion | None = None, *, verbatim: bool = False) -> dict[str, Any]:
    """A core message as a chat-template message. An assistant message is the action as read
    (its text, reasoning and tool calls) or, `verbatim`, the raw completion as its content."""
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "name": m.tool_name, "content": m.text}
    if m.role == "assistant":
        if verbatim and completion is not None and completion.raw is not None:
            return {"role": "assistant", "content": strip_end_of_turn(completion.raw)}
        return chat_message(AgentAction(m.text, m.tool_calls), completion.reasoning if completion else None)
    return {"role": m.role, "content": m.text}


class EcomEnv(gym.Env):
    """One customer-service episode per `reset`, over any environment or collection.

    Args:
        env: an environment ("cart"), a collection ("C4") or a comma list; a collection draws
            its env uniformly at each reset.
        difficulty: a level d >= 0, or "adaptive" to draw it from `curriculum`.
        curriculum: the curriculum for "adaptive" (default: a fresh `AdaptiveCurriculum()`);
            anything with `window(env)` and `record(env, d, success)` works (a shared one on Ray).
        catalog: how the catalogue is built (default: the embedded synthetic one).
        context: an already-loaded catalogue context (shared between envs in one process).
        strict: the published rule (an invalid call or unparseable output is a hard fail).
        user: who words the customer: "template" (the published words) or "llm" (a model,
            behind the guards of `users.llm`; `info["guards"]` counts what they did).
        customer_model: with user="llm", the customer's model: a callable (sync or async) from
            chat messages to text; each episode gets a fresh `LLMPhraser` over it.
        phraser: with user="llm", a `Phraser` of one's own instead (used for every episode).
        customer_cache: the `LLMPhraser`s' cache (a dict, a `users.llm.FileCache`), shared by
            every episode: the same prompt to the same model is answered without a call.
        max_steps: end an episode after this many steps, scored as it stands (truncated), as the
            env's own step cap does. (A `TimeLimit` wrapper, `gymnasium.make(max_episode_steps=)`,
            cuts from outside: the cut step pays 0, and the next `reset` scores the episode, −1
            with no answer, in its ``info["abandoned"]``.)

    `reset(seed=..., options=...)` takes `options` {"env", "difficulty", "index"} to override
    these for one episode; with `index` (and `seed`) the episode is exactly sample `index` of
    the Inspect task with `-T seed=<seed>`.
    """

    metadata = {"render_modes": ["ansi"]}
    reward_range = REWARD_RANGE

    def __init__(self, env: str = "cart", difficulty: int | str = 0, *,
                 curriculum: AdaptiveCurriculum | Any | None = None, catalog: CatalogSpec | None = None,
                 context: EnvContext | None = None, strict: bool = True, render_mode: str | None = None,
                 user: str = "template", customer_model: Generate | None = None, phraser: Phraser | None = None,
                 customer_cache: MutableMapping[str, str] | None = None, max_steps: int | None = None) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if max_steps is not None and (isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1):
            raise ValueError(f"max_steps must be an integer >= 1 or None, got {max_steps!r}")
        self.max_steps = max_steps
        _check_user(user, customer_model, phraser)
        self._customer_model = customer_model
        self._phraser = phraser
        self._customer_cache = customer_cache
        self.render_mode = render_mode
        self.sampler = TaskSampler(env, difficulty, curriculum)
        self.strict = strict
        self._catalog = (catalog or CatalogSpec()).validate()
        self._context = context
        self.observation_space = ChatSpace()
        self.action_space = ActionSpace()
        self.episode: Episode | None = None
        self._recorded = False
        self._last_abandoned: dict[str, Any] | None = None
        self._completions: list[Completion] = []  # one per assistant message, in order
        self._call_ids: Iterator[str] = default_call_ids()
        self._used_ids: set[str] = set()

    # ------------------------------------------------------------------ gymnasium
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        self._abandon()
        options = dict(options or {})
        unknown = set(options) - {"env", "difficulty", "index"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; options: env, difficulty, index")
        sampler = self.sampler
        if options.get("difficulty") == "adaptive" and self.sampler.curriculum is None:
            # a curriculum made here would belong to this one episode: nothing would learn from it
            raise ValueError(f"difficulty 'adaptive' needs a curriculum: this env plays a fixed difficulty "
                             f"({self.sampler.difficulty}); make it with difficulty='adaptive'")
        if "env" in options or "difficulty" in options:
            sampler = TaskSampler(options.get("env", ",".join(self.sampler.names)),
                                  options.get("difficulty", self.sampler.difficulty), self.sampler.curriculum)
        env_name, level = sampler.sample(self.np_random)
        if "index" in options:
            index = options["index"]
            if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                raise ValueError(f"index must be an integer >= 0, got {index!r}")
            dataset_seed = 0 if seed is None else seed
        else:
            dataset_seed, index = int(self.np_random.integers(MAX_SEED)), 0
        self._active_sampler = sampler
        abandoned = self._last_abandoned
        self.episode = new_episode(env_name, level, dataset_seed, index, context=self.context, strict=self.strict,
                                   phraser=self._episode_phraser())
        self._recorded = False
        self._completions, self._call_ids, self._used_ids = [], default_call_ids(), set()
        messages = self.messages()
        observation = {"messages": messages, "new_messages": list(messages), "tools": self.tools}
        info = {**self.episode.info(), "seed": dataset_seed, "index": index}
        if abandoned is not None:
            info["abandoned"] = abandoned
        return observation, info

    def step(self, action: Action) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """One agent action. The observation: ``messages`` (the whole conversation, this action
        included), ``new_messages`` (the tool results or the customer's reply it produced),
        ``assistant`` (the action as read: text, reasoning, tool calls with their ids) and ``tools``."""
        episode = self.episode
        if episode is None:
            raise EpisodeOver("call reset() before step()")
        if episode.done:
            raise EpisodeOver(f"the episode has ended ({episode.end.value if episode.end else 'done'}); "
                              "reset to start another")
        completion = self._unique_ids(read_action(action, self._call_ids))
        self._completions.append(completion)
        new, reward, terminated, truncated, info = episode.step(completion.action)
        if not episode.done and self.max_steps is not None and episode.steps >= self.max_steps:
            # scored as the env's own step cap scores it: as it stands, truncated
            episode.abort(f"stopped: the limit of {self.max_steps} steps")
            reward, truncated, info = episode.result().reward.total, True, episode.info()
        if terminated or truncated:
            info["hard_fail_cause"] = _hard_fail_cause(info)
            if not self._recorded:
                self._recorded = True
                self._active_sampler.record(episode.env.name, episode.difficulty.level, info["success"])
        messages = self.messages()
        observation = {"messages": messages, "new_messages": [chat(m) for m in new],
                       "assistant": messages[-len(new) - 1], "tools": self.tools}
        return observation, reward, terminated, truncated, info

    def _unique_ids(self, completion: Completion) -> Completion:
        """Tool-call ids unique in the episode: one the model gave twice is replaced by a fresh one."""
        calls = []
        for call in completion.action.tool_calls:
            while call.id in self._used_ids:
                call = ToolCallRequest(call.name, call.arguments, next(self._call_ids), call.parse_error)
            self._used_ids.add(call.id)
            calls.append(call)
        if tuple(calls) == completion.action.tool_calls:
            return completion
        return Completion(completion.raw, completion.reasoning, AgentAction(completion.action.text, tuple(calls)))

    def close(self) -> None:
        self._abandon()
        super().close()

    def _abandon(self) -> None:
        """An episode left before its end (a `TimeLimit` wrapper, a trainer's own cap) still counts:
        it is ended as aborted and recorded as a failure, or a policy that stalls whenever it is
        unsure would be promoted on the episodes it happened to finish. Its score is kept for the
        next reset's ``info["abandoned"]``."""
        self._last_abandoned = None
        if self.episode is not None and not self._recorded and self.episode.steps:
            self.episode.abort("reset before the episode ended")
            self._recorded = True
            self._active_sampler.record(self.episode.env.name, self.episode.difficulty.level,
                                        self.episode.result().reward.success)
            info = self.episode.info()
            self._last_abandoned = {"env": info["env"], "difficulty": info["difficulty"], "reward": info["reward_parts"]["total"],
                                    "reward_parts": info["reward_parts"], "hard_fail_cause": _hard_fail_cause(info),
                                    "end_detail": info["end_detail"]}

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        lines = []
        for m in self.transcript[1:]:
            calls = "".join(f"\n  -> {c.name}({c.arguments})" for c in m.tool_calls)
            lines.append(f"[{m.role}{':' + m.tool_name if m.tool_name else ''}] {m.text}{calls}")
        return "\n".join(lines)

    def _episode_phraser(self) -> Phraser | None:
        if self._customer_model is not None:
            return LLMPhraser(self._customer_model, model_id=_model_id(self._customer_model),
                              cache=self._customer_cache)
        return self._phraser

    # ------------------------------------------------------------------ for trainers
    @property
    def context(self) -> EnvContext:
        if self._context is None:
            self._context = load_context(self._catalog)
        return self._context

    @property
    def curriculum(self) -> Any:
        return self.sampler.curriculum

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The current episode's tools in OpenAI function format (what `apply_chat_template(tools=)` takes)."""
        if self.episode is None:
            return []
        return [spec.openai_schema() for spec in self.episode.tool_specs()]

    def messages(self, verbatim: bool = False) -> list[dict[str, Any]]:
        """The conversation so far as chat messages (system, customer, assistant, tool results),
        ready for `tokenizer.apply_chat_template(env.messages(), tools=env.tools)`.

        An assistant message is the action as read: ``content`` (the message, or the text around
        its calls), ``reasoning_content`` (its ``<think>`` text, if any) and ``tool_calls``
        (arguments as objects). With `verbatim`, an action given as raw text is instead that text
        as produced, as ``content`` (end-of-turn token dropped): what a template that renders
        content as is (Qwen2.5, Hermes) turns back into the model's own tokens. Re-rendering a
        whole history is not how a trainer keeps tokens faithful, though: templates drop or
        re-serialise earlier turns (Qwen3 drops their reasoning); see `completions` and
        `ecom_bench.training.prompts`."""
        completions = iter(self._completions)
        return [chat(m, next(completions, None) if m.role == "assistant" else None, verbatim=verbatim)
                for m in self.transcript]

    @property
    def completions(self) -> list[Completion]:
        """The agent's outputs this episode, one per step: the raw text as produced (None for a
        structured action), its reasoning, and the action it was read as."""
        return list(self._completions)

    @property
    def transcript(self) -> list[Message]:
        """The conversation as core messages (what scripted policies read): the episode's
        `Episode.messages`, copied."""
        return list(self.episode.messages) if self.episode is not None else []

    def scripted_action(self, policy: str | Policy) -> AgentAction:
        """The next action of a scripted policy ("oracle", "heuristic", ...) in this episode.

        The oracle reads the hidden goal; every other policy sees what a model sees.
        """
        if self.episode is None:
            raise EpisodeOver("call reset() before asking for an action")
        if isinstance(policy, str):
            policy = get_policy(self.episode.env.name, policy)
        hidden = self.episode.problem.hidden_state() if policy.reads_hidden_goal else None
        return policy.act(self.episode.messages, hidden, self.episode.status())


def _hard_fail_cause(info: dict[str, Any]) -> str | None:
    """Why an ended episode scored the hard-fail −1: "invalid_output" or "invalid_tool_call" (the
    agent's output could not be used) or "no_answer" (it ended, by a quit, a stall or a cap,
    with no final answer); None when it did not."""
    if not info.get("hard_fail"):
        return None
    return info["end_reason"] if info.get("end_reason") in ("invalid_output", "invalid_tool_call") else "no_answer"


def register_envs() -> list[str]:
    """Register ``ecom_bench/<env>-v0`` (the eight environments) and ``ecom_bench/<C1..C8>-v0``
    (the collections) with gymnasium, so ``gymnasium.make("ecom_bench/cart-v0", difficulty=6)``
    works once `ecom_bench.training` is imported (or ``gymnasium.make("ecom_bench.training:ecom_bench/cart-v0")``).
    No step limit is registered: the env caps its own episodes (``max_steps=n`` adds a cap scored
    like the env's own). Returns the ids."""
    ids = []
    for name in (*COLLECTIONS["C8"], *COLLECTIONS):
        env_id = f"ecom_bench/{name}-v0"
        if env_id not in gym.registry:
            gym.register(env_id, entry_point="ecom_bench.training.env:EcomEnv", kwargs={"env": name})
        ids.append(env_id)
    return ids


register_envs()
