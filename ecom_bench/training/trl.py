"""TRL adapter: the environments as `trl.GRPOTrainer(environment_factory=...)` environments.

TRL's contract (trl 1.16, `GRPOTrainer`): an environment is built with no arguments, pooled
and reused; before each rollout TRL calls `reset(**row)` with the dataset row and appends the
string it returns to the prompt's last user message; every public method of the class is a
tool (schema from its type hints and Google-style docstring); a model turn without a tool call
ends the rollout; a `get_reward()` method would be added as one more reward of weight 1. So here:

* the prompt is the evaluation's: the row's system message is the env's system prompt (the
  Inspect task's, instructions and rules), `reset` returns the customer's opening as the user
  message, and the tools are the env's own (`ask_user` returns the customer's reply);
* `environment_class("cart")` runs episodes in process (each tool call is one `Episode.step`);
  `openenv_environment_class("cart", url)` plays them on an ``ecom-bench serve`` server through
  openenv-core's client; `environment_factories("C4")` is the `{env: factory}` form (TRL's
  multi-environment mode, routed by the dataset's `environment` column);
* the classes have no `get_reward`: the one reward is the `r_total` reward function, which also
  logs success, the reward parts, end reasons and turns through TRL's `log_metric`;
* `build_dataset` makes the prompt dataset; `CurriculumCheckpoint` saves the curriculum with
  each checkpoint and restores it on resume.

    trainer = GRPOTrainer(model, reward_funcs=[r_total], args=GRPOConfig(...),
                          train_dataset=build_dataset("C1", 6, rows=512),
                          environment_factory=environment_factories("C1"))
"""

from __future__ import annotations

import functools
import inspect
import json
import os
from dataclasses import dataclass
from functools import cache
from types import GenericAlias
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Union

import numpy as np

from ecom_bench.conversation import AgentAction, ToolCallRequest
from ecom_bench.difficulty import Difficulty, validate_level
from ecom_bench.envs import get_env, resolve_envs
from ecom_bench.envs.context import CatalogSpec, EnvContext
from ecom_bench.episode import EndReason, Episode, EpisodeResult
from ecom_bench.rewards import FAILURE_SCORE
from ecom_bench.training.curriculum import Curriculum, load_state, save_state
from ecom_bench.training.env import EcomEnv
from ecom_bench.world.toolkit import ToolSpec

if TYPE_CHECKING:
    import datasets

ENDED = "The conversation has ended; no more tool calls are accepted."
#: Appended to the tool result that ended the episode, so the model stops calling tools.
ENDED_NOTE = "\n\n(The conversation is over: reply without a tool call to finish.)"
#: Why a rollout that stopped before its episode ended was cut (TRL stops at a turn without a
#: tool call, or when the completion runs out of tokens): scored as it stands, no final answer.
ROLLOUT_ENDED = "the rollout ended before the conversation did"
#: The file `CurriculumCheckpoint` writes into each checkpoint folder.
CURRICULUM_FILE = "curriculum.json"

_JSON_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}
#: A difficulty schedule: one level, one per row, a function (row, env) -> level, or "adaptive".
Schedule = Union[int, list[int], Callable[[int, str], int], str]


def system_prompt(env: str, difficulty: int) -> str:
    """The system prompt of `env` at `difficulty` as `Episode.system_prompt` writes it for the
    Inspect tasks (an env may adapt it per episode: `reset` puts the episode's own in the row)."""
    spec = get_env(env)
    return f"{spec.instructions}\n\n{spec.rules(Difficulty.from_level(validate_level(difficulty)))}"


@dataclass(frozen=True)
class Outcome:
    """A finished rollout's score and how it ended: what `r_total` returns and logs."""

    env: str
    difficulty: int
    total: float
    success: bool
    end: str  # an `EndReason` value
    turns: int
    parts: dict[str, float]  # r_task, r_efficiency, r_hallucination (those known)


