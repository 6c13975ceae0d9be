"""Parallel rollouts on Ray actors (extra `ray`: ``pip install -e ".[ray]"``).

    from ecom_bench.training.rollouts import rollout
    results = rollout("oracle", 400, envs="C8", difficulty=6, workers=2)
    results.success_rate, results.episodes_per_second, results[0].reward

Why it is shaped this way:

* **One `EcomEnv` per actor.** Each actor loads the catalogue context once and plays many
  episodes, so the cost of a worker is paid once, not per episode (`RolloutWorkers` keeps the
  actors for many rollouts, e.g. one per training step).
* **Episodes are planned up front.** Episode ``i`` of a rollout is env ``names[i % k]`` of the
  ``k`` environments in `envs`, dataset sample ``i // k`` under dataset seed `seed` (exactly
  sample ``i // k`` of that env's Inspect task with ``-T seed=<seed>``). Workers only execute
  the plan, so with a fixed difficulty the results are the same for any number of workers,
  and the same as playing those episodes in one process.
* **One curriculum for all workers.** With ``difficulty="adaptive"`` the curriculum lives in one
  Ray actor; every worker reaches it through `CurriculumProxy` (``window(env)``,
  ``record(env, d, success)``: all `TaskSampler` asks), so each finished episode moves the one
  window. After the rollout its final state is written back into the curriculum you passed
  (and is `Rollout.curriculum`), so a training loop can keep one curriculum across rollouts.

Determinism under the adaptive curriculum: every episode's env, sample and the random number
that picks d within the window are fixed by (`seed`, i); the window itself is read when the
episode starts. With one worker, episodes run in order and the whole rollout (difficulties,
results, final curriculum) is reproducible. With several, which episodes have been recorded
when another starts depends on timing, so the difficulties (hence results and the final
window) can differ between runs; the curriculum still counts exactly `n` episodes.

A policy is a scripted policy's name ("oracle", "heuristic", "random", ...: played through
`EcomEnv.scripted_action`) or any picklable callable ``policy(messages, tools) -> action``
(chat messages so far, OpenAI tool schemas; the action is raw model text, an OpenAI-style
assistant message or an `AgentAction`). It is shipped to the actors with cloudpickle once
per rollout.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Protocol, TypeVar

import numpy as np

from ecom_bench.agents import get_policy
from ecom_bench.conversation import AgentAction, Policy
from ecom_bench.difficulty import validate_level
from ecom_bench.envs import resolve_envs
from ecom_bench.envs.context import CatalogSpec
from ecom_bench.training.actions import parse_action
from ecom_bench.training.curriculum import AdaptiveCurriculum, TaskSampler
from ecom_bench.training.env import MAX_SEED, EcomEnv

#: A rollout policy: a scripted policy's name, or ``policy(messages, tools) -> action``.
PolicyLike = str | Callable[[list[dict[str, Any]], list[dict[str, Any]]], Any]

_INSTALL = 'Ray rollouts need Ray: pip install -e ".[ray]"'


class RolloutError(RuntimeError):
    """A rollout could not finish (a worker died, it timed out, a worker could not start)."""


class PolicyError(RolloutError):
    """The policy raised, or returned something that is no action; names the episode and step."""


@dataclass(frozen=True)
class EpisodeRecord:
    """One finished episode. `messages` (the chat transcript) only with ``transcript=True``."""

    index: int  # position in the rollout, 0..n-1
    env: str
    difficulty: int
    seed: int  # dataset seed (Inspect's -T seed=)
    sample: int  # sample index in that env's dataset
    success: bool
    reward: float  # r_total in [-1, 0.9]
    reward_parts: dict[str, float]  # task, efficiency, hallucination, total, success
    turns: int
    steps: int  # actions taken
    end_reason: str  # an `EndReason` value
    end_detail: str  # the end in words
    messages: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Scored(Protocol):
    """What a rollout's summaries read of an episode."""

    @property
    def success(self) -> bool: ...
    @property
    def reward(self) -> float: ...


_Episode = TypeVar("_Episode", bound=_Scored)


