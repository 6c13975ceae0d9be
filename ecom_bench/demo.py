"""`ecom-bench demo`: play an episode as the agent in a browser (Gradio, extra `demo`).

The page is a Gradio app over `EcomEnv`, the training front's gymnasium env, so every action a
person takes is one `Episode.step`, scored as a model's would be. Each browser session holds its
own env (a `gr.State`); all of them share one catalogue context, loaded before serving. Pick an
env or a collection, a difficulty, a seed and a sample index, reset, and read the customer's
opening; call a tool through a form generated from its JSON schema, or write to the customer;
the env's final tool ends the episode, and the page then shows the reward parts, the explanation
and the hidden goal.

Not OpenEnv's web interface: its manager holds one environment for every visitor, and its form
is the generic action schema (text or tool_calls JSON), not one form per tool.

Offline: Gradio's analytics and version check are off, its fonts are bundled, and no share link
is made.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from dataclasses import dataclass
from typing import Any

from ecom_bench.conversation import AgentAction, Message, ToolCallRequest
from ecom_bench.envs import COLLECTIONS, env_names, get_env
from ecom_bench.envs.context import EnvContext
from ecom_bench.play import KIND_NOTE, read_value, show_result, type_name
from ecom_bench.rewards import compose
from ecom_bench.training.env import MAX_SEED, EcomEnv
from ecom_bench.world.toolkit import ToolSpec

# Gradio reads this when it is imported: no telemetry, no version check.
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"

import gradio as gr  # noqa: E402

#: Widest a tool result line is laid out (the page scrolls sideways past it).
RESULT_WIDTH = 96
#: Tool results longer than this many lines are shown folded (a click opens them).
OPEN_RESULT_LINES = 12
#: Seconds a browser session's episode is kept after its last action.
SESSION_TTL_S = 3600


# ------------------------------------------------------------------------------ forms from schemas
@dataclass(frozen=True)
class ArgumentField:
    """One argument of a tool as a form field: read from the tool's JSON schema."""

    name: str
    schema: dict[str, Any]
    required: bool

    @property
    def types(self) -> set[str]:
        options = self.schema.get("anyOf", [self.schema])
        return {s["type"] for s in options if "type" in s}

    @property
    def widget(self) -> str:
        """'checkbox', 'integer' or 'number' (a number field, prefilled with the schema's default), or
        'text': strings, lists (`a, b` or JSON) and numbers with no default, typed as text so that an
        empty field is not sent (Gradio reads an empty number field as 0, and `max_price=0` is a
        filter, not none)."""
        types = self.types - {"null"}
        if types == {"boolean"}:
            return "checkbox"
        if types & {"integer", "number"} == types and self.schema.get("default") is not None:
            return "integer" if types == {"integer"} else "number"
        return "text"

    @property
    def label(self) -> str:
        need = "required" if self.required else "optional"
        if not self.required and self.schema.get("default") is not None:
            need += f", default {json.dumps(self.schema['default'])}"
        return f"{self.name} ({type_name(self.schema)}, {need})"

    @property
    def hint(self) -> str:
        text = self.schema.get("description", "")
        if "array" in self.types:
            text += " Separate items with commas (or write a JSON list)."
        return text.strip()

    def read(self, value: Any) -> tuple[bool, Any]:
        """(given, value) for a form value: an empty optional field is left out (its default
        applies); a list typed as text is split; everything else goes to the episode as typed,
        where the tool's schema judges it."""
        if value is None or (isinstance(value, str) and not value.strip()):
            return (self.required, "") if self.widget == "text" else (False, None)
        if self.widget == "integer" and isinstance(value, float) and value.is_integer():
            return True, int(value)
        if self.widget == "text":
            return True, read_value(self.schema, value)
        return True, value


def argument_fields(spec: ToolSpec) -> list[ArgumentField]:
    required = set(spec.parameters.get("required", []))
    return [ArgumentField(name, schema, name in required)
            for name, schema in spec.parameters.get("properties", {}).items()]


def arguments_from_form(spec: ToolSpec, values: list[Any]) -> dict[str, Any]:
    """The call's arguments from the form's values (in `argument_fields` order)."""
    arguments = {}
    for arg, value in zip(argument_fields(spec), values, strict=True):
        given, read = arg.read(value)
        if given:
            arguments[arg.name] = read
    return arguments


