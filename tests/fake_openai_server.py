"""A fake OpenAI-compatible chat-completions server whose models are our scripted agents.

It stands in for vLLM, SGLang, llama.cpp's server or Ollama in tests: Inspect's real
`openai-api` provider and the real `openai` SDK talk to it over HTTP, exactly as they talk
to a local model server (`--model openai-api/fake/oracle` with `FAKE_BASE_URL` and
`FAKE_API_KEY`). The model name is the scripted policy's name.

Each request is read the way a model reads it: the OpenAI messages and tools become the
core's `Message`s, and the scripted policy picks the next action, which goes back as an
OpenAI assistant message (tool calls with JSON-string arguments, a finish reason).

The server also checks the wire. It keeps a mirror of each conversation's episode (found by
its system prompt and opening among the tasks it serves) and steps it with the actions the
request carries: every tool result and customer reply in the request must be the mirror's,
and the request's tools must be well-formed OpenAI function schemas that match the env's own
tool specs (less the validation keywords Inspect leaves out for OpenAI-compatible servers).
The mirror gives the policy its status (turn, budgets) and, for the oracle, the hidden goal.
Anything wrong is answered with a 400 and kept in `problems`, for the test to report.

Asked for them, it answers as vLLM does with token-level data: `logprobs`, and with vLLM's
extras `return_token_ids` / `return_tokens_as_token_ids` the prompt's and the completion's token
ids, from a stand-in tokenizer (one token per UTF-8 byte) and chat template (`render_prompt`)
whose prompts are prefixes of the next request's, as a real template's are.

The server also plays the customer's model of `-T user=llm` (`--model-role
user=openai-api/fake/faithful`): a request in the LLM customer's prompt format (`users.llm.
build_prompt`: its system prompt, one user message with the fenced reference draft, no tools) is
answered with the draft lightly reworded, every fact kept, as a plain assistant message. Each
such request is kept in `customer_requests` (its env and draft), for the test to count.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jsonschema

from ecom_bench.agents import get_policy
from ecom_bench.conversation import AgentAction, Message, ToolCallRequest
from ecom_bench.conversation import clipped_tool_error as clipped_error
from ecom_bench.envs.context import EnvContext
from ecom_bench.episode import Episode, new_episode
from ecom_bench.providers.scripted import POLICIES
from ecom_bench.users.llm import DRAFT_FENCE
from ecom_bench.users.scripted_models import draft, reword

#: OpenAI's rule for a function name.
FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
#: JSON-schema keywords Inspect may leave out of the tool schemas it sends (the bounds, which not
#: every OpenAI-compatible server supports; its `JSONSchema` has no `maxItems`), and a `default`
#: of null: the tools round-trip up to these. The tool still checks every bound.
DROPPED_KEYWORDS = frozenset({"examples", "maximum", "minimum", "pattern", "minLength", "maxLength", "minItems",
                              "maxItems"})
#: The keys an OpenAI function definition may have.
FUNCTION_KEYS = frozenset({"name", "description", "parameters", "strict"})
#: How Inspect's OpenAI message conversion writes a tool error.
ERROR_PREFIX = "Error: "
#: The customer's models this server serves: each answers a customer prompt with the customer's words.
CUSTOMER_MODELS = {"faithful": lambda messages: reword(draft(messages))}
#: How the LLM customer's system prompt opens, and its prompt names the env.
CUSTOMER_SYSTEM = "You are role-playing a customer"
_DEPARTMENT = re.compile(r"^Shop department: (\S+)\.$", re.M)


class WireError(ValueError):
    """A request the server refuses (400), with what is wrong."""


@dataclass(frozen=True)
class CustomerRequest:
    """One customer-wording request the server answered: the env its prompt names, the draft, the reply."""

    env: str
    draft: str
    reply: str


@dataclass(frozen=True)
class Served:
    """One task's samples the server can play: `samples` episodes of (env, difficulty, seed)."""

    env: str
    difficulty: int
    samples: int
    seed: int = 0


