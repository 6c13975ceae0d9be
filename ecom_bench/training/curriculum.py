"""The adaptive difficulty curriculum (docs/design.md, Curriculum) and the task sampler.

Each environment keeps its own window [l, h], starting at [0, 0]. An episode draws
d ~ U{l..h}; only episodes played at d = h count; after τ_num of them, a success rate
≥ τ_acc moves h up by one and l up to max(l, h − Δ); the counters reset either way, and
l never falls. Promotion reads `success` (a bool), never the shaped reward: an agent
that farms efficiency or hallucination points without solving tasks is not promoted.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol

from ecom_bench.difficulty import validate_level
from ecom_bench.envs import resolve_envs


@dataclass(frozen=True)
class CurriculumConfig:
    """τ_acc, τ_num and Δ of the rule; `max_level` caps h (None: no cap)."""

    tau_acc: float = 0.9
    tau_num: int = 32
    delta: int = 4
    max_level: int | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.tau_acc, (int, float)) and 0 < self.tau_acc <= 1):
            raise ValueError(f"tau_acc must be in (0, 1], got {self.tau_acc!r}")
        for name in ("tau_num", "delta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (1 if name == "tau_num" else 0):
                raise ValueError(f"{name} must be an integer >= {1 if name == 'tau_num' else 0}, got {value!r}")
        if self.max_level is not None and (isinstance(self.max_level, bool) or not isinstance(self.max_level, int)
                                           or self.max_level < 0):
            raise ValueError(f"max_level must be an integer >= 0 or None, got {self.max_level!r}")


#: `ecomrlve`: the published run's values. `rlve`: the RLVE paper's, 128 episodes at the frontier
#: (8 prompts x 16 rollouts) and 4 live levels (h-3..h, so Δ = 3).
PRESETS: dict[str, CurriculumConfig] = {
    "ecomrlve": CurriculumConfig(0.9, 32, 4),
    "rlve": CurriculumConfig(0.9, 128, 3),
}


@dataclass
class Window:
    """One environment's window and its counters at the frontier."""

    low: int = 0
    high: int = 0
    attempts: int = 0  # episodes at d = high since the last check
    successes: int = 0
    episodes: int = 0  # every episode recorded, any level
    promotions: int = 0


class AdaptiveCurriculum:
    """Per-environment windows under one rule. `state_dict()` is plain JSON and round-trips
    through `from_state_dict`, so a training run can checkpoint and resume it."""

    def __init__(self, preset: str | CurriculumConfig = "ecomrlve", **overrides: Any) -> None:
        if isinstance(preset, CurriculumConfig):
            base = preset
        elif preset in PRESETS:
            base = PRESETS[preset]
        else:
            raise ValueError(f"unknown curriculum preset {preset!r}; presets: {', '.join(PRESETS)} "
                             "(or pass a CurriculumConfig)")
        unknown = set(overrides) - set(asdict(base))
        if unknown:
            raise ValueError(f"unknown curriculum setting(s) {sorted(unknown)}; settings: {', '.join(asdict(base))}")
        self.config = CurriculumConfig(**{**asdict(base), **overrides})
        self.windows: dict[str, Window] = {}

    def window(self, env: str) -> tuple[int, int]:
        w = self._window(env)
        return w.low, w.high

    def sample(self, env: str, rng: random.Random | Any) -> int:
        """d ~ U{l..h} for `env` (rng: a `random.Random` or a numpy Generator)."""
        w = self._window(env)
        if hasattr(rng, "integers"):
            return int(rng.integers(w.low, w.high + 1))
        return rng.randint(w.low, w.high)

    def record(self, env: str, level: int, success: bool) -> bool:
        """Count one finished episode; returns whether `env` was promoted."""
        if not isinstance(success, bool):
            raise TypeError(f"the curriculum counts success (a bool), not the shaped reward; got {success!r}")
        w = self._window(env)
        w.episodes += 1
        if level != w.high:
            return False
        w.attempts += 1
        w.successes += success
        if w.attempts < self.config.tau_num:
            return False
        promote = w.successes / w.attempts >= self.config.tau_acc and (
            self.config.max_level is None or w.high < self.config.max_level)
        w.attempts = w.successes = 0
        if promote:
            w.high += 1
            w.low = max(w.low, w.high - self.config.delta)
            w.promotions += 1
        return promote

    def state_dict(self) -> dict[str, Any]:
        return {"config": asdict(self.config), "windows": {env: asdict(w) for env, w in self.windows.items()}}

    @classmethod
    def from_state_dict(cls, state: Any) -> "AdaptiveCurriculum":
        """The curriculum `state_dict()` describes; ValueError naming the field if it is no valid state
        (a window with low > high would otherwise fail only at the next draw)."""
        config, windows = validate_state(state)
        curriculum = cls(config)
        curriculum.windows = windows
        return curriculum

    def load_state_dict(self, state: Any) -> None:
        """Replace this curriculum's config and windows in place (objects sharing it see the new
        state); a bad state is refused as in `from_state_dict`, leaving this one unchanged."""
        self.config, self.windows = validate_state(state)

    def _window(self, env: str) -> Window:
        if resolve_envs(env) != (env,):  # an unknown name fails there, by name
            raise ValueError(f"a curriculum window belongs to one environment, not {env!r}")
        return self.windows.setdefault(env, Window())

    def __repr__(self) -> str:
        windows = ", ".join(f"{e}=[{w.low},{w.high}]" for e, w in sorted(self.windows.items()))
        return f"AdaptiveCurriculum({self.config}, {windows or 'no episodes yet'})"