# ----------------------------------------------------------------------- the environments
class EcomTRLEnv:
    """One episode per `reset`, its tools as methods. Subclassed once per environment
    (`environment_class`), since TRL reads a class's tools from its public methods.

    Only `reset` and the tools are public functions (TRL would expose any other as a tool,
    and would add a `get_reward` as a second reward); the rest is private or a property.

    Args:
        curriculum: counts the successes of adaptive rows (`build_dataset(..., "adaptive",
            curriculum=)`, which draws their level from the same curriculum); anything with
            `window(env)` and `record(env, d, success)`: an `AdaptiveCurriculum`, or a
            `CurriculumClient` for one shared by every process.
        catalog, context, strict: as for `EcomEnv`.
    """

    env_name: str = ""

    def __init__(self, *, curriculum: Curriculum | None = None, catalog: CatalogSpec | None = None,
                 context: EnvContext | None = None, strict: bool = True) -> None:
        if not self.env_name:
            raise TypeError("use environment_class(env) for an environment's class")
        self._curriculum = curriculum
        self._ecom = EcomEnv(self.env_name, 0, catalog=catalog, context=context, strict=strict)
        self._adaptive = False
        self._recorded = False

    def reset(self, env: str | None = None, difficulty: int | None = None, seed: int = 0, index: int = 0,
              adaptive: bool = False, prompt: Any = None, **columns: Any) -> str:
        """Start the episode of a dataset row; returns the customer's opening (TRL appends it to
        the row's empty user message, after the system message that carries the env's prompt).

        The row's other columns are ignored. `adaptive` rows count for the curriculum.
        """
        level = self._check_row(env, difficulty, seed, index, adaptive, prompt)
        self._ecom.reset(seed=seed, options={"env": self.env_name, "difficulty": level, "index": index})
        self._recorded = False
        self._system(prompt, self._episode.system_prompt())
        return self._episode.opening

    def _check_row(self, env: str | None, difficulty: int | None, seed: int, index: int, adaptive: bool,
                   prompt: Any) -> int:
        if env is not None and env != self.env_name:
            raise ValueError(f"a {self.env_name!r} environment got a row for env {env!r}; route rows with the "
                             "`environment` column and environment_factories()")
        for name, value in (("seed", seed), ("index", index)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        if difficulty is None:
            raise ValueError(f"row {index} has no difficulty: build the dataset with build_dataset() (adaptive "
                             "rows draw their level there, from the curriculum)")
        level = validate_level(difficulty)
        if adaptive and self._curriculum is None:
            raise ValueError(f"row {index} is adaptive: give the environment factories the dataset's curriculum")
        self._adaptive = bool(adaptive)
        if prompt is not None:  # TRL passes the row's prompt: it must open with a system message
            first = prompt[0] if isinstance(prompt, list) and prompt else None
            if not isinstance(first, dict) or first.get("role") != "system":
                raise ValueError(f"row {index}: the prompt must open with a system message (the env's system "
                                 "prompt); build the dataset with build_dataset()")
        return level

    @staticmethod
    def _system(prompt: Any, text: str) -> None:
        """Make the row's system message the episode's own system prompt. `build_dataset` writes
        the prompt of (env, d), which an env may adapt per episode (a journey's patience counts
        its requests); TRL 1.16 passes `reset` the row's prompt list and builds the generation
        prompt from it after `reset` returns, so the model reads exactly this."""
        if prompt is not None and prompt[0]["content"] != text:
            prompt[0]["content"] = text

    # ------------------------------------------------------------------ for reward functions
    @property
    def ecom_env(self) -> EcomEnv:
        """The underlying `EcomEnv` (transcript, `scripted_action`, ...)."""
        return self._ecom

    @property
    def result(self) -> EpisodeResult:
        """The scored episode. A rollout that stopped before the episode ended (the model replied
        without a tool call, or ran out of tokens) is ended here as aborted: no final answer."""
        return self._result

    @property
    def outcome(self) -> Outcome:
        """The rollout's score, end reason and turns (what `r_total` reads); counted once by the
        curriculum if the row was adaptive."""
        result = self._result
        reward = result.reward
        return Outcome(self.env_name, self._episode.difficulty.level, reward.total, reward.success,
                       result.end.value, result.turns,
                       {"task": reward.task, "efficiency": reward.efficiency, "hallucination": reward.hallucination})

    @property
    def _episode(self) -> Episode:
        if self._ecom.episode is None:
            raise RuntimeError("reset() was never called on this environment")
        return self._ecom.episode

    @property
    def _result(self) -> EpisodeResult:
        episode = self._episode
        episode.abort(ROLLOUT_ENDED)  # a no-op once it has ended
        result = episode.result()
        self._count(episode.difficulty.level, result.reward.success)
        return result

    def _count(self, level: int, success: bool) -> None:
        if self._adaptive and not self._recorded and self._curriculum is not None:
            self._recorded = True
            self._curriculum.record(self.env_name, level, success)

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        """One tool call as one step of the core loop; returns what the model sees."""
        episode = self._episode
        if episode.done:
            return ENDED
        observation, _, terminated, truncated, _ = self._ecom.step(
            AgentAction(tool_calls=(ToolCallRequest(name, dict(arguments), f"call-{episode.steps}"),)))
        text = "\n".join(m["content"] for m in observation["new_messages"])
        return text + ENDED_NOTE if terminated or truncated else text


class OpenEnvTRLEnv(EcomTRLEnv):
    """The same environment played on an ``ecom-bench serve`` server: one WebSocket session
    (openenv-core's client, `EcomEnvClient`) per instance, each tool call one ``step`` with a
    structured tool call. The episode and its score stay on the server; a rollout cut before
    the episode ended scores r_total = -1 (no final answer) and the server counts it as failed
    at the next reset. Subclassed per env and server by `openenv_environment_class`.
    """

    base_url: str = ""

    def __init__(self, *, curriculum: Curriculum | None = None, timeout_s: float = 120.0) -> None:
        if not (self.env_name and self.base_url):
            raise TypeError("use openenv_environment_class(env, base_url) for an environment's class")
        from ecom_bench.training.client import EcomEnvClient

        self._curriculum = curriculum
        self._adaptive = self._recorded = False
        self._client: Any = EcomEnvClient(base_url=self.base_url, message_timeout_s=timeout_s).sync()
        self._client.connect()
        self._level = 0
        self._info: dict[str, Any] | None = None  # the last step's info; None before any step
        self._done = False
        self._steps = 0

    def reset(self, env: str | None = None, difficulty: int | None = None, seed: int = 0, index: int = 0,
              adaptive: bool = False, prompt: Any = None, **columns: Any) -> str:
        """Start the row's episode on the server; returns the customer's opening."""
        self._level = self._check_row(env, difficulty, seed, index, adaptive, prompt)
        result = self._client.reset(seed=seed, env=self.env_name, difficulty=self._level, index=index)
        self._recorded, self._done, self._steps, self._info = False, False, 0, None
        messages = result.observation.messages
        self._system(prompt, next(m["content"] for m in messages if m.get("role") == "system"))
        return next(m["content"] for m in messages if m.get("role") == "user")

    @property
    def ecom_env(self) -> EcomEnv:
        raise AttributeError("the episode of an OpenEnv environment lives on the server")

    @property
    def result(self) -> EpisodeResult:
        raise AttributeError("the episode of an OpenEnv environment lives on the server: read `outcome`")

    @property
    def outcome(self) -> Outcome:
        info = self._info or {}
        if self._done:
            parts = dict(info.get("reward_parts", {}))
            total, success = float(parts.pop("total")), bool(info["success"])
            parts.pop("success", None)
            end, turns = str(info.get("end_reason")), int(info.get("turn", 1)) - 1
        else:  # cut before the end: the core scores an unanswered episode -1 (Reward.failure)
            total, success, parts = FAILURE_SCORE, False, {"task": FAILURE_SCORE}
            end, turns = EndReason.ABORTED.value, int(info.get("turn", 1)) - 1
        self._count(self._level, success)
        return Outcome(self.env_name, self._level, total, success, end, turns, parts)

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self._done:
            return ENDED
        call = {"id": f"call-{self._steps}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)}}
        from ecom_bench.training.server import EcomAction

        result = self._client.step(EcomAction(content="", tool_calls=[call]))
        self._steps += 1
        self._info, self._done = result.observation.info, bool(result.done)
        text = "\n".join(m["content"] for m in result.observation.new_messages)
        return text + ENDED_NOTE if self._done else text

    def __del__(self) -> None:
        client = getattr(self, "_client", None)
        if client is not None:
            try:
                client.close()
            except Exception:  # noqa: BLE001 - at interpreter exit the loop may be gone already
                pass


def _annotation(schema: dict[str, Any], where: str) -> Any:
    """A JSON-schema type as the type hint transformers' `get_json_schema` turns back into it."""
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"]
        if len(options) != 1:
            raise TypeError(f"{where}: only 'T or null' unions are supported, got {schema['anyOf']}")
        inner = _annotation(options[0], where)
        return Optional[inner] if len(options) < len(schema["anyOf"]) else inner
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    if kind == "array":
        return GenericAlias(list, _annotation(schema.get("items", {"type": "string"}), where))  # list[item]
    if kind not in _JSON_TYPES:
        raise TypeError(f"{where}: unsupported JSON type {kind!r}")
    return _JSON_TYPES[kind]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def tool_method(spec: ToolSpec) -> Callable[..., str]:
    """The TRL tool method of a core tool: signature and Google-style docstring from the spec.

    The method takes `**arguments` and hands them to the episode unchecked, so a bad call is
    judged by the core (the strict rule), not by a Python TypeError that TRL would catch; the
    signature it advertises (`__signature__`) is the spec's.
    """
    def tool(self: EcomTRLEnv, **arguments: Any) -> str:
        return self._call(spec.name, arguments)

    properties = spec.parameters.get("properties", {})
    required = set(spec.parameters.get("required", []))
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    arg_lines = []
    for name, schema in properties.items():
        annotations[name] = _annotation(schema, f"tool {spec.name}, argument {name}")
        default = inspect.Parameter.empty if name in required else schema.get("default")
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=annotations[name]))
        arg_lines.append(f"    {name}: {_one_line(schema.get('description', name))}")
    returns = "The customer's reply." if spec.kind == "user" else "The tool's result (or its error) as text."
    doc = _one_line(spec.description)
    if arg_lines:
        doc += "\n\nArgs:\n" + "\n".join(arg_lines)
    tool.__doc__ = f"{doc}\n\nReturns:\n    {returns}"
    tool.__name__ = spec.name
    tool.__annotations__ = {**annotations, "return": str}
    tool.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    return tool