# ---------------------------------------------------------------- the OpenAI wire format
def _text(content: Any) -> str:
    """A message's content as text (a string, or a list of text parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    raise WireError(f"message content must be a string or a list of parts, got {content!r}")


def _call(raw: dict[str, Any]) -> ToolCallRequest:
    function = raw.get("function") or {}
    if raw.get("type") != "function" or not isinstance(function.get("arguments"), str):
        raise WireError(f"a tool call must be a function call with JSON-string arguments, got {raw!r}")
    try:
        arguments = json.loads(function["arguments"] or "{}")
    except ValueError as e:
        raise WireError(f"tool call arguments are not JSON: {function['arguments']!r} ({e})") from None
    return ToolCallRequest(function.get("name", ""), arguments, raw.get("id", ""))


def to_messages(wire: list[dict[str, Any]]) -> list[Message]:
    """OpenAI chat messages as the core's conversation (what a scripted policy reads)."""
    out: list[Message] = []
    names: dict[str, str] = {}
    for m in wire:
        role = m.get("role")
        if role == "assistant":
            calls = tuple(_call(c) for c in m.get("tool_calls") or ())
            names.update({c.id: c.name for c in calls})
            out.append(Message("assistant", _text(m.get("content")), tool_calls=calls))
        elif role == "tool":
            text, call_id = _text(m.get("content")), m.get("tool_call_id")
            error = text.startswith(ERROR_PREFIX)
            out.append(Message("tool", text.removeprefix(ERROR_PREFIX) if error else text, tool_call_id=call_id,
                               tool_name=names.get(call_id or ""), error=error))
        elif role in ("system", "developer", "user"):
            out.append(Message("system" if role == "developer" else role, _text(m.get("content"))))
        else:
            raise WireError(f"unknown message role {role!r}")
    return out


