"""The environments as an OpenEnv server: openenv-core's app over `EcomEnv` (extra `train`).

openenv-core's `create_app` supplies the protocol: ``/ws`` holds one persistent session per
WebSocket, each with its own `EcomEnvironment` from our factory (so its own episode), up to
``max_sessions`` at once; ``/reset``, ``/step`` and ``/state`` over plain HTTP are stateless
(a fresh environment per request); ``/schema``, ``/metadata`` and ``/health`` describe it.
Clients: openenv's own (`ecom_bench.training.client.EcomEnvClient`, or `GenericEnvClient`).

This module adds only what openenv-core lacks for a public training server:

* typed models (`EcomAction`, `EcomObservation`, `EcomState`) and the environment;
* one catalogue context for every session (loading it is the slow part), and a lock around a
  shared adaptive curriculum (sessions step on their own threads);
* bad requests answered with a 4xx and one readable line (openenv lets an environment's
  exception become a 500 and echoes raw pydantic errors), and a cap on request sizes;
* a WebSocket frame that is JSON but no object gets an error frame (openenv's loop would end
  the session with a cryptic AttributeError).

Model output that is no valid tool call is *not* a bad request: it is an action, and the
episode scores it as a hard fail (reward -1, done) under the strict rule.

    ecom-bench serve --envs C8 --difficulty adaptive --port 8000
    uvicorn ecom_bench.training.server:app      # configured by ECOM_BENCH_SERVE_* variables
"""

from __future__ import annotations

import functools
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import (Action, ConcurrencyConfig, EnvironmentMetadata, Observation, State,
                                           StepRequest, WSErrorCode, WSErrorResponse)
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError
from starlette.exceptions import HTTPException
from starlette.websockets import WebSocketDisconnect

from ecom_bench._version import __version__
from ecom_bench.envs.context import CatalogSpec, EnvContext, load_context
from ecom_bench.training.curriculum import AdaptiveCurriculum, load_state, save_state
from ecom_bench.training.env import MAX_SEED, EcomEnv

#: Sessions served at once by default (each holds one episode and one worker thread).
DEFAULT_MAX_SESSIONS = 256
#: A session idle this long is closed (its unfinished episode counted as failed), so connections
#: that hold a slot and never play cannot lock the server.
DEFAULT_SESSION_TIMEOUT_S = 600.0

#: How often a served curriculum is written to its --curriculum-state file when it changed.
DEFAULT_CURRICULUM_SAVE_S = 30.0

#: The largest request body or WebSocket message accepted (a model turn is a few KB).
MAX_REQUEST_BYTES = 1 << 20


# ---------------------------------------------------------------------------------- models
class EcomAction(Action):
    """One agent turn: raw model ``text`` (Hermes ``<tool_call>`` blocks, a bare JSON call or a
    message to the customer, parsed server-side exactly as `EcomEnv.step` does), or an
    OpenAI-style assistant message: ``content`` and/or ``tool_calls``."""

    text: str | None = Field(None, description="raw model output (give this, or content/tool_calls)")
    content: str | None = Field(None, description="assistant message content (structured form)")
    tool_calls: list[dict[str, Any]] | None = Field(
        None, description='OpenAI-style calls: [{"id", "type": "function", "function": {"name", "arguments"}}]')

    @model_validator(mode="after")
    def _one_form(self) -> "EcomAction":
        structured = self.content is not None or self.tool_calls is not None
        if self.text is not None and structured:
            raise PydanticCustomError("action_form", "give either text or content/tool_calls, not both")
        if self.text is None and not structured:
            raise PydanticCustomError("action_form", "an action needs text, or content and/or tool_calls")
        return self

    def to_env(self) -> str | dict[str, Any]:
        """What `EcomEnv.step` takes."""
        if self.text is not None:
            return self.text
        return {"content": self.content or "", "tool_calls": self.tool_calls or []}