class Rollout(list[_Episode]):
    """The episodes of one rollout (`EpisodeRecord`s; the async driver's `EpisodeTrace`s), in
    episode order: a plain list of them, plus

    * `curriculum`: the adaptive curriculum after the rollout (the object you passed, updated),
      or None for a fixed difficulty;
    * `timings`: seconds spent on ``ray_init`` (0 when Ray was already up), ``workers`` (actor
      start and catalogue load) and ``episodes`` (the episodes themselves).
    """

    def __init__(self, records: Iterable[_Episode] = (), curriculum: Any = None,
                 timings: dict[str, float] | None = None) -> None:
        super().__init__(records)
        self.curriculum = curriculum
        self.timings = dict(timings or {})

    @property
    def success_rate(self) -> float:
        return sum(r.success for r in self) / len(self) if self else 0.0

    @property
    def mean_reward(self) -> float:
        return sum(r.reward for r in self) / len(self) if self else 0.0

    @property
    def episodes_per_second(self) -> float:
        """Episodes over the time spent playing them (start-up excluded)."""
        seconds = self.timings.get("episodes", 0.0)
        return len(self) / seconds if seconds > 0 else float("nan")


# --------------------------------------------------------------------------- planning
@dataclass(frozen=True)
class PlannedEpisode:
    """Episode `index` of a rollout: sample `sample` of `env`'s dataset."""

    index: int
    env: str
    sample: int


