"""`EcomEnv`: the environments as a gymnasium env for text agents.

A thin front over the core loop (`ecom_bench.episode`): `reset` builds one episode's world
once; `step` parses the agent's action (raw model text or an OpenAI-style message, see
`ecom_bench.training.actions`) and hands it to `Episode.step`, the same loop the Inspect
solver drives. Reward is 0 until the episode ends, then r_total in [-1, 1]; `info`
carries `success` (what the curriculum and pass^k count), the reward parts, the turn,
calls left this turn and patience left.

    env = EcomEnv()
    obs, info = env.reset(seed=0, options={"env": "cart", "difficulty": 6})
    obs, reward, terminated, truncated, info = env.step('<tool_call>{"name": ...}</tool_call>')
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import gymnasium as gym

from ecom_bench.agents import get_policy
from ecom_bench.conversation import AgentAction, Message, Policy
from ecom_bench.envs.context import CatalogSpec, EnvContext, load_context
from ecom_bench.episode import Episode, EpisodeOver, new_episode
from ecom_bench.training.actions import Action, chat_message, parse_action
from ecom_bench.training.curriculum import AdaptiveCurriculum, TaskSampler
from ecom_bench.users.llm import Generate, LLMPhraser
from ecom_bench.users.phrasing import Phraser

#: The largest dataset seed a reset draws (Inspect's `-T seed=` takes the same values).
MAX_SEED = 2**31 - 1


class ChatSpace(gym.spaces.Space):
    """Observations: ``{"messages": [chat messages], ...}`` (OpenAI / HF chat-template dicts)."""

    def __init__(self) -> None:
        super().__init__(shape=None, dtype=None)

    def contains(self, x: Any) -> bool:
        return isinstance(x, dict) and isinstance(x.get("messages"), list) and all(
            isinstance(m, dict) and isinstance(m.get("role"), str) for m in x["messages"])

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        return {"messages": [{"role": "user", "content": "Hi, I need some help with an order."}]}


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


def chat(m: Message) -> dict[str, Any]:
    """A core message as a chat-template message."""
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "name": m.tool_name, "content": m.text}
    if m.role == "assistant":
        return chat_message(AgentAction(m.text, m.tool_calls))
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

    `reset(seed=..., options=...)` takes `options` {"env", "difficulty", "index"} to override
    these for one episode; with `index` (and `seed`) the episode is exactly sample `index` of
    the Inspect task with `-T seed=<seed>`.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, env: str = "cart", difficulty: int | str = 0, *,
                 curriculum: AdaptiveCurriculum | Any | None = None, catalog: CatalogSpec | None = None,
                 context: EnvContext | None = None, strict: bool = True, render_mode: str | None = None,
                 user: str = "template", customer_model: Generate | None = None, phraser: Phraser | None = None,
                 customer_cache: MutableMapping[str, str] | None = None) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
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
        self.episode = new_episode(env_name, level, dataset_seed, index, context=self.context, strict=self.strict,
                                   phraser=self._episode_phraser())
        self._recorded = False
        observation = {"messages": self.messages(), "tools": self.tools}
        info = {**self.episode.info(), "seed": dataset_seed, "index": index}
        return observation, info

    def step(self, action: Action) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.episode is None:
            raise EpisodeOver("call reset() before step()")
        agent_action = parse_action(action)
        observation, reward, terminated, truncated, info = self.episode.step(agent_action)
        if (terminated or truncated) and not self._recorded:
            self._recorded = True
            self._active_sampler.record(self.episode.env.name, self.episode.difficulty.level, info["success"])
        return {"messages": [chat(m) for m in observation]}, reward, terminated, truncated, info

    def close(self) -> None:
        self._abandon()
        super().close()

    def _abandon(self) -> None:
        """An episode left before its end (a `TimeLimit` wrapper, a trainer's own cap) still counts:
        it is ended as aborted and recorded as a failure, or a policy that stalls whenever it is
        unsure would be promoted on the episodes it happened to finish."""
        if self.episode is not None and not self._recorded and self.episode.steps:
            self.episode.abort("reset before the episode ended")
            self._recorded = True
            self._active_sampler.record(self.episode.env.name, self.episode.difficulty.level,
                                        self.episode.result().reward.success)

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

    def messages(self) -> list[dict[str, Any]]:
        """The conversation so far as chat messages (system, customer, assistant with tool calls,
        tool results), ready for `tokenizer.apply_chat_template(env.messages(), tools=env.tools)`."""
        return [chat(m) for m in self.transcript]

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