def environment_class(env: str) -> type[EcomTRLEnv]:
    """The TRL environment class of one environment ("cart"): its tools are the env's tools.

    One env is one class (TRL keys reward columns by class). Calling the class with no
    arguments is a valid `environment_factory`.
    """
    return _environment_class(_one_env(env), EcomTRLEnv, "")


def openenv_environment_class(env: str, base_url: str) -> type[OpenEnvTRLEnv]:
    """The TRL environment class of one environment played on the server at `base_url`
    (``ecom-bench serve``): the same tools, prompt and score as `environment_class(env)`."""
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise ValueError(f"base_url must be an http(s) URL of an ecom-bench server, got {base_url!r}")
    return _environment_class(_one_env(env), OpenEnvTRLEnv, base_url.rstrip("/"))  # type: ignore[return-value]


def _one_env(env: str) -> str:
    names = resolve_envs(env)
    if len(names) != 1:
        raise ValueError(f"an environment class takes one environment, got {env!r}; use environment_factories() "
                         "for a collection")
    return names[0]


@cache
def _environment_class(name: str, base: type[EcomTRLEnv], base_url: str) -> type[EcomTRLEnv]:
    specs = get_env(name).toolkit_class().specs()
    cls_name = "".join(part.title() for part in name.split("_")) + ("OpenEnv" if base_url else "") + "Env"
    namespace: dict[str, Any] = {"env_name": name, "__module__": __name__,
                                 "__doc__": f"The {name!r} environment for TRL (see `{base.__name__}`)."}
    if base_url:
        namespace["base_url"] = base_url
    for tool_name in get_env(name).tool_names:
        method = tool_method(specs[tool_name])
        method.__qualname__ = f"{cls_name}.{tool_name}"
        namespace[tool_name] = method
    return type(cls_name, (base,), namespace)