_WINDOW_FIELDS = tuple(f.name for f in fields(Window))


def validate_state(state: Any) -> tuple[CurriculumConfig, dict[str, Window]]:
    """The config and windows of a `state_dict()`, checked field by field: ValueError with one
    line naming the first bad field."""
    if not isinstance(state, dict) or set(state) != {"config", "windows"}:
        keys = sorted(state) if isinstance(state, dict) else type(state).__name__
        raise ValueError(f"a curriculum state is an object with exactly 'config' and 'windows', got {keys}")
    raw_config, raw_windows = state["config"], state["windows"]
    if not isinstance(raw_config, dict):
        raise ValueError(f"config must be an object, got {type(raw_config).__name__}")
    known = [f.name for f in fields(CurriculumConfig)]
    if unknown := sorted(set(raw_config) - set(known)):
        raise ValueError(f"config: unknown setting(s) {unknown}; settings: {', '.join(known)}")
    try:
        config = CurriculumConfig(**raw_config)
    except ValueError as e:
        raise ValueError(f"config.{e}") from None
    if not isinstance(raw_windows, dict):
        raise ValueError(f"windows must be an object {{env: window}}, got {type(raw_windows).__name__}")
    windows: dict[str, Window] = {}
    for env, w in raw_windows.items():
        where = f"windows.{env}"
        try:
            if resolve_envs(env) != (env,):
                raise ValueError(f"a window belongs to one environment, not {env!r}")
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        if not isinstance(w, dict):
            raise ValueError(f"{where} must be an object, got {type(w).__name__}")
        if missing := [k for k in _WINDOW_FIELDS if k not in w]:
            raise ValueError(f"{where}: missing field(s) {missing}")
        if unknown := sorted(set(w) - set(_WINDOW_FIELDS)):
            raise ValueError(f"{where}: unknown field(s) {unknown}; fields: {', '.join(_WINDOW_FIELDS)}")
        for k in _WINDOW_FIELDS:
            value = w[k]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{where}.{k} must be an integer >= 0, got {value!r}")
        if w["low"] > w["high"]:
            raise ValueError(f"{where}.low ({w['low']}) is above {where}.high ({w['high']})")
        if config.max_level is not None and w["high"] > config.max_level:
            raise ValueError(f"{where}.high ({w['high']}) is above config.max_level ({config.max_level})")
        if w["successes"] > w["attempts"]:
            raise ValueError(f"{where}.successes ({w['successes']}) is above {where}.attempts ({w['attempts']})")
        if w["attempts"] > w["episodes"]:
            raise ValueError(f"{where}.attempts ({w['attempts']}) is above {where}.episodes ({w['episodes']})")
        windows[env] = Window(**w)
    return config, windows


def save_state(state: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Write a curriculum state as JSON, atomically: a temporary file in the same folder, then
    renamed over `path`, so a crash mid-write leaves the previous file whole."""
    target = Path(path)
    if not target.parent.is_dir():
        raise FileNotFoundError(f"cannot save the curriculum to {target}: folder {target.parent} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(state, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_state(path: str | os.PathLike[str]) -> AdaptiveCurriculum:
    """The curriculum saved at `path` (by `save_state`); ValueError naming the file and the field."""
    try:
        state = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e})") from None
    try:
        return AdaptiveCurriculum.from_state_dict(state)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


class Curriculum(Protocol):
    """What a sampler asks of a curriculum: an `AdaptiveCurriculum`, or a proxy to a shared one
    (a Ray actor's, an OpenEnv server's: `ecom_bench.training.client.CurriculumClient`)."""

    def window(self, env: str) -> tuple[int, int]:
        """The difficulty window [low, high] of `env`."""
        ...

    def record(self, env: str, level: int, success: bool) -> object:
        """Count one finished episode."""
        ...


@dataclass
class TaskSampler:
    """What the next episode is: an env drawn uniformly from `envs` (an env, a collection C1..C8
    or a list) and its difficulty, fixed or from the curriculum (`difficulty="adaptive"`)."""

    envs: str | tuple[str, ...] = "cart"
    difficulty: int | str = 0
    curriculum: Curriculum | None = None  # the adaptive difficulty's (default: a fresh AdaptiveCurriculum)
    names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        spec = ",".join(self.envs) if isinstance(self.envs, (tuple, list)) else self.envs
        self.names = resolve_envs(spec)
        if self.difficulty == "adaptive":
            if self.curriculum is None:
                self.curriculum = AdaptiveCurriculum()
        elif isinstance(self.difficulty, str):
            raise ValueError(f"difficulty must be an integer >= 0 or 'adaptive', got {self.difficulty!r}")
        else:
            validate_level(self.difficulty)

    @property
    def adaptive(self) -> bool:
        return self.difficulty == "adaptive"

    def sample(self, rng: Any) -> tuple[str, int]:
        env = self.names[int(rng.integers(len(self.names)))] if len(self.names) > 1 else self.names[0]
        if not self.adaptive:
            return env, int(self.difficulty)
        # Only `window` and `record` are asked of the curriculum, so a shared one (a Ray actor's
        # handle, say) works here too; the draw stays with this sampler's seeded rng.
        low, high = self._curriculum.window(env)
        return env, int(rng.integers(low, high + 1))

    def record(self, env: str, level: int, success: bool) -> None:
        if self.adaptive:
            self._curriculum.record(env, level, success)

    @property
    def _curriculum(self) -> Curriculum:
        if self.curriculum is None:
            raise ValueError("a sampler with a fixed difficulty has no curriculum")
        return self.curriculum