def plan(n: int, envs: str | Iterable[str], seed: int) -> list[PlannedEpisode]:
    """The rollout's episodes, fixed before any worker starts: env round-robin, sample per env."""
    names = resolve_envs(",".join(envs) if not isinstance(envs, str) else envs)
    return [PlannedEpisode(i, names[i % len(names)], i // len(names)) for i in range(n)]


def _check_args(policy: Any, n: Any, envs: Any, difficulty: Any, curriculum: Any, workers: Any,
                seed: Any) -> tuple[tuple[str, ...], int | str, Any]:
    """Validate everything before Ray starts; returns (env names, difficulty, curriculum)."""
    for name, value, low in (("n", n, 0), ("workers", workers, 0), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if seed > MAX_SEED:
        raise ValueError(f"seed must be <= {MAX_SEED}, got {seed!r}")
    if not isinstance(envs, str) and not (isinstance(envs, (list, tuple)) and all(isinstance(e, str) for e in envs)):
        raise TypeError(f"envs must be an env or collection name, or a list of env names; got {envs!r}")
    names = resolve_envs(",".join(envs) if not isinstance(envs, str) else envs)
    if curriculum is not None:
        if not all(callable(getattr(curriculum, name, None)) for name in ("window", "record")):
            raise TypeError("curriculum must have window(env) and record(env, d, success), e.g. an "
                            f"AdaptiveCurriculum; got {type(curriculum).__name__}")
        if difficulty not in (None, "adaptive"):
            raise ValueError("a curriculum sets the difficulty: pass difficulty='adaptive' or None, "
                             f"got {difficulty!r}")
        difficulty = "adaptive"
    elif difficulty == "adaptive":
        curriculum = AdaptiveCurriculum()
    elif difficulty is None:
        difficulty = 0
    elif isinstance(difficulty, str):
        raise ValueError(f"difficulty must be an integer >= 0 or 'adaptive', got {difficulty!r}")
    else:
        difficulty = validate_level(difficulty)
    if isinstance(policy, str):
        for env in names:
            get_policy(env, policy)  # an unknown name fails here, listing the known ones
    elif not callable(policy):
        raise TypeError("policy must be a scripted policy's name ('oracle', 'heuristic', ...) or a callable "
                        f"policy(messages, tools) -> action; got {type(policy).__name__}")
    return names, difficulty, curriculum


# --------------------------------------------------------------------------- the worker
class CurriculumProxy:
    """`window`/`record` forwarded to the shared curriculum actor: what `TaskSampler` asks of a
    curriculum. `record` waits for the actor, so no episode is lost when the rollout ends."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    def window(self, env: str) -> tuple[int, int]:
        import ray

        low, high = ray.get(self.actor.window.remote(env))
        return low, high

    def record(self, env: str, level: int, success: bool) -> bool:
        import ray

        return ray.get(self.actor.record.remote(env, level, success))


class _SharedCurriculum:
    """The one curriculum of a rollout, held by a Ray actor (calls are served one at a time)."""

    def __init__(self, curriculum: Any) -> None:
        self.curriculum = curriculum

    def window(self, env: str) -> tuple[int, int]:
        return self.curriculum.window(env)

    def record(self, env: str, level: int, success: bool) -> bool:
        return self.curriculum.record(env, level, success)

    def get(self) -> Any:
        return self.curriculum


class EpisodeWorker:
    """Plays planned episodes on one `EcomEnv` (catalogue loaded once). Plain Python: Ray runs it
    as an actor; ``workers=0`` runs it in this process."""

    def __init__(self, catalog: CatalogSpec | None = None, strict: bool = True) -> None:
        self.env = EcomEnv(catalog=catalog, strict=strict)
        self.env.context  # noqa: B018 -- load the catalogue and index now, once
        self._job: tuple[Any, int | str, Any, bool] | None = None

    def ready(self) -> bool:
        return True

    def begin(self, policy: PolicyLike, difficulty: int | str, curriculum: Any, transcript: bool) -> None:
        """Set the policy and difficulty for the next `run` calls (sent once per rollout)."""
        self._job = (policy, difficulty, curriculum, transcript)

    def run(self, seed: int, tasks: list[PlannedEpisode]) -> list[EpisodeRecord]:
        return [self._episode(seed, task) for task in tasks]

    def _episode(self, seed: int, task: PlannedEpisode) -> EpisodeRecord:
        if self._job is None:
            raise RuntimeError("EpisodeWorker.begin() must come before run()")
        policy, difficulty, curriculum, transcript = self._job
        sampler = TaskSampler(task.env, difficulty, curriculum)
        # d is drawn from (seed, index), never from this worker's history: the same plan gives
        # the same episodes on any worker (and the same window gives the same d).
        _, level = sampler.sample(np.random.default_rng([seed, task.index]))
        env = self.env
        env.reset(seed=seed, options={"env": task.env, "difficulty": level, "index": task.sample})
        scripted: Policy | None = get_policy(task.env, policy) if isinstance(policy, str) else None
        info: dict[str, Any] = {}
        done = False
        while not done:
            action = env.scripted_action(scripted) if scripted is not None else self._act(policy, task, level)
            _, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        sampler.record(task.env, level, bool(info["success"]))
        episode = env.episode
        assert episode is not None  # reset() made it
        return EpisodeRecord(
            index=task.index, env=task.env, difficulty=level, seed=seed, sample=task.sample,
            success=bool(info["success"]), reward=float(episode.result().reward.total),
            reward_parts=dict(info["reward_parts"]), turns=episode.result().turns, steps=episode.steps,
            end_reason=info["end_reason"], end_detail=info["end_detail"],
            messages=env.messages() if transcript else None)

    def _act(self, policy: Callable[..., Any], task: PlannedEpisode, level: int) -> AgentAction:
        steps = self.env.episode.steps if self.env.episode is not None else 0
        where = f"episode {task.index} (env {task.env}, d {level}, sample {task.sample}), step {steps + 1}"
        try:
            action = policy(self.env.messages(), self.env.tools)
        except Exception as e:  # the user's code: report it by episode, without a worker traceback
            raise PolicyError(f"the policy raised {type(e).__name__}: {e} at {where}") from None
        try:
            return parse_action(action)
        except TypeError as e:
            raise PolicyError(f"the policy returned no action at {where}: {e}") from None


# --------------------------------------------------------------------------- Ray
def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError(_INSTALL) from None
    return ray


class RolloutWorkers:
    """A pool of `workers` episode actors that serves many rollouts (one per training step, say)
    without restarting actors or reloading the catalogue. Use it as a context manager, or
    call `close()`: its actors are killed, the Ray instance is left running.

    Args:
        workers: actors, one `EcomEnv` each (0: play in this process, no Ray).
        address: None starts a local Ray (``num_cpus`` = max(workers, CPUs)) unless Ray is
            already initialised in this process, which is then used as is; ``"auto"`` or
            ``"ray://host:port"`` connects to a running cluster (ecom-bench must be importable
            on its nodes). A Ray this starts stays up for later rollouts (`ray.shutdown()`).
        catalog: the catalogue each actor loads (default: the embedded synthetic one).
        strict: the published rule (an invalid call or unparseable output is a hard fail).
        actor_options: passed to each episode actor's ``.options()`` (default ``{"num_cpus": 1}``;
            e.g. ``{"num_gpus": 1}`` for a policy that runs a model on the actor).
        start_timeout: seconds to wait for the actors to start and load the catalogue.
    """

    def __init__(self, workers: int = 2, *, address: str | None = None, catalog: CatalogSpec | None = None,
                 strict: bool = True, actor_options: dict[str, Any] | None = None,
                 start_timeout: float = 300.0) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
            raise ValueError(f"workers must be an integer >= 0, got {workers!r}")
        catalog = (catalog or CatalogSpec()).validate()
        self.workers = workers
        self.timings = {"ray_init": 0.0, "workers": 0.0}
        self._actors: list[Any] = []
        self._local: EpisodeWorker | None = None
        self._closed = False
        start = time.perf_counter()
        if workers == 0:
            self._local = EpisodeWorker(catalog, strict)
            self.timings["workers"] = time.perf_counter() - start
            return
        ray = _ray()
        if not ray.is_initialized():
            if address is None:  # "local": a fresh Ray on this machine, never a stray cluster
                ray.init(address="local", num_cpus=max(workers, os.cpu_count() or 1), include_dashboard=False)
            else:
                ray.init(address=address)
        self.timings["ray_init"] = time.perf_counter() - start
        options = {"num_cpus": 1, **(actor_options or {})}
        need, have = workers * options["num_cpus"], ray.cluster_resources().get("CPU", 0)
        if need > have:
            raise ValueError(f"workers={workers} need {need:g} CPUs but this Ray cluster has {have:g}; use "
                             "fewer workers or start Ray with more CPUs (ray.init(num_cpus=...))")
        start = time.perf_counter()
        actor_class = ray.remote(EpisodeWorker).options(**options)
        self._actors = [actor_class.remote(catalog, strict) for _ in range(workers)]
        try:
            ray.get([a.ready.remote() for a in self._actors], timeout=start_timeout)
        except ray.exceptions.GetTimeoutError:
            self.close()
            raise RolloutError(f"the {workers} rollout workers did not start within {start_timeout:g} s "
                               "(is the cluster short of resources?)") from None
        except ray.exceptions.RayError as e:
            self.close()
            raise RolloutError(f"a rollout worker failed to start: {_cause(e)}") from e
        self.timings["workers"] = time.perf_counter() - start

    def rollout(self, policy: PolicyLike, n: int, envs: str | Iterable[str] = "cart",
                difficulty: int | str | None = None, curriculum: Any = None, seed: int = 0, *,
                transcript: bool = False, timeout: float | None = None) -> Rollout[EpisodeRecord]:
        """Play `n` planned episodes on the pool; see `rollout` for the arguments."""
        if self._closed:
            raise RolloutError("this RolloutWorkers is closed (it closes after an error); start a new one")
        names, difficulty, curriculum = _check_args(policy, n, envs, difficulty, curriculum, self.workers,
                                                    seed)
        tasks = plan(n, names, seed)
        start = time.perf_counter()
        if self._local is not None:
            self._local.begin(policy, difficulty, curriculum, transcript)
            records = self._local.run(seed, tasks)
        else:
            records = self._remote(policy, tasks, difficulty, curriculum, seed, transcript, timeout)
        return Rollout(records, curriculum if difficulty == "adaptive" else None,
                       {**self.timings, "episodes": time.perf_counter() - start})

    def _remote(self, policy: PolicyLike, tasks: list[PlannedEpisode], difficulty: int | str, curriculum: Any,
                seed: int, transcript: bool, timeout: float | None) -> list[EpisodeRecord]:
        ray = _ray()
        holder = None
        if difficulty == "adaptive":
            holder = ray.remote(_SharedCurriculum).options(num_cpus=0).remote(curriculum)
        proxy = CurriculumProxy(holder) if holder is not None else None
        policy_ref = ray.put(policy)
        # Small chunks handed out as actors free up (two in flight each, so none waits on the driver).
        size = max(1, min(16, math.ceil(len(tasks) / (len(self._actors) * 8))))
        chunks = [tasks[i:i + size] for i in range(0, len(tasks), size)]
        pending: dict[Any, Any] = {}
        records: list[EpisodeRecord] = []
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            ray.get([a.begin.remote(policy_ref, difficulty, proxy, transcript) for a in self._actors])
            for actor in self._actors * 2:
                if chunks:
                    pending[actor.run.remote(seed, chunks.pop(0))] = actor
            while pending:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                done, _ = ray.wait(list(pending), num_returns=1, timeout=left)
                if not done:
                    raise RolloutError(f"the rollout timed out after {timeout:g} s with {len(records)} of "
                                       f"{len(tasks)} episodes done")
                actor = pending.pop(done[0])
                records.extend(ray.get(done[0]))
                if chunks:
                    pending[actor.run.remote(seed, chunks.pop(0))] = actor
            if holder is not None:
                _write_back(curriculum, ray.get(holder.get.remote()))
        except ray.exceptions.RayTaskError as e:
            self.close()
            if isinstance(e.cause, PolicyError):
                raise PolicyError(str(e.cause)) from None
            hint = ""
            if isinstance(e.cause, ImportError):
                hint = (" (the policy is unpickled on the workers: its module must be importable there; "
                        "define it in your script, install its package, or ray.init(runtime_env=...))")
            raise RolloutError(f"a rollout worker failed: {_cause(e)}{hint}") from e
        except ray.exceptions.RayError as e:
            self.close()
            raise RolloutError(f"a rollout worker died: {_cause(e)}") from e
        except BaseException:
            self.close()
            raise
        finally:
            if holder is not None:
                ray.kill(holder)
        return sorted(records, key=lambda r: r.index)

    def close(self) -> None:
        """Kill the actors (not the Ray instance). Safe to call twice."""
        if self._actors:
            ray = _ray()
            for actor in self._actors:
                ray.kill(actor)
        self._actors = []
        self._local = None
        self._closed = True

    def __enter__(self) -> "RolloutWorkers":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _cause(error: Exception) -> str:
    cause = getattr(error, "cause", None) or error
    return f"{type(cause).__name__}: {cause}".splitlines()[0]


def _write_back(curriculum: Any, final: Any) -> None:
    """The shared curriculum's final state into the caller's object (so it keeps counting)."""
    if isinstance(curriculum, AdaptiveCurriculum):
        curriculum.config, curriculum.windows = final.config, final.windows
    else:
        vars(curriculum).update(vars(final))


def rollout(policy: PolicyLike, n: int, envs: str | Iterable[str] = "cart",
            difficulty: int | str | None = None, curriculum: Any = None, workers: int = 2,
            address: str | None = None, seed: int = 0, *,
            catalog: CatalogSpec | None = None, strict: bool = True, transcript: bool = False,
            timeout: float | None = None, actor_options: dict[str, Any] | None = None) -> Rollout[EpisodeRecord]:
    """Play `n` episodes in parallel on `workers` Ray actors; returns their `EpisodeRecord`s in
    episode order (a `Rollout`: a list with `curriculum` and `timings`).

    Args:
        policy: a scripted policy's name ("oracle", "heuristic", "random", ...) or a picklable
            callable ``policy(messages, tools) -> action``.
        n: how many episodes.
        envs: an environment, a collection ("C8") or a list; episode i plays env i mod k.
        difficulty: a level d >= 0 (default 0), or "adaptive" (a fresh `AdaptiveCurriculum`
            unless `curriculum` is given).
        curriculum: the curriculum to draw d from and update (implies "adaptive"); held by one
            actor during the rollout, then updated in place with every episode counted (left
            as it was if the rollout fails).
        workers: episode actors (0: in this process, without Ray).
        address: None (a local Ray, or the one this process already started), "auto" or
            "ray://host:port"; see `RolloutWorkers`.
        seed: the dataset seed; with a fixed difficulty the results depend only on (policy, n,
            envs, difficulty, seed), not on `workers`.
        catalog, strict, actor_options: see `RolloutWorkers`.
        transcript: keep each episode's chat messages (`EpisodeRecord.messages`), for training.
        timeout: seconds for the whole rollout before a `RolloutError` (default: none).

    Raises `PolicyError` when the policy raises or returns no action (naming the episode and
    step), `RolloutError` when a worker dies or the rollout times out, ValueError/TypeError
    for bad arguments (before Ray starts), ImportError without Ray.
    """
    _check_args(policy, n, envs, difficulty, curriculum, workers, seed)
    for name, flag in (("strict", strict), ("transcript", transcript)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
        if workers == 0:  # a policy stuck in this very process cannot be interrupted
            raise ValueError("timeout needs workers >= 1 (Ray actors); with workers=0 the rollout runs "
                             "in this process and cannot stop a policy that hangs")
    with RolloutWorkers(workers, address=address, catalog=catalog, strict=strict,
                        actor_options=actor_options) as pool:
        return pool.rollout(policy, n, envs, difficulty, curriculum, seed, transcript=transcript,
                            timeout=timeout)


def throughput(policy: PolicyLike = "oracle", n: int = 400, envs: str = "C8", difficulty: int = 6,
               workers: Iterable[int] = (1, 2), *, seed: int = 0, catalog: CatalogSpec | None = None,
               address: str | None = None) -> dict[int, dict[str, float]]:
    """Episodes/s of a rollout per worker count (0: in this process, no Ray), start-up apart.

    Returns ``{workers: {"ray_init", "workers", "episodes", "episodes_per_s", "successes"}}``, the
    first three in seconds (``ray_init`` is 0 once Ray is up: only the first count pays it).
    """
    out = {}
    for w in workers:
        result = rollout(policy, n, envs, difficulty, workers=w, address=address, seed=seed, catalog=catalog)
        if not len(result) == n:
            raise RolloutError(f"expected {n} episodes, got {len(result)}")
        out[w] = {**result.timings, "episodes_per_s": result.episodes_per_second,
                  "successes": sum(r.success for r in result)}
    return out


__all__ = ["CurriculumProxy", "EpisodeRecord", "EpisodeWorker", "PlannedEpisode", "PolicyError", "PolicyLike",
           "Rollout", "RolloutError", "RolloutWorkers", "plan", "rollout", "throughput"]