def environment_factories(envs: str = "C1", *, curriculum: Curriculum | None = None,
                          catalog: CatalogSpec | None = None, context: EnvContext | None = None,
                          strict: bool = True, base_url: str | None = None) -> dict[str, Callable[[], EcomTRLEnv]]:
    """`{env: factory}` for `GRPOTrainer(environment_factory=...)` over a collection ("C4") or a
    comma list: TRL routes each row by its `environment` column and shows only that env's tools.

    All instances share `curriculum` (the one `build_dataset(..., "adaptive")` draws from) and
    the catalogue context (loaded once per process). With `base_url`, the episodes are played
    on that ``ecom-bench serve`` server (`openenv_environment_class`; catalog, context and
    strict are the server's).
    """
    if base_url is not None:
        if catalog is not None or context is not None or strict is not True:
            raise ValueError("with base_url the server's catalogue and strict rule apply: pass no catalog, "
                             "context or strict")

        def remote(cls: type[OpenEnvTRLEnv]) -> Callable[[], EcomTRLEnv]:
            return lambda: cls(curriculum=curriculum)

        return {name: remote(openenv_environment_class(name, base_url)) for name in resolve_envs(envs)}

    def factory(cls: type[EcomTRLEnv]) -> Callable[[], EcomTRLEnv]:
        return lambda: cls(curriculum=curriculum, catalog=catalog, context=context, strict=strict)

    return {name: factory(environment_class(name)) for name in resolve_envs(envs)}