class EcomObservation(Observation):
    """The conversation after a reset or step. ``reward`` is 0 until the end, then r_total in
    [-1, 0.9]."""

    messages: list[dict[str, Any]] = Field(
        default_factory=list, description="the whole conversation so far as chat-template messages (system, "
        "customer, assistant with reasoning_content and tool_calls, tool results): what the model reads next")
    new_messages: list[dict[str, Any]] = Field(
        default_factory=list, description="the messages this reset or step added (system and customer on reset; "
        "the tool results or the customer's reply after a step)")
    assistant: dict[str, Any] | None = Field(
        None, description="the step's action as the server read it: content, reasoning_content and tool_calls "
        "with their ids (None on reset)")
    tools: list[dict[str, Any]] | None = Field(
        None, description="the episode's tools in OpenAI function format")
    info: dict[str, Any] = Field(
        default_factory=dict, description="EcomEnv's info: env, difficulty, turn, budgets, success and, "
        "at the end, reward_parts, end_reason, hard_fail, hard_fail_cause and the explanation")
    truncated: bool = Field(False, description="the episode ran out of turns or steps (gymnasium's truncated)")


class EcomState(State):
    """The session's episode: its id and steps, and which task it is."""

    env: str | None = Field(None, description="the environment of the current episode")
    difficulty: int | None = Field(None, description="its difficulty level")
    seed: int | None = Field(None, description="its dataset seed (with index: the Inspect sample)")
    index: int | None = Field(None, description="its sample index")
    done: bool = Field(False, description="whether the episode has ended")


class _ResetParams(BaseModel):
    """Reset arguments, checked strictly: the WebSocket path hands them over unvalidated."""

    model_config = ConfigDict(extra="forbid", strict=True)

    seed: int | None = Field(None, ge=0, le=MAX_SEED)
    episode_id: str | None = Field(None, max_length=255)
    env: str | None = None
    difficulty: int | str | None = None  # a bad string is refused by EcomEnv, in its words
    index: int | None = Field(None, ge=0)


#: Fields a reset / step body may carry (openenv passes the rest on as keyword arguments, and
#: names like "self" crash its dispatch): ours, plus gymnasium's `options`; openenv's step request.
RESET_FIELDS = frozenset(_ResetParams.model_fields) | {"options"}
STEP_FIELDS = frozenset(StepRequest.model_fields)


