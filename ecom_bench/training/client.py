"""Clients of the OpenEnv server (`ecom_bench.training.server`), on openenv-core's own client.

* `EcomEnvClient`: openenv-core's WebSocket `EnvClient`, typed with our models; one client is
  one server session, playing one episode at a time.
* `CurriculumClient`: the server's adaptive curriculum (``/curriculum``) as a `Curriculum`, so
  every trainer process (TRL's, one per GPU) draws from and records into the same one.
* `drive_oracle`: N concurrent sessions played by the oracle, checked step by step against a
  local mirror; what the tests and the benchmark use (episodes/s, successes, errors).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from ecom_bench.envs.context import CatalogSpec, EnvContext, load_context
from ecom_bench.training.actions import to_hermes
from ecom_bench.training.env import EcomEnv
from ecom_bench.training.server import EcomAction, EcomObservation, EcomState


class EcomEnvClient(EnvClient[EcomAction, EcomObservation, EcomState]):
    """openenv-core's client for the ecom-bench server. `step` takes an `EcomAction` or raw
    model text.

        async with EcomEnvClient(base_url="http://127.0.0.1:8000") as env:
            result = await env.reset(seed=0, env="cart", difficulty=6)
            while not result.done:  # .messages: the whole conversation so far, every step
                obs = result.observation
                result = await env.step(await my_model(obs.messages, obs.tools))  # raw model text
        # or synchronously: with EcomEnvClient(base_url=...).sync() as env: ...

    A refused request (a bad reset, a step after the end) raises openenv's RuntimeError with
    the server's message; the session stays open.
    """

    def _step_payload(self, action: EcomAction | str) -> dict[str, Any]:
        if isinstance(action, str):
            return {"text": action}
        return action.model_dump(exclude_none=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[EcomObservation]:
        reward, done = payload.get("reward"), bool(payload.get("done", False))
        observation = EcomObservation(**payload.get("observation", {}), reward=reward, done=done)
        return StepResult(observation=observation, reward=reward, done=done)

    def _parse_state(self, payload: dict[str, Any]) -> EcomState:
        return EcomState(**payload)


class CurriculumClient:
    """The curriculum of an ``ecom-bench serve -d adaptive`` server, over HTTP: `window`, `record`,
    `state_dict` and `load_state_dict` as `AdaptiveCurriculum` has them, so trainer processes on
    any machine share it (and `CurriculumCheckpoint` saves and restores it with checkpoints).

    A refused request raises ValueError with the server's one-line reason (a bad state, an
    unknown env); a server that cannot be reached raises httpx's error.
    """

    def __init__(self, base_url: str, timeout_s: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout_s)

    def _answer(self, response: httpx.Response) -> dict[str, Any]:
        if response.status_code >= 400:
            try:
                detail = response.json().get("detail", response.text)
            except ValueError:
                detail = response.text
            raise ValueError(f"{self.base_url}{response.request.url.path}: {detail}")
        return response.json()

    def window(self, env: str) -> tuple[int, int]:
        answer = self._answer(self._http.get("/curriculum/window", params={"env": env}))
        return answer["low"], answer["high"]

    def record(self, env: str, level: int, success: bool) -> bool:
        if not isinstance(success, bool):
            raise TypeError(f"the curriculum counts success (a bool), not the shaped reward; got {success!r}")
        return bool(self._answer(self._http.post("/curriculum/record",
                                                 json={"env": env, "level": level, "success": success}))["promoted"])

    def state_dict(self) -> dict[str, Any]:
        return self._answer(self._http.get("/curriculum"))

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._answer(self._http.put("/curriculum", json=state))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "CurriculumClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"CurriculumClient({self.base_url!r})"


@dataclass
class OracleRun:
    """What `drive_oracle` measured. `episodes` counts completed ones; `errors` the episodes
    that raised or whose observations differed from the mirror's (their session stops)."""

    sessions: int
    episodes: int = 0
    successes: int = 0
    errors: int = 0
    wall_s: float = 0.0
    failures: list[str] = field(default_factory=list)  # the first few error messages

    @property
    def episodes_per_s(self) -> float:
        return self.episodes / self.wall_s if self.wall_s > 0 else 0.0

    def __str__(self) -> str:
        return (f"{self.sessions} sessions: {self.episodes} episodes, {self.successes} successes, "
                f"{self.errors} errors in {self.wall_s:.2f}s ({self.episodes_per_s:.1f} episodes/s)")