# ----------------------------------------------------------------------- rewards
def outcomes(environments: list[Any] | None) -> list[Outcome | None]:
    """The `Outcome` of each rollout (None for environments that are not ours)."""
    if environments is None:
        raise ValueError("this reward function reads the episodes: train with environment_factory=")
    return [e.outcome if isinstance(e, EcomTRLEnv) else None for e in environments]


def log_outcomes(done: list[Outcome], log_metric: Callable[[str, float], None]) -> None:
    """Batch means under ``episode/``: success, r_total and its parts, turns, and the share of
    each end reason (every reason, zeros included, so averages over steps stay exact)."""
    if not done:
        return
    n = len(done)
    log_metric("episode/success", sum(o.success for o in done) / n)
    log_metric("episode/r_total", sum(o.total for o in done) / n)
    for part in ("task", "efficiency", "hallucination"):
        known = [o.parts[part] for o in done if part in o.parts]
        if known:
            log_metric(f"episode/r_{part}", sum(known) / len(known))
    log_metric("episode/turns", sum(o.turns for o in done) / n)
    for reason in EndReason:
        log_metric(f"episode/end/{reason.value}", sum(o.end == reason.value for o in done) / n)


def r_total(environments: list[Any] | None = None, log_metric: Callable[[str, float], None] | None = None,
            log_extra: Callable[[str, list[Any]], None] | None = None, **kwargs: Any) -> list[float | None]:
    """The reward: r_total in [-1, 0.9] of each finished episode, the leaderboard's score (None
    for other envs' rollouts). Pass it alone (weight 1): success is logged, not rewarded.

    Under TRL it also logs, through the trainer's `log_metric`, ``episode/success``,
    ``episode/r_total``, ``episode/r_task``, ``episode/r_efficiency``, ``episode/r_hallucination``,
    ``episode/turns`` and ``episode/end/<reason>`` (the share of rollouts ending so), and adds
    env, difficulty, success and end reason to the completions table (`log_extra`).
    """
    scored = outcomes(environments)
    done = [o for o in scored if o is not None]
    if log_metric is not None:
        log_outcomes(done, log_metric)
    if log_extra is not None:
        log_extra("env", [o.env if o else None for o in scored])
        log_extra("difficulty", [o.difficulty if o else None for o in scored])
        log_extra("success", [o.success if o else None for o in scored])
        log_extra("end_reason", [o.end if o else None for o in scored])
    return [o.total if o else None for o in scored]


# ----------------------------------------------------------------------- the dataset
def _levels(difficulty: Schedule, names: list[str]) -> list[int]:
    rows = len(names)
    if isinstance(difficulty, list):
        if len(difficulty) != rows:
            raise ValueError(f"a difficulty list needs one level per row ({rows}), got {len(difficulty)}")
        return [validate_level(d) for d in difficulty]
    if callable(difficulty):
        return [validate_level(difficulty(i, env), name=f"difficulty({i}, {env!r})") for i, env in enumerate(names)]
    if isinstance(difficulty, str):
        raise ValueError(f"difficulty must be a level, a list, a function (row, env) -> level or 'adaptive', "
                         f"got {difficulty!r}")
    return [validate_level(difficulty)] * rows