# ---------------------------------------------------------------------------------- errors
class RequestError(Exception):
    """A request the server refuses: one readable line, answered with HTTP ``status`` (and as
    an error message on a WebSocket, whose session stays open)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def readable(errors: list[Any] | Any) -> str:
    """Pydantic / FastAPI validation errors as one line (only their location and message:
    their ``ctx`` can hold exception objects that do not serialise)."""
    if not isinstance(errors, list):
        return str(errors)
    parts = []
    for e in errors:
        if not isinstance(e, dict):
            parts.append(str(e))
        elif e.get("type") == "json_invalid":
            parts.append(f"the body is not valid JSON ({(e.get('ctx') or {}).get('error', 'decode error')})")
        else:
            loc = ".".join(str(p) for p in e.get("loc", ()) if p != "body")
            parts.append(f"{loc}: {e.get('msg', e)}" if loc else str(e.get("msg", e)))
    return "; ".join(parts) or "invalid request"


# ---------------------------------------------------------------------------------- environment
class EcomEnvironment(Environment[EcomAction, EcomObservation, EcomState]):
    """One session's environment: an `EcomEnv` over a shared catalogue context.

    ``reset(seed=, env=, difficulty=, index=)`` (or gymnasium's ``options={...}``) picks the
    episode exactly as `EcomEnv.reset` does: the same arguments give the same episode.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True  # no mutable state is shared but the locked curriculum

    def __init__(self, envs: str = "cart", difficulty: int | str = 0, *, context: EnvContext | None = None,
                 curriculum: Any | None = None) -> None:
        super().__init__()
        self._env = EcomEnv(envs, difficulty, curriculum=curriculum, context=context)
        self._state = EcomState()

    def reset(self, seed: int | None = None, episode_id: str | None = None,
              options: dict[str, Any] | None = None, **kwargs: Any) -> EcomObservation:
        if options is not None and not isinstance(options, dict):
            raise RequestError(f"options must be an object, got {type(options).__name__}")
        try:
            params = _ResetParams.model_validate({**(options or {}), **kwargs, "seed": seed, "episode_id": episode_id})
        except ValidationError as e:
            raise RequestError(f"bad reset: {readable(e.errors())}") from None
        chosen = {k: v for k in ("env", "difficulty", "index") if (v := getattr(params, k)) is not None}
        try:
            observation, info = self._env.reset(seed=params.seed, options=chosen)
        except (ValueError, TypeError) as e:  # an unknown env, a bad level
            raise RequestError(str(e)) from None
        self._state = EcomState(episode_id=params.episode_id or str(uuid.uuid4()), env=info["env"],
                                difficulty=info["difficulty"], seed=info["seed"], index=info["index"])
        return EcomObservation(messages=observation["messages"], new_messages=observation["new_messages"],
                               tools=observation["tools"], info=info)

    def step(self, action: EcomAction, timeout_s: float | None = None, **kwargs: Any) -> EcomObservation:
        episode = self._env.episode
        if episode is None:
            raise RequestError("no episode in this session: reset first (plain HTTP /step is stateless in "
                               "OpenEnv; play episodes over the WebSocket /ws, e.g. with EcomEnvClient)", 409)
        if episode.done:
            raise RequestError("the episode has ended: reset to start another", 409)
        observation, reward, terminated, truncated, info = self._env.step(action.to_env())
        self._state.step_count += 1
        self._state.done = terminated or truncated
        return EcomObservation(messages=observation["messages"], new_messages=observation["new_messages"],
                               assistant=observation["assistant"], tools=observation["tools"], info=info,
                               reward=reward, done=terminated or truncated, truncated=truncated)

    @property
    def state(self) -> EcomState:
        return self._state

    def close(self) -> None:
        """The session ended (a disconnect, a close frame, the idle timeout): an unfinished
        episode counts as a failure, or a client could drop every episode it is unsure of."""
        self._env.close()

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="ecom-bench", version=__version__,
            description="Verifiable multi-turn e-commerce customer-service environments: a tool-using "
            "agent serves a simulated customer; the reward is computed by code from a hidden goal.")


class _LockedCurriculum:
    """A curriculum shared by every session: sessions step (and record) on their own threads.
    With a `path`, its state is saved there (atomically) by `save()` whenever it changed."""

    def __init__(self, curriculum: Any, path: str | os.PathLike[str] | None = None) -> None:
        self.curriculum = curriculum
        self.path = path
        self._lock = threading.Lock()
        self._changes = 0  # records and loads since the last save
        self._saving = threading.Lock()

    def window(self, env: str) -> tuple[int, int]:
        with self._lock:
            return self.curriculum.window(env)

    def record(self, env: str, level: int, success: bool) -> Any:
        with self._lock:
            promoted = self.curriculum.record(env, level, success)
            self._changes += 1
            return promoted

    def state_dict(self) -> dict[str, Any]:
        with self._lock:
            return self.curriculum.state_dict()

    def load_state_dict(self, state: Any) -> None:
        with self._lock:
            self.curriculum.load_state_dict(state)
            self._changes += 1

    def save(self, force: bool = False) -> bool:
        """Write the state to `path` if it changed since the last save (or `force`)."""
        if self.path is None:
            return False
        with self._saving:
            with self._lock:
                if not (force or self._changes):
                    return False
                state, self._changes = self.curriculum.state_dict(), 0
            save_state(state, self.path)
            return True