def completion(model: str, action: AgentAction, n: int, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chat completion carrying `action` (ids as the scripted provider gives them). With
    `body` (the request), its logprobs and vLLM's token-id extras are answered as vLLM does."""
    message: dict[str, Any] = {"role": "assistant", "content": action.text or None}
    if action.tool_calls:
        message["tool_calls"] = [
            {"id": c.id or f"call-{i}", "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
            for i, c in enumerate(action.tool_calls)]
    choice: dict[str, Any] = {"index": 0, "message": message, "logprobs": None,
                              "finish_reason": "tool_calls" if action.tool_calls else "stop"}
    response: dict[str, Any] = {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": model,
                                "choices": [choice],
                                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}
    if body is not None:
        tokens = tokenize(render_message(message).removeprefix(ASSISTANT) + TURN_END)
        as_ids = bool(body.get("return_tokens_as_token_ids"))
        if body.get("logprobs"):
            choice["logprobs"] = {"content": [
                {"token": f"token_id:{t}" if as_ids else chr(t), "logprob": fake_logprob(t), "bytes": [t],
                 "top_logprobs": []} for t in tokens]}
        if body.get("return_token_ids"):
            choice["token_ids"] = tokens
            response["prompt_token_ids"] = tokenize(render_prompt(body["messages"]))
        prompt_tokens = len(tokenize(render_prompt(body["messages"])))
        response["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": len(tokens),
                             "total_tokens": prompt_tokens + len(tokens)}
    return response


# -------------------------------------------------------- a stand-in tokenizer and chat template
#: Ends each message in the stand-in chat template; the prompt ends with the assistant's header.
TURN_END = "<|end|>"
ASSISTANT = "<|assistant|>"


def tokenize(text: str) -> list[int]:
    """The stand-in tokenizer: one token per UTF-8 byte."""
    return list(text.encode())


def fake_logprob(token: int) -> float:
    """A deterministic logprob for a token (what a model's would be, for the test's purpose)."""
    return -((token % 13) + 1) / 10


def render_message(message: dict[str, Any]) -> str:
    """One message in the stand-in chat template: its role header, text and tool calls (name and
    arguments, as a Hermes template writes them)."""
    calls = "".join(f"<tool_call>{(c.get('function') or {}).get('name')} {(c.get('function') or {}).get('arguments')}"
                    "</tool_call>" for c in message.get("tool_calls") or ())
    return f"<|{message.get('role')}|>{_text(message.get('content'))}{calls}"


def render_prompt(wire: list[dict[str, Any]]) -> str:
    """The stand-in chat template over a conversation, opening the assistant's turn: the prompt of
    one request is a prefix of the next's (what vLLM's token ids give with a prefix-stable template)."""
    return "".join(render_message(m) + TURN_END for m in wire) + ASSISTANT


def is_customer_prompt(wire: list[dict[str, Any]]) -> bool:
    """Whether `wire` is the LLM customer's prompt (`users.llm.build_prompt`)."""
    return (len(wire) == 2 and wire[0].get("role") == "system"
            and _text(wire[0].get("content")).startswith(CUSTOMER_SYSTEM))


def customer_completion(model: str, body: dict[str, Any], n: int) -> tuple[dict[str, Any], CustomerRequest]:
    """The customer model `model`'s answer to a customer prompt: a plain assistant message."""
    wire = body["messages"]
    if body.get("tools") or body.get("tool_choice"):
        raise WireError("a customer prompt carries no tools")
    if wire[1].get("role") != "user":
        raise WireError(f"a customer prompt is the system prompt and one user message, got {wire[1]!r}")
    messages = [{"role": m["role"], "content": _text(m.get("content"))} for m in wire]
    prompt = messages[1]["content"]
    department = _DEPARTMENT.search(prompt)
    if department is None or prompt.count(DRAFT_FENCE) != 2:
        raise WireError("a customer prompt names its department and fences one reference draft")
    reply = CUSTOMER_MODELS[model](messages)
    response = completion(model, AgentAction(reply), n)
    return response, CustomerRequest(department.group(1), draft(messages), reply)


def _dropped(schema: Any) -> Any:
    """`schema` less the keywords Inspect does not send."""
    if isinstance(schema, dict):
        return {k: _dropped(v) for k, v in schema.items()
                if k not in DROPPED_KEYWORDS and not (k == "default" and v is None)}
    if isinstance(schema, list):
        return [_dropped(v) for v in schema]
    return schema


def check_tools(tools: Any, episode: Episode) -> None:
    """The request's tools are well-formed OpenAI function schemas, and are the episode's tools."""
    if not isinstance(tools, list) or not tools:
        raise WireError(f"tools must be a non-empty list, got {tools!r}")
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if tool.get("type") != "function" or not isinstance(function, dict):
            raise WireError(f"a tool must be {{'type': 'function', 'function': {{...}}}}, got {tool!r}")
        name, params = function.get("name"), function.get("parameters")
        if not set(function) <= FUNCTION_KEYS or not isinstance(function.get("strict", False), bool):
            raise WireError(f"{name}: a function definition has only {sorted(FUNCTION_KEYS)}, got {sorted(function)}")
        if not isinstance(name, str) or not FUNCTION_NAME.match(name):
            raise WireError(f"bad function name {name!r}")
        if not isinstance(function.get("description"), str) or not function["description"]:
            raise WireError(f"{name}: no description")
        if not isinstance(params, dict) or params.get("type") != "object":
            raise WireError(f"{name}: parameters must be an object schema, got {params!r}")
        try:
            jsonschema.validators.validator_for(params).check_schema(params)
        except jsonschema.SchemaError as e:
            raise WireError(f"{name}: parameters are not a valid JSON schema: {e.message}") from None
        if not set(params.get("required", [])) <= set(params.get("properties", {})):
            raise WireError(f"{name}: required names a parameter it does not define")
    sent = [t["function"]["name"] for t in tools]
    if len(set(sent)) != len(sent):
        raise WireError(f"a tool is listed twice: {sent}")
    specs = episode.tool_specs()
    if sent != [s.name for s in specs]:
        raise WireError(f"tools {sent} are not the env's {[s.name for s in specs]}")
    for tool, spec in zip(tools, specs, strict=True):
        function = tool["function"]
        if function["description"] != spec.description:
            raise WireError(f"{spec.name}: the description did not round-trip")
        sent_params, own_params = _dropped(function["parameters"]), _dropped(spec.parameters)
        if sent_params != own_params:
            sent_props, own_props = sent_params.get("properties", {}), own_params["properties"]
            changed = sorted(k for k in sent_props.keys() | own_props.keys() if sent_props.get(k) != own_props.get(k))
            raise WireError(f"{spec.name}: the parameters did not round-trip (changed: {changed or 'the object'}): "
                            f"sent {function['parameters']}")


# ------------------------------------------------------------------------ the mirror
def _fingerprint(wire: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(wire, sort_keys=True).encode()).hexdigest()


def _expected(observation: Message) -> dict[str, Any]:
    """The wire message Inspect's solver and provider make of one observation."""
    if observation.role == "tool":
        text = ERROR_PREFIX + clipped_error(observation.text) if observation.error else observation.text
        return {"role": "tool", "tool_call_id": observation.tool_call_id, "content": text}
    return {"role": observation.role, "content": observation.text}


def _step(episode: Episode, action: Message, following: list[dict[str, Any]]) -> None:
    """Step the mirror with one assistant message; what follows it in the request must be the result."""
    observation, *_ = episode.step(AgentAction(action.text, action.tool_calls))
    want = [_expected(o) for o in observation]
    got = [{k: m.get(k) for k in w} | {"content": _text(m.get("content"))} for w, m in zip(want, following, strict=False)]  # lengths compared next
    if len(following) != len(observation) or got != want:
        raise WireError(f"the conversation is not the episode's: after {action}, expected {want}, got {following}")


class FakeOpenAIServer:
    """The server's state: the samples it serves, the live mirrors, what went wrong."""

    def __init__(self, served: Iterable[Served], context: EnvContext) -> None:
        self.context = context
        self.samples: dict[tuple[str, str], tuple[str, int, int, int]] = {}
        for s in served:
            for index in range(s.samples):
                episode = new_episode(s.env, s.difficulty, s.seed, index, context=context)
                self.samples[(episode.system_prompt(), episode.opening)] = (s.env, s.difficulty, s.seed, index)
        #: Each answered request's episode (stepped up to that request), by the request's messages.
        self.mirrors: dict[str, Episode] = {}
        self.problems: list[str] = []
        self.checked_tools: set[tuple[str, str]] = set()  # (env, tools JSON) that passed `check_tools`
        self.customer_requests: list[CustomerRequest] = []
        self.requests = 0
        self.lock = threading.Lock()
        self.base_url = ""

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat completion for one request (WireError: a 400)."""
        model, wire = body.get("model"), body.get("messages")
        if model not in POLICIES and model not in CUSTOMER_MODELS:
            raise WireError(f"unknown model {model!r}; this server serves {', '.join([*POLICIES, *CUSTOMER_MODELS])}")
        if body.get("stream"):
            raise WireError("this server does not stream (Inspect's openai-api provider does not ask to)")
        if isinstance(wire, list) and is_customer_prompt(wire):
            if model not in CUSTOMER_MODELS:
                raise WireError(f"{model!r} plays the agent, not the customer: serve it the agent's conversation")
            self.requests += 1
            response, request = customer_completion(model, body, self.requests)
            self.customer_requests.append(request)
            return response
        if model in CUSTOMER_MODELS:
            raise WireError(f"{model!r} plays the customer: this request is not the LLM customer's prompt")
        if not isinstance(wire, list) or len(wire) < 2:
            raise WireError("messages must start with the system prompt and the customer's opening")
        messages = to_messages(wire)
        episode = self._mirror(wire, messages)
        tools = json.dumps(body.get("tools"), sort_keys=True)
        if (episode.env.name, tools) not in self.checked_tools:  # the same tools pass the same checks
            check_tools(body.get("tools"), episode)
            self.checked_tools.add((episode.env.name, tools))
        policy = get_policy(episode.env.name, model)
        hidden = episode.problem.hidden_state() if policy.reads_hidden_goal else None
        action = policy.act(messages, hidden, episode.status())
        self.mirrors[_fingerprint(wire)] = episode
        self.requests += 1
        return completion(model, action, self.requests, body)

    def _mirror(self, wire: list[dict[str, Any]], messages: list[Message]) -> Episode:
        """The episode at the point this request's conversation reached: the mirror left by the
        request before it, stepped with the action that request got; else replayed from the start."""
        assistants = [i for i, m in enumerate(messages) if m.role == "assistant"]
        previous = self.mirrors.pop(_fingerprint(wire[:assistants[-1]]), None) if assistants else None
        if previous is not None:
            _step(previous, messages[assistants[-1]], wire[assistants[-1] + 1:])
            return previous
        key = (messages[0].text, messages[1].text)
        if key not in self.samples:
            raise WireError("no served sample has this system prompt and opening")
        env, d, seed, index = self.samples[key]
        episode = new_episode(env, d, seed, index, context=self.context)
        for n, i in enumerate(assistants):
            end = assistants[n + 1] if n + 1 < len(assistants) else len(wire)
            _step(episode, messages[i], wire[i + 1:end])
        return episode

    def models(self) -> dict[str, Any]:
        return {"object": "list",
                "data": [{"id": p, "object": "model", "created": 0, "owned_by": "ecom_bench"}
                         for p in [*POLICIES, *CUSTOMER_MODELS]]}


def _handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes: with Nagle's algorithm on, the body waits for the
        # client's delayed ACK (40 ms on Linux loopback), which would be most of a step's time.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client went away (a cancelled rollout)
                self.close_connection = True

        def _error(self, status: int, message: str) -> None:
            self._send(status, {"error": {"message": message, "type": "invalid_request_error", "param": None,
                                          "code": None}})

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, server.models())
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._error(404, f"no route {self.path}")
                return
            if not self.headers.get("Authorization", "").startswith("Bearer "):
                self._error(401, "no API key")
                return
            try:
                with server.lock:
                    payload = server.answer(json.loads(body))
            except Exception as e:  # noqa: BLE001 - a 400 (not retried), kept for the test to report
                server.problems.append(f"{type(e).__name__}: {e}")
                self._error(400, str(e))
                return
            self._send(200, payload)

    return Handler


def as_inspect_models(server: FakeOpenAIServer, monkeypatch: Any) -> FakeOpenAIServer:
    """`server` as Inspect's `openai-api/fake/<model>` models (what a user's `export`s do), its
    problems cleared (`monkeypatch`: pytest's, which undoes the environment after the test)."""
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    monkeypatch.setenv("FAKE_API_KEY", "x")
    server.problems.clear()
    return server


class _Server(ThreadingHTTPServer):
    """A listen backlog for many clients connecting at once (socketserver's default is 5: a rollout
    with dozens of episodes in flight would see connections reset)."""

    request_queue_size = 256
    daemon_threads = True


@contextmanager
def running(served: Iterable[Served], context: EnvContext) -> Iterator[FakeOpenAIServer]:
    """The server on 127.0.0.1, on a free port, in a thread; `base_url` ends in /v1."""
    state = FakeOpenAIServer(served, context)
    httpd = _Server(("127.0.0.1", 0), _handler(state))
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, name="fake-openai-server", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