def build_dataset(envs: str = "C1", difficulty: Schedule = 0, rows: int = 256, seed: int = 0, *,
                  curriculum: Curriculum | None = None) -> "datasets.Dataset":
    """The prompt dataset: `rows` rows cycling through the envs of `envs` (a collection or a comma
    list), row i being episode `index=i` of its (env, difficulty, seed) dataset.

    Columns: `prompt` (the system message, the env's system prompt at the row's level as the
    Inspect task gives it, then an empty user message that `reset` fills with the customer's
    opening), `environment` (TRL's routing column), `env`, `difficulty`, `seed`, `index`, and
    `adaptive` (whether the row's episode counts for the curriculum).

    `difficulty`: a level; a list with one level per row; a function (row, env) -> level (a
    fixed ramp; keep rows in order with `GRPOConfig(shuffle_dataset=False)`); or "adaptive":
    each row's level is drawn from `curriculum` when the trainer fetches the row (seeded by
    (seed, index), so every generation of a GRPO group plays the same episode), and the
    environments record its success into the same curriculum.
    """
    import datasets

    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
        raise ValueError(f"rows must be an integer >= 1, got {rows!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    available = resolve_envs(envs)
    names = [available[i % len(available)] for i in range(rows)]
    adaptive = difficulty == "adaptive"
    if adaptive and curriculum is None:
        raise ValueError("an adaptive dataset draws its levels from a curriculum: pass curriculum= (the one "
                         "given to environment_factories)")
    if not adaptive and curriculum is not None:
        raise ValueError(f"curriculum= is for difficulty='adaptive'; this dataset's difficulty is fixed ({difficulty!r})")
    levels = [0] * rows if adaptive else _levels(difficulty, names)
    ds = datasets.Dataset.from_dict({
        "prompt": [_prompt(env, level) for env, level in zip(names, levels, strict=True)],
        "environment": names, "env": names, "difficulty": levels,
        "seed": [seed] * rows, "index": list(range(rows)), "adaptive": [adaptive] * rows,
    }, features=datasets.Features({
        "prompt": [{"role": datasets.Value("string"), "content": datasets.Value("string")}],
        "environment": datasets.Value("string"), "env": datasets.Value("string"),
        "difficulty": datasets.Value("int64"), "seed": datasets.Value("int64"), "index": datasets.Value("int64"),
        "adaptive": datasets.Value("bool"),
    }))
    if adaptive:
        assert curriculum is not None
        ds.set_transform(functools.partial(_draw_levels, curriculum))
    return ds


def _prompt(env: str, level: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": system_prompt(env, level)}, {"role": "user", "content": ""}]


def _draw_levels(curriculum: Curriculum, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """Adaptive rows as the trainer fetches them: d ~ U{l..h} of the row's env, seeded by (seed, index)."""
    levels = []
    for env, seed, index in zip(batch["env"], batch["seed"], batch["index"], strict=True):
        low, high = curriculum.window(env)
        levels.append(int(np.random.default_rng([seed, index]).integers(low, high + 1)))
    return {**batch, "difficulty": levels, "prompt": [_prompt(env, d) for env, d in zip(batch["env"], levels, strict=True)]}


# ----------------------------------------------------------------------- checkpoints
def _callback_base() -> type:
    from transformers import TrainerCallback

    return TrainerCallback


class CurriculumCheckpoint(_callback_base()):  # type: ignore[misc]
    """A `transformers.TrainerCallback` that keeps the curriculum with the model: its state is
    written (atomically) as ``curriculum.json`` into each checkpoint folder, and restored from
    the checkpoint a run resumes from (``trainer.train(resume_from_checkpoint=...)``).

    `curriculum`: the one the dataset and environments share (an `AdaptiveCurriculum`, or a
    `CurriculumClient`, whose server state is then set back to the checkpoint's). Only the
    main process writes; every process restores. `resume_from`: the checkpoint folder when it
    is not ``<output_dir>/checkpoint-<step>``.
    """

    def __init__(self, curriculum: Any, resume_from: str | os.PathLike[str] | None = None) -> None:
        for method in ("state_dict", "load_state_dict"):
            if not callable(getattr(curriculum, method, None)):
                raise TypeError(f"the curriculum needs {method}() to be checkpointed, got {type(curriculum).__name__}")
        self.curriculum = curriculum
        self.resume_from = resume_from
        self.restored_from: str | None = None

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.is_world_process_zero:
            folder = os.path.join(args.output_dir, f"checkpoint-{state.global_step}")
            save_state(self.curriculum.state_dict(), os.path.join(folder, CURRICULUM_FILE))

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == 0:  # a fresh run: nothing to restore
            return
        folder = str(self.resume_from or os.path.join(args.output_dir, f"checkpoint-{state.global_step}"))
        path = os.path.join(folder, CURRICULUM_FILE)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"resuming at step {state.global_step}: no {CURRICULUM_FILE} in {folder} (was it "
                                    "saved with CurriculumCheckpoint? pass resume_from= if the checkpoint is elsewhere)")
        self.curriculum.load_state_dict(load_state(path).state_dict())
        self.restored_from = path


__all__ = ["CURRICULUM_FILE", "ENDED", "CurriculumCheckpoint", "EcomTRLEnv", "OpenEnvTRLEnv", "Outcome", "Schedule",
           "build_dataset", "environment_class", "environment_factories", "log_outcomes", "openenv_environment_class",
           "outcomes", "r_total", "system_prompt", "tool_method"]