class Mismatch(AssertionError):
    """The server's observation differs from the mirror's."""


def _plain(value: Any) -> Any:
    """As it looks after a JSON round trip (tuples become lists), to compare with the wire."""
    return json.loads(json.dumps(value))


def _expect(what: str, server: Any, mirror: Any) -> None:
    if _plain(server) != _plain(mirror):
        raise Mismatch(f"{what} differs from the mirror's: server {str(server)[:300]} / mirror {str(mirror)[:300]}")


async def _play(client: EcomEnvClient, mirror: EcomEnv, reset: dict[str, Any], check: bool) -> bool:
    """One oracle episode on the server; returns its `success`."""
    result = await client.reset(**reset)
    info = result.observation.info
    observation, _ = mirror.reset(seed=info["seed"], options={
        "env": info["env"], "difficulty": info["difficulty"], "index": info["index"]})
    if check:
        _expect("the reset messages", result.observation.messages, observation["messages"])
        _expect("the tools", result.observation.tools, observation["tools"])
    while not result.done:
        text = to_hermes(mirror.scripted_action("oracle"))
        result = await client.step(EcomAction(text=text))
        observation, reward, terminated, truncated, info = mirror.step(text)
        if check:
            _expect("a step's messages", result.observation.messages, observation["messages"])
            _expect("a step's new messages and action", (result.observation.new_messages, result.observation.assistant),
                    (observation["new_messages"], observation["assistant"]))
            _expect("a step's (reward, done, truncated, info)",
                    (result.reward, result.done, result.observation.truncated, result.observation.info),
                    (reward, terminated or truncated, truncated, info))
    return bool(result.observation.info.get("success"))


async def _session(i: int, base_url: str, episodes: int, context: EnvContext, run: OracleRun,
                   seed: int, reset: dict[str, Any], check: bool, timeout_s: float) -> None:
    mirror = EcomEnv(context=context)
    try:
        async with EcomEnvClient(base_url=base_url, message_timeout_s=timeout_s) as client:
            for j in range(episodes):
                won = await _play(client, mirror, {**reset, "seed": seed + i * episodes + j}, check)
                run.episodes, run.successes = run.episodes + 1, run.successes + won  # after the await: no lost update
    except Exception as e:  # noqa: BLE001 - a session's failure is counted, not raised
        run.errors += 1
        if len(run.failures) < 5:
            run.failures.append(f"session {i}: {type(e).__name__}: {e}")


def drive_oracle(base_url: str, n_sessions: int = 1, episodes_per_session: int = 1, *, seed: int = 0,
                 reset: dict[str, Any] | None = None, context: EnvContext | None = None,
                 catalog: CatalogSpec | None = None, check: bool = True, timeout_s: float = 120.0) -> OracleRun:
    """Play `n_sessions` concurrent sessions of `episodes_per_session` oracle episodes each
    through `EcomEnvClient`; returns the counts and the wall time.

    The oracle reads the hidden goal, which stays on the server: each session keeps a local
    mirror `EcomEnv` reset to the server's episode (the same seed, env, difficulty and index
    give the same episode), asks it for the oracle's action, sends that as raw Hermes text
    and steps the mirror with it. With `check`, every server observation must equal the
    mirror's. The mirror needs the server's catalogue: pass its `context` or `catalog`.
    Episode k of session i resets with ``seed + i * episodes_per_session + k`` and `reset`
    (e.g. {"env": "cart", "difficulty": 6}; default: the server's).
    """
    for name, value in (("n_sessions", n_sessions), ("episodes_per_session", episodes_per_session)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    context = context or load_context((catalog or CatalogSpec()).validate())
    run = OracleRun(n_sessions)

    async def all_sessions() -> None:
        await asyncio.gather(*(_session(i, base_url, episodes_per_session, context, run, seed, dict(reset or {}),
                                        check, timeout_s) for i in range(n_sessions)))

    start = time.perf_counter()
    asyncio.run(all_sessions())
    run.wall_s = time.perf_counter() - start
    return run


__all__ = ["CurriculumClient", "EcomEnvClient", "Mismatch", "OracleRun", "drive_oracle"]