def _component(arg: ArgumentField) -> gr.components.Component:
    common: dict[str, Any] = {"label": arg.label, "info": arg.hint or None, "elem_id": f"arg-{arg.name}",
                              "interactive": True}
    default = arg.schema.get("default")
    if arg.widget == "checkbox":
        return gr.Checkbox(value=bool(default), **common)
    if arg.widget in ("integer", "number"):
        # no precision: Gradio would round 3.5 to 4 in an integer field, a call no model made; the
        # episode judges 3.5 against the schema as it would a model's
        return gr.Number(value=default, **common)
    return gr.Textbox(placeholder="leave empty for the default" if not arg.required else None, **common)


# ------------------------------------------------------------------------------ the session
@dataclass
class DemoSession:
    """One browser session's game: its env (one episode per reset)."""

    env: EcomEnv | None = None
    seed: int = 0
    index: int = 0

    @property
    def started(self) -> bool:
        return self.env is not None and self.env.episode is not None

    @property
    def done(self) -> bool:
        return self.env is not None and self.env.episode is not None and self.env.episode.done

    def specs(self) -> dict[str, ToolSpec]:
        if self.env is None or self.env.episode is None:
            return {}
        return {spec.name: spec for spec in self.env.episode.tool_specs()}


def _call_text(name: str, arguments: dict[str, Any]) -> str:
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"`{name}({args})`"


def chat_view(messages: list[Message]) -> list[dict[str, Any]]:
    """The episode's transcript as chat bubbles: the customer on the left, the agent (the person
    playing) on the right, each tool result folded under its call."""
    shown: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "user":
            shown.append({"role": "assistant", "content": m.text})
        elif m.role == "assistant":
            if m.text:
                shown.append({"role": "user", "content": m.text})
            shown.extend({"role": "user", "content": "Tool call: " + _call_text(c.name, c.arguments)}
                         for c in m.tool_calls)
        elif m.tool_name == "ask_user" and not m.error:
            shown.append({"role": "assistant", "content": m.text})
        else:
            title = f"{m.tool_name}: {'error' if m.error else 'result'}"
            body = show_result(m.text, full=True, width=RESULT_WIDTH)
            folded = {"status": "done"} if body.count("\n") >= OPEN_RESULT_LINES else {}
            shown.append({"role": "assistant", "content": f"```\n{body}\n```",
                          "metadata": {"title": title, **folded}})
    return shown


def status_line(session: DemoSession) -> str:
    if session.env is None or session.env.episode is None:
        return "Pick an environment, a difficulty and a seed, then **Reset**."
    ep = session.env.episode
    s = ep.status()
    where = (f"**{ep.env.name}** ({ep.env.title}), difficulty {ep.difficulty.level}, seed {session.seed}, "
             f"index {session.index}{', strict' if ep.strict else ''}")
    if s.done:
        return f"{where}. Episode over after {s.step} step(s): {s.end_reason}."
    return (f"{where}. Step {s.step}: turn {s.turn} of {s.max_turns}, {s.calls_left} of {s.tool_budget} "
            "tool call(s) left this turn.")