class _RecordRequest(BaseModel):
    """One finished episode, counted by the served curriculum (`CurriculumClient.record`)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    env: str
    level: int = Field(ge=0)
    success: bool


def _serve_curriculum(app: FastAPI, curriculum: _LockedCurriculum | None, difficulty: int | str) -> None:
    """``/curriculum`` (GET its state, PUT a new one), ``/curriculum/window`` and
    ``/curriculum/record``: the served curriculum as a service, one for every trainer process."""

    def served() -> _LockedCurriculum:
        if curriculum is None:
            raise RequestError(f"this server plays a fixed difficulty ({difficulty}): it has no curriculum "
                               "(serve with --difficulty adaptive)", 409)
        return curriculum

    @app.get("/curriculum", tags=["Curriculum"], summary="The adaptive curriculum's state (state_dict)")
    def get_curriculum() -> dict[str, Any]:
        return served().state_dict()

    @app.put("/curriculum", tags=["Curriculum"], summary="Replace the curriculum's state (a state_dict)")
    async def put_curriculum(request: Request) -> dict[str, Any]:
        target = served()
        if not callable(getattr(target.curriculum, "load_state_dict", None)):
            raise RequestError(f"this server's curriculum ({type(target.curriculum).__name__}) cannot be set", 409)
        try:
            state = json.loads(await request.body())
        except (ValueError, RecursionError) as e:
            raise RequestError(f"the body is not valid JSON ({e})") from None
        try:
            target.load_state_dict(state)
        except ValueError as e:
            raise RequestError(f"bad curriculum state: {e}", 422) from None
        return target.state_dict()

    @app.get("/curriculum/window", tags=["Curriculum"], summary="One environment's window [low, high]")
    def get_window(env: str) -> dict[str, Any]:
        try:
            low, high = served().window(env)
        except ValueError as e:
            raise RequestError(str(e)) from None
        return {"env": env, "low": low, "high": high}

    @app.post("/curriculum/record", tags=["Curriculum"], summary="Count one finished episode")
    def post_record(episode: _RecordRequest) -> dict[str, Any]:
        target = served()
        try:
            promoted = target.record(episode.env, episode.level, episode.success)
            low, high = target.window(episode.env)
        except ValueError as e:
            raise RequestError(str(e)) from None
        return {"promoted": bool(promoted), "env": episode.env, "low": low, "high": high}


def _periodic_saves(curriculum: _LockedCurriculum, every_s: float) -> threading.Event:
    """A daemon thread saving the curriculum every `every_s` seconds it changed; set the event to stop it."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            try:
                curriculum.save()
            except OSError as e:  # a full disk must not stop the server; the next save retries
                print(f"ecom-bench: could not save the curriculum to {curriculum.path}: {e}", file=sys.stderr,
                      flush=True)

    threading.Thread(target=loop, name="curriculum-saver", daemon=True).start()
    return stop


