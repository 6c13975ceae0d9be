"""TRL adapter: the environments as `trl.GRPOTrainer(environment_factory=...)` environments.

TRL's contract (trl 1.16, `GRPOTrainer`): an environment is built with no arguments, pooled
and reused; before each rollout TRL calls `reset(**row)` with the dataset row and appends the
string it returns to the prompt's last user message; every public method of the class is a
tool (schema from its type hints and Google-style docstring); a model turn without a tool call
ends the rollout; `get_reward()` scores the finished rollout. So here:

* each environment gets one generated class (`environment_class("cart")`) whose tool methods
  come from the core's `ToolSpec`s; a call is one `Episode.step` through `EcomEnv`, so turns,
  budgets, validation and the strict rule are the core's. The customer is reached with the
  env's own `ask_user` tool, which returns the customer's reply;
* `environment_factories("C4")` is the `{env: factory}` form (TRL's multi-environment mode,
  routed by the dataset's `environment` column); one class also works as a single factory;
* `success` and `total` are reward functions over the finished episodes;
* `build_dataset` makes the prompt dataset for a collection and a difficulty schedule.

    factories = environment_factories("C1")
    trainer = GRPOTrainer(model, reward_funcs=[success], args=GRPOConfig(reward_weights=[0.0], ...),
                          train_dataset=build_dataset("C1", 6, rows=512), environment_factory=factories)
"""

from __future__ import annotations

import inspect
from functools import cache
from types import GenericAlias
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Union

import numpy as np

from ecom_bench.conversation import AgentAction, ToolCallRequest
from ecom_bench.difficulty import validate_level
from ecom_bench.envs import get_env, resolve_envs
from ecom_bench.envs.context import CatalogSpec, EnvContext
from ecom_bench.episode import Episode, EpisodeResult
from ecom_bench.training.curriculum import Curriculum, TaskSampler
from ecom_bench.training.env import EcomEnv
from ecom_bench.world.toolkit import ToolSpec

if TYPE_CHECKING:
    import datasets

#: What TRL's loop needs the model to know that the env's own prompt does not say: a model turn
#: without a tool call ends the rollout, so every message to the customer goes through ask_user.
PROTOCOL = ("How this conversation works: every message to the customer goes through the ask_user tool, "
            "which returns the customer's reply. A reply without a tool call ends the conversation.")
ENDED = "The conversation has ended; no more tool calls are accepted."
#: Appended to the tool result that ended the episode, so the model stops calling tools.
ENDED_NOTE = "\n\n(The conversation is over: reply without a tool call to finish.)"

_JSON_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}
#: A difficulty schedule: one level, one per row, a function (row, env) -> level, or "adaptive".
Schedule = Union[int, list[int], Callable[[int, str], int], str]