def reward_view(session: DemoSession) -> str:
    """The reward parts and the explanation once the episode has ended (empty before)."""
    if not session.done or session.env is None or session.env.episode is None:
        return ""
    result = session.env.episode.result()
    r = result.reward
    rows = [("success", "yes" if r.success else "no"), ("task", f"{r.task:+.2f}"),
            ("efficiency", f"{r.efficiency:+.2f}"),
            ("hallucination", f"{r.hallucination:+.2f} (0 at best: ids no tool returned cost)"),
            ("**total**", f"**{r.total:+.3f}** (best possible {compose(1.0, 1.0, 0.0):+.2f})"),
            ("hard fail", "yes" if r.hard_fail else "no")]
    table = "\n".join(["| part | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)])
    explanation = "\n>\n".join(f"> {line}" for line in result.explanation().splitlines() if line)
    return f"### Reward\n\n{table}\n\n**Why**\n\n{explanation}"


#: The largest integer a browser's JSON (a double) holds exactly.
_JS_SAFE_INT = 2**53 - 1


def _browser_safe(value: Any) -> Any:
    """`value` with integers beyond a double's precision as strings (a seed would show rounded)."""
    if isinstance(value, dict):
        return {k: _browser_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_browser_safe(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _JS_SAFE_INT:
        return str(value)
    return value


def hidden_goal(session: DemoSession) -> dict[str, Any] | None:
    """The customer's hidden goal, shown only after the end."""
    if not session.done or session.env is None or session.env.episode is None:
        return None
    return _browser_safe(session.env.episode.problem.hidden_state())


def tool_choices(session: DemoSession) -> list[tuple[str, str]]:
    return [(f"{name}: {KIND_NOTE[spec.kind]}", name) for name, spec in session.specs().items()]


def env_choices() -> list[tuple[str, str]]:
    envs = [(f"{name}: {get_env(name).title}", name) for name in env_names()]
    collections = [(f"{name}: one of {', '.join(members)}, drawn from the seed", name)
                   for name, members in COLLECTIONS.items()]
    return envs + collections


# ------------------------------------------------------------------------------ the page
class DemoApp:
    """The page's handlers over sessions; `blocks()` lays the page out."""

    def __init__(self, context: EnvContext) -> None:
        self.context = context

    def reset(self, session: DemoSession, env: str, difficulty: float | None, seed: float | None,
              index: float | None, strict: bool) -> tuple[Any, ...]:
        try:
            level, seed_value = _whole(difficulty, "difficulty", 0), _whole(seed, "seed", 0, MAX_SEED)
            index_value = _whole(index, "index", 0)
            game = EcomEnv(env, level, context=self.context, strict=bool(strict))
            game.reset(seed=seed_value, options={"index": index_value})
        except ValueError as e:
            return (session, gr.update(), gr.update(), *self._view(session, notice=f"Not reset: {e}"))
        if session.env is not None:
            session.env.close()  # an unfinished episode left for a new one ends as aborted
        session = DemoSession(game, seed_value, index_value)
        system = session.env.episode.system_prompt() if session.env and session.env.episode else ""
        return (session, gr.update(choices=tool_choices(session), value=None), system,
                *self._view(session, notice="New episode: read the customer's message, then act."))

    def call_tool(self, session: DemoSession, tool: str | None, *values: Any) -> tuple[Any, ...]:
        spec = session.specs().get(tool or "")
        if not session.started or spec is None:
            return self._view(session, notice="Reset an episode and pick one of its tools first.")
        if session.done:
            return self._view(session, notice="The episode has ended: reset to play another.")
        try:
            arguments = arguments_from_form(spec, list(values))
        except ValueError as e:
            return self._view(session, notice=f"Not sent: {e}")
        call = ToolCallRequest(spec.name, arguments, f"demo-{len(session.env.transcript) if session.env else 0}")
        return self._step(session, AgentAction(tool_calls=(call,)), f"Called {spec.name}.")

    def send(self, session: DemoSession, text: str) -> tuple[Any, ...]:
        if not session.started:
            return (*self._view(session, notice="Reset an episode first."), text)
        if session.done:
            return (*self._view(session, notice="The episode has ended: reset to play another."), text)
        if not (text or "").strip():
            return (*self._view(session, notice="Write a message first (an empty one is not sent)."), text)
        return (*self._step(session, AgentAction(text.strip()), "Sent; the customer replied."), "")

    def _step(self, session: DemoSession, action: AgentAction, notice: str) -> tuple[Any, ...]:
        assert session.env is not None
        session.env.step(action)
        if session.done:
            notice = "The episode is over: the reward and the hidden goal are below."
        return self._view(session, notice=notice)

    def _view(self, session: DemoSession, notice: str = "") -> tuple[Any, ...]:
        """Everything an action refreshes: chat, status, notice, reward, hidden goal."""
        transcript = session.env.transcript if session.env is not None else []
        hidden = hidden_goal(session)
        return (chat_view(transcript), status_line(session), notice, reward_view(session),
                gr.update(value=hidden, visible=hidden is not None))

    def blocks(self) -> gr.Blocks:
        with gr.Blocks(title="ecom-bench demo", analytics_enabled=False) as page:
            session = gr.State(DemoSession(), time_to_live=SESSION_TTL_S)
            gr.Markdown("# ecom-bench: play the agent\nServe a simulated customer with the store's tools. "
                        "Their goal is hidden; the reward is computed by code from it when the episode ends.")
            with gr.Row():
                env = gr.Dropdown(env_choices(), value="cart", label="Environment or collection", elem_id="env",
                                  scale=3)
                difficulty = gr.Number(3, label="Difficulty", minimum=0, precision=0, elem_id="difficulty",
                                       info="0 easiest; the published scale tops at 12")
                seed = gr.Number(0, label="Seed", minimum=0, maximum=MAX_SEED, precision=0, elem_id="seed")
                index = gr.Number(0, label="Index", minimum=0, precision=0, elem_id="index",
                                  info="which task of the seed")
                strict = gr.Checkbox(False, label="Strict", elem_id="strict",
                                     info="the published rule: a call failing the schema ends it with -1")
            reset = gr.Button("Reset", variant="primary", elem_id="reset")
            status = gr.Markdown(status_line(DemoSession()), elem_id="status")
            notice = gr.Markdown("", elem_id="notice")
            with gr.Accordion("What the agent is told (system prompt)", open=False):
                system = gr.Markdown("", elem_id="system-prompt")
            with gr.Row():
                with gr.Column(scale=3):
                    chat = gr.Chatbot(label="Conversation: the customer on the left, you on the right",
                                      elem_id="chat", height=640, group_consecutive_messages=False)
                    message = gr.Textbox(label="Message to the customer (ends your turn)", elem_id="message",
                                         lines=2)
                    send = gr.Button("Send to the customer", elem_id="send")
                with gr.Column(scale=2):
                    tool = gr.Radio([], label="Tools", elem_id="tools")
                    form_outputs: list[Any] = []

                    @gr.render(inputs=[session, tool], triggers=[tool.change])
                    def tool_form(current: DemoSession, name: str | None) -> None:
                        spec = current.specs().get(name or "")
                        if spec is None:
                            gr.Markdown("Pick a tool to see its arguments.", elem_id="tool-doc")
                            return
                        gr.Markdown(f"**{spec.name}** ({KIND_NOTE[spec.kind]}): {spec.description}",
                                    elem_id="tool-doc")
                        inputs = [_component(arg) for arg in argument_fields(spec)]
                        if not inputs:
                            gr.Markdown("No arguments.")
                        call = gr.Button(f"Call {spec.name}", variant="primary", elem_id="call-tool")
                        call.click(self.call_tool, [session, tool, *inputs], form_outputs)

            reward = gr.Markdown("", elem_id="reward")
            goal = gr.JSON(label="The customer's hidden goal", visible=False, open=True, elem_id="hidden-goal")
            form_outputs.extend([chat, status, notice, reward, goal])
            reset.click(self.reset, [session, env, difficulty, seed, index, strict],
                        [session, tool, system, chat, status, notice, reward, goal])
            for trigger in (send.click, message.submit):
                trigger(self.send, [session, message], [chat, status, notice, reward, goal, message])
        return page


def _whole(value: float | None, name: str, minimum: int, maximum: int | None = None) -> int:
    if value is None or float(value) != int(value) or value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise ValueError(f"{name} must be a whole number {bound}, got {value!r}")
    return int(value)


def launch(context: EnvContext, host: str = "127.0.0.1", port: int | None = 7860) -> gr.Blocks:
    """Serve the page on host:port (port None: the first free one from 7860) from a thread, and
    return it: `page.local_url` is its address, `page.block_thread()` waits, `page.close()` stops it."""
    context.search_engine.warm()
    page = DemoApp(context).blocks()
    # Gradio checks its own server with httpx, which logs each request at INFO: not the user's business.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    page.launch(server_name=host, server_port=port, share=False, inbrowser=False, prevent_thread_lock=True,
                show_error=True, quiet=True, ssr_mode=False, pwa=False, mcp_server=False, enable_monitoring=False)
    return page


def check_can_listen(host: str, port: int) -> None:
    """Raise OSError, in one line naming --host/--port, when host:port cannot be listened on (before
    the catalogue loads, which can take minutes)."""
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, port))
    except OSError as e:
        raise OSError(f"cannot listen on {host}:{port} ({e.strerror or e}): pick another --port or --host") from None