# ---------------------------------------------------------------------------------- app
def create_server_app(envs: str = "C8", difficulty: int | str = 6, *, max_sessions: int = DEFAULT_MAX_SESSIONS,
                      catalog: CatalogSpec | None = None, embedder: str = "wordllama",
                      context: EnvContext | None = None, curriculum: Any | None = None,
                      session_timeout_s: float | None = DEFAULT_SESSION_TIMEOUT_S,
                      curriculum_state: str | os.PathLike[str] | None = None,
                      curriculum_save_s: float = DEFAULT_CURRICULUM_SAVE_S) -> FastAPI:
    """openenv-core's app serving `envs` at `difficulty` (a level, or "adaptive" from one
    `curriculum` shared by all sessions, default a fresh `AdaptiveCurriculum`).

    `curriculum_state`: a JSON file holding the curriculum: loaded if it exists (it replaces
    `curriculum`), written now, then every `curriculum_save_s` seconds it changed and when
    `serve` stops. The curriculum is read and set over HTTP at ``/curriculum``.

    Loads the catalogue and warms its search index once, before serving; raises ValueError for
    bad settings (an unknown env, a bad level, a bad state file) before any of that.
    """
    if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 1:
        raise ValueError(f"max_sessions must be an integer >= 1, got {max_sessions!r}")
    EcomEnv(envs, difficulty, context=context)  # validates envs and difficulty; loads nothing
    shared: _LockedCurriculum | None = None
    if curriculum_state is not None:
        if difficulty != "adaptive":
            raise ValueError(f"a curriculum state file needs difficulty 'adaptive' (this server plays d = {difficulty})")
        if not (isinstance(curriculum_save_s, (int, float)) and curriculum_save_s > 0):
            raise ValueError(f"the curriculum save interval must be a number of seconds > 0, got {curriculum_save_s!r}")
        if os.path.exists(curriculum_state):
            curriculum = load_state(curriculum_state)
    if difficulty == "adaptive":
        curriculum = shared = _LockedCurriculum(curriculum or AdaptiveCurriculum(), curriculum_state)
        shared.save(force=True)  # a path that cannot be written fails now, not an hour into training
    if context is None:
        context = load_context((catalog or CatalogSpec()).validate(), embedder)
    context.search_engine.warm()
    factory = functools.partial(EcomEnvironment, envs, difficulty, context=context, curriculum=curriculum)
    app = create_app(factory, EcomAction, EcomObservation, env_name="ecom_bench",
                     concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions,
                                                          session_timeout=session_timeout_s))
    _harden(app)
    _serve_curriculum(app, shared, difficulty)
    if shared is not None and shared.path is not None:
        app.state.curriculum_saver = _periodic_saves(shared, curriculum_save_s)
    app.state.curriculum = shared
    return app