# ----------------------------------------------------------------------- the environments
class EcomTRLEnv:
    """One episode per `reset`, its tools as methods. Subclassed once per environment
    (`environment_class`), since TRL reads a class's tools from its public methods.

    Only `reset`, `get_reward` and the tools are public functions (TRL would expose any other
    as a tool); the rest is private or a property.

    Args:
        curriculum: draws the level of rows with no difficulty (`build_dataset(..., "adaptive")`)
            and counts their successes; anything with `window(env)` and `record(env, d, success)`.
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
              **columns: Any) -> str:
        """Start the episode of a dataset row; returns the text TRL appends to the user message:
        the env's instructions and rules, how to reach the customer, and the customer's opening.

        The row's other columns (`prompt`, ...) are ignored. With no `difficulty`, the level is
        drawn from the curriculum's window, seeded by (seed, index) so every generation of a
        GRPO group plays the same episode.
        """
        if env is not None and env != self.env_name:
            raise ValueError(f"a {self.env_name!r} environment got a row for env {env!r}; route rows with the "
                             "`environment` column and environment_factories()")
        for name, value in (("seed", seed), ("index", index)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        self._adaptive = difficulty is None
        if self._adaptive:
            if self._curriculum is None:
                raise ValueError(f"row {index} has no difficulty: give the dataset a difficulty or the "
                                 "environment factories a curriculum")
            _, level = TaskSampler(self.env_name, "adaptive", self._curriculum).sample(np.random.default_rng([seed, index]))
        else:
            level = validate_level(difficulty)
        self._ecom.reset(seed=seed, options={"env": self.env_name, "difficulty": level, "index": index})
        self._recorded = False
        episode = self._episode
        return f"{episode.system_prompt()}\n\n{PROTOCOL}\n\nThe customer says: {episode.opening}"

    def get_reward(self) -> float:
        """r_total of the episode (TRL calls this once the rollout is over)."""
        return self._result.reward.total

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
    def _episode(self) -> Episode:
        if self._ecom.episode is None:
            raise RuntimeError("reset() was never called on this environment")
        return self._ecom.episode

    @property
    def _result(self) -> EpisodeResult:
        episode = self._episode
        episode.abort("the rollout ended before the conversation did")  # a no-op once it has ended
        result = episode.result()
        if self._adaptive and not self._recorded and self._curriculum is not None:
            self._recorded = True
            self._curriculum.record(self.env_name, episode.difficulty.level, result.reward.success)
        return result

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        """One tool call as one step of the core loop; returns what the model sees."""
        episode = self._episode
        if episode.done:
            return ENDED
        observation, _, terminated, truncated, _ = self._ecom.step(
            AgentAction(tool_calls=(ToolCallRequest(name, dict(arguments), f"call-{episode.steps}"),)))
        text = "\n".join(m["content"] for m in observation["new_messages"])
        return text + ENDED_NOTE if terminated or truncated else text


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
    names = resolve_envs(env)
    if len(names) != 1:
        raise ValueError(f"environment_class takes one environment, got {env!r}; use environment_factories() "
                         "for a collection")
    return _environment_class(names[0])


@cache
def _environment_class(name: str) -> type[EcomTRLEnv]:
    specs = get_env(name).toolkit_class().specs()
    cls_name = "".join(part.title() for part in name.split("_")) + "Env"
    namespace: dict[str, Any] = {"env_name": name, "__module__": __name__,
                                 "__doc__": f"The {name!r} environment for TRL (see `EcomTRLEnv`)."}
    for tool_name in get_env(name).tool_names:
        method = tool_method(specs[tool_name])
        method.__qualname__ = f"{cls_name}.{tool_name}"
        namespace[tool_name] = method
    return type(cls_name, (EcomTRLEnv,), namespace)


def environment_factories(envs: str = "C1", *, curriculum: Curriculum | None = None,
                          catalog: CatalogSpec | None = None, context: EnvContext | None = None,
                          strict: bool = True) -> dict[str, Callable[[], EcomTRLEnv]]:
    """`{env: factory}` for `GRPOTrainer(environment_factory=...)` over a collection ("C4") or a
    comma list: TRL routes each row by its `environment` column and shows only that env's tools.

    All instances share `curriculum` (for rows of `build_dataset(..., "adaptive")`) and the
    catalogue context (loaded once per process).
    """
    def factory(cls: type[EcomTRLEnv]) -> Callable[[], EcomTRLEnv]:
        return lambda: cls(curriculum=curriculum, catalog=catalog, context=context, strict=strict)

    return {name: factory(environment_class(name)) for name in resolve_envs(envs)}


# ----------------------------------------------------------------------- rewards
def _scores(environments: list[Any] | None, score: Callable[[EpisodeResult], float]) -> list[float | None]:
    if environments is None:
        raise ValueError("this reward function reads the episodes: train with environment_factory=")
    return [score(e.result) if isinstance(e, EcomTRLEnv) else None for e in environments]


def success(environments: list[Any] | None = None, **kwargs: Any) -> list[float | None]:
    """Reward function: 1.0 if the episode succeeded, else 0.0 (None for other envs' rollouts).
    With weight 0 (`GRPOConfig(reward_weights=[0.0])`) it logs the success rate as
    `rewards/success/mean` without changing the advantage."""
    return _scores(environments, lambda r: 1.0 if r.reward.success else 0.0)


def total(environments: list[Any] | None = None, **kwargs: Any) -> list[float | None]:
    """Reward function: r_total in [-1, 0.9]. The env classes' `get_reward` already adds it with
    weight 1; pass this one with weight 0 to log it under a single name across envs."""
    return _scores(environments, lambda r: r.reward.total)


# ----------------------------------------------------------------------- the dataset
def _levels(difficulty: Schedule, names: list[str]) -> list[int | None]:
    rows = len(names)
    if difficulty == "adaptive":
        return [None] * rows
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


def build_dataset(envs: str = "C1", difficulty: Schedule = 0, rows: int = 256, seed: int = 0) -> "datasets.Dataset":
    """The prompt dataset: `rows` rows cycling through the envs of `envs` (a collection or a comma
    list), row i being episode `index=i` of its (env, difficulty, seed) dataset.

    Columns: `prompt` (an empty user message; `reset` supplies the text), `environment` (TRL's
    routing column), `env`, `difficulty`, `seed`, `index` (what `reset` reads).

    `difficulty`: a level; a list with one level per row; a function (row, env) -> level (a
    fixed ramp; keep rows in order with `GRPOConfig(shuffle_dataset=False)`); or "adaptive":
    no level in the row, drawn at reset from the factories' curriculum, which moves with training.
    """
    import datasets

    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
        raise ValueError(f"rows must be an integer >= 1, got {rows!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    available = resolve_envs(envs)
    names = [available[i % len(available)] for i in range(rows)]
    levels = _levels(difficulty, names)
    return datasets.Dataset.from_dict({
        "prompt": [[{"role": "user", "content": ""}] for _ in names],
        "environment": names, "env": names, "difficulty": levels,
        "seed": [seed] * rows, "index": list(range(rows)),
    }, features=datasets.Features({
        "prompt": [{"role": datasets.Value("string"), "content": datasets.Value("string")}],
        "environment": datasets.Value("string"), "env": datasets.Value("string"),
        "difficulty": datasets.Value("int64"), "seed": datasets.Value("int64"), "index": datasets.Value("int64"),
    }))


__all__ = ["ENDED", "PROTOCOL", "EcomTRLEnv", "Schedule", "build_dataset", "environment_class",
           "environment_factories", "success", "tool_method", "total"]