def _harden(app: FastAPI) -> None:
    """4xx with one readable line for every bad request; a cap on body sizes."""

    @app.exception_handler(RequestError)
    async def refused(request: Request, exc: RequestError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": readable(exc.errors())}, status_code=422)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        # openenv raises HTTPException(422, detail=pydantic errors) for a bad action
        return JSONResponse({"detail": readable(exc.detail)}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    app.add_middleware(_RequestGuard, limit=MAX_REQUEST_BYTES)
    app.add_middleware(_WebSocketGuard)


def _refusal(path: str, body: bytes) -> tuple[int, dict[str, Any]] | None:
    """(status, JSON answer) for a body openenv would crash on or that would bypass the session
    limit; None to pass it on. Malformed JSON is left to openenv (it answers 422 itself)."""
    try:
        data = json.loads(body) if body.strip() else {}
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    fields = {"/reset": RESET_FIELDS, "/step": STEP_FIELDS}.get(path)
    if fields is not None:
        unknown = sorted(set(data) - fields)
        if unknown:
            return 422, {"detail": f"unknown field(s) {', '.join(map(repr, unknown))}; "
                                   f"{path} takes {', '.join(sorted(fields))}"}
    if path == "/mcp":
        method, params = data.get("method"), data.get("params")
        error = None
        if method in ("openenv/session/create", "openenv/session/close"):
            # An MCP session takes a slot of the session limit and outlives any connection; this
            # server has no MCP tools, so its sessions are only ever a way around the limit.
            error = (403, "ecom-bench serves no MCP sessions: play episodes over the WebSocket /ws")
        elif isinstance(params, dict) and "session_id" in params and not isinstance(params["session_id"], str):
            error = (400, "params.session_id must be a string")
        if error:
            return error[0], {"jsonrpc": "2.0", "id": data.get("id") if isinstance(data.get("id"), (str, int)) else None,
                              "error": {"code": -32600, "message": error[1]}, "detail": error[1]}
    return None


class _RequestGuard:
    """ASGI middleware: an HTTP body over `limit` bytes gets 413 before any handler reads it
    (declared by Content-Length or streamed chunked), and a body `_refusal` names gets its 4xx.
    WebSocket messages are capped by uvicorn's ``ws_max_size`` and checked by `_WebSocketGuard`."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers", ())).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            return await self._too_large(receive, send)
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return None
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                return await self._too_large(receive, send)
        if scope.get("method") == "POST" and (refused := _refusal(scope.get("path", ""), bytes(body))):
            status, answer = refused
            return await JSONResponse(answer, status_code=status)({"type": "http"}, receive, send)
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        return await self.app(scope, replay, send)

    async def _too_large(self, receive: Any, send: Any) -> None:
        response = JSONResponse({"detail": f"request body over {self.limit} bytes"}, status_code=413,
                                headers={"connection": "close"})
        await response({"type": "http"}, receive, send)


class _WebSocketGuard:
    """ASGI middleware: openenv's ``/ws`` loop reads text frames and assumes each is a JSON
    object; a binary frame or a JSON array / number ends the session with a cryptic error. Such
    frames are answered here with openenv's error message, and the session goes on."""

    NOT_AN_OBJECT = WSErrorResponse(data={
        "message": 'a message must be a JSON object {"type": "reset" | "step" | "state" | "close", "data": {...}}',
        "code": WSErrorCode.INVALID_JSON}).model_dump_json()
    NOT_JSON = WSErrorResponse(data={
        "message": "a message must be JSON (this one does not parse, or nests or counts too deep)",
        "code": WSErrorCode.INVALID_JSON}).model_dump_json()
    NO_MCP = WSErrorResponse(data={
        "message": "ecom-bench serves no MCP over /ws: send reset, step, state or close",
        "code": WSErrorCode.UNKNOWN_TYPE}).model_dump_json()

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            return await self.app(scope, receive, send)

        async def guarded() -> dict[str, Any]:
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    return message
                text = message.get("text")
                if text is None:  # a binary frame: the same JSON, as text
                    try:
                        text = (message.get("bytes") or b"").decode()
                    except UnicodeDecodeError:
                        text = ""
                try:
                    data = json.loads(text)
                    answer = None if isinstance(data, dict) else self.NOT_AN_OBJECT
                    if answer is None and data.get("type") == "mcp":  # an MCP session would escape the limit
                        answer = self.NO_MCP
                    if answer is None and data.get("type") == "reset" and isinstance(data.get("data"), dict):
                        unknown = sorted(set(data["data"]) - RESET_FIELDS)
                        if unknown:
                            answer = WSErrorResponse(data={
                                "message": f"unknown reset field(s) {', '.join(map(repr, unknown))}; reset takes "
                                           f"{', '.join(sorted(RESET_FIELDS))}",
                                "code": WSErrorCode.VALIDATION_ERROR}).model_dump_json()
                except (ValueError, RecursionError):  # openenv's own parse would end the session
                    answer = self.NOT_JSON
                if answer is None:
                    return {"type": "websocket.receive", "text": text}
                await send({"type": "websocket.send", "text": answer})  # openenv waits in receive

        try:
            return await self.app(scope, guarded, send)
        except WebSocketDisconnect:  # openenv closes a socket the client already dropped: nothing to report
            return None


def __getattr__(name: str) -> Any:
    """``app``: the module-level app of openenv.yaml and ``uvicorn ecom_bench.training.server:app``,
    built on first use from ECOM_BENCH_SERVE_ENVS (C8), _DIFFICULTY (6), _MAX_SESSIONS and
    ECOM_BENCH_CATALOG_SIZE."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    difficulty = os.environ.get("ECOM_BENCH_SERVE_DIFFICULTY", "6")
    size = os.environ.get("ECOM_BENCH_CATALOG_SIZE")
    app = create_server_app(os.environ.get("ECOM_BENCH_SERVE_ENVS", "C8"),
                            difficulty if difficulty == "adaptive" else int(difficulty),
                            max_sessions=int(os.environ.get("ECOM_BENCH_SERVE_MAX_SESSIONS", DEFAULT_MAX_SESSIONS)),
                            catalog=CatalogSpec(size=int(size) if size else None))
    globals()["app"] = app
    return app


# ---------------------------------------------------------------------------------- running it
def serve(host: str = "127.0.0.1", port: int = 8000, envs: str = "C8", difficulty: int | str = 6, *,
          max_sessions: int = DEFAULT_MAX_SESSIONS, catalog: CatalogSpec | None = None,
          embedder: str = "wordllama", session_timeout_s: float | None = DEFAULT_SESSION_TIMEOUT_S,
          curriculum_state: str | os.PathLike[str] | None = None,
          curriculum_save_s: float = DEFAULT_CURRICULUM_SAVE_S, log_level: str = "warning") -> None:
    """Build the app and serve it with uvicorn until interrupted (SIGINT or SIGTERM); the
    curriculum, if it has a state file, is saved once more after the last request."""
    import uvicorn

    app = create_server_app(envs, difficulty, max_sessions=max_sessions, catalog=catalog, embedder=embedder,
                            session_timeout_s=session_timeout_s, curriculum_state=curriculum_state,
                            curriculum_save_s=curriculum_save_s)
    kept = f", curriculum kept in {curriculum_state}" if curriculum_state is not None else ""
    print(f"ecom-bench: serving {envs} at difficulty {difficulty} on http://{host}:{port} "
          f"(WebSocket /ws, up to {max_sessions} sessions{kept})", flush=True)
    saved = app.state.curriculum if app.state.curriculum is not None and app.state.curriculum.path else None

    class Server(uvicorn.Server):
        """uvicorn's server, saving the curriculum after the last request: uvicorn re-raises the
        SIGTERM / SIGINT it caught once it is done, so code after `run()` would never run."""

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            await super().shutdown(sockets)
            if saved is not None:
                app.state.curriculum_saver.set()
                saved.save(force=True)

    Server(uvicorn.Config(app, host=host, port=port, ws_max_size=MAX_REQUEST_BYTES, log_level=log_level)).run()


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@contextmanager
def running_server(envs: str = "C8", difficulty: int | str = 6, *, max_sessions: int = DEFAULT_MAX_SESSIONS,
                   catalog_size: int | None = None, host: str = "127.0.0.1", port: int | None = None,
                   startup_timeout_s: float = 180.0, extra_args: tuple[str, ...] = ()) -> Iterator[str]:
    """``ecom-bench serve`` in a subprocess (its own process, so its GIL is not the clients');
    yields the base URL once ``/health`` answers, and stops it on exit (SIGTERM: a clean shutdown).
    `extra_args`: more ``serve`` options (``("--curriculum-state", path)``)."""
    port = port or free_port(host)
    cmd = [sys.executable, "-m", "ecom_bench.cli", "serve", "--host", host, "--port", str(port), "--envs", envs,
           "--difficulty", str(difficulty), "--max-sessions", str(max_sessions)]
    if catalog_size is not None:
        cmd += ["--catalog-size", str(catalog_size)]
    cmd += list(extra_args)
    log = tempfile.TemporaryFile("w+")  # a file, not a pipe: a pipe nobody reads would block the server
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, text=True)
    url = f"http://{host}:{port}"
    try:
        deadline = time.monotonic() + startup_timeout_s
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"the server exited ({proc.returncode}): {log.read()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the server did not answer on {url} within {startup_timeout_s:.0f}s")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


__all__ = ["DEFAULT_CURRICULUM_SAVE_S", "DEFAULT_MAX_SESSIONS", "MAX_REQUEST_BYTES", "EcomAction", "EcomEnvironment", "EcomObservation",
           "EcomState", "RequestError", "create_server_app", "running_server", "serve"]
