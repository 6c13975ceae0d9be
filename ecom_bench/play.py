"""`ecom-bench play`: be the agent yourself, through the same `Episode.step` every front drives.

A person types what a model would emit: a message to the customer, or a tool call. The commands
around that (`/help`, `/tools`, `/full`, `/quit`), a mistyped command and unparseable arguments
never reach the episode, so they cost no turn and no tool call; every other line is one
`Episode.step`, scored exactly as a model's action would be. The default episode is forgiving
(`strict=False`: a call that fails the schema comes back as an error); `strict=True` is the
published rule, where such a call ends the game with -1.
"""

from __future__ import annotations

import difflib
import importlib
import json
import re
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ecom_bench.conversation import AgentAction, Message, ToolCallRequest
from ecom_bench.episode import EndReason, Episode
from ecom_bench.rewards import compose
from ecom_bench.world.toolkit import ToolSpec

#: Screen width the results are laid out for.
WIDTH = 100
#: Items of a list shown before it is folded into "... N more".
MAX_ITEMS = 5
#: Characters of a string in a list's items shown before it is cut (`/full` shows all).
MAX_STRING = 160
#: Characters of any other text in a result shown before it is cut.
MAX_TEXT = 1500
#: The fields a folded list keeps of an item too long for one line: ids and what a person picks by.
KEY_FIELD = re.compile(r"(^|_)ids?$|^(title|name|items|note|variants|quantity|outcome|summary)$|"
                       r"price|rating|stock|status|placed|date|eligible")
#: Free commands: they never reach the episode.
META = {
    "help": "how to play, with examples",
    "tools": "every tool with its arguments (`/tools NAME` for one)",
    "full": "the last tool result in full, unfolded",
    "quit": "leave now (Ctrl-D too); the game is recorded as unfinished",
}
_KEY_VALUE = re.compile(r"[A-Za-z_]\w*=")
KIND_NOTE = {"read": "counts against the tool budget", "write": "counts against the tool budget",
              "user": "free: a message to the customer", "final": "free: your final answer, ends the game"}


# ----------------------------------------------------------------------------- parsing a line
@dataclass(frozen=True)
class Say:
    """A message to the customer."""

    text: str


@dataclass(frozen=True)
class Call:
    """A tool call for the episode."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Meta:
    """A free command (`/help`, `/tools NAME`, ...)."""

    name: str
    argument: str = ""


@dataclass(frozen=True)
class Note:
    """A line that cannot be sent (unknown command, unparseable arguments): why, for the player."""

    text: str


Line = Say | Call | Meta | Note


def parse_line(line: str, specs: dict[str, ToolSpec]) -> Line | None:
    """What a typed line means. Tool names forgive case and '-' for '_'; anything else unknown
    gets the closest names (difflib) instead of reaching the episode."""
    line = line.strip()
    if not line:
        return None
    if not line.startswith("/"):
        return Say(line)
    command, _, raw = line[1:].partition(" ")
    name = command.strip().lower().replace("-", "_")
    if name in ("exit", "q"):
        name = "quit"
    if name in META:
        return Meta(name, raw.strip())
    if name not in specs:
        close = difflib.get_close_matches(name, [*META, *specs], n=3, cutoff=0.5)
        hint = f" Did you mean {' or '.join('/' + c for c in close)}?" if close else ""
        return Note(f"Unknown command /{command}.{hint} Nothing was sent; /help lists what you can type.")
    try:
        return Call(name, parse_arguments(specs[name], raw))
    except ValueError as e:
        return Note(f"Could not read the arguments to /{name}: {e}. Nothing was sent; see /tools {name}.")


def parse_arguments(spec: ToolSpec, raw: str) -> dict[str, Any]:
    """A tool's arguments as typed: a JSON object, `key=value` pairs (values read as JSON where
    they parse and the argument is not a string, else taken as text), or the value alone for a
    tool's one required argument (`/catalog_get_product P0000400`). Raises ValueError."""
    raw = raw.strip()
    properties: dict[str, Any] = spec.parameters.get("properties", {})
    if not raw:
        return {}
    if raw.startswith("{"):
        try:
            return json.loads(raw)  # starts with "{": an object if it parses at all
        except json.JSONDecodeError as e:
            raise ValueError(f"not JSON ({e})") from None
    required = spec.parameters.get("required", [])
    sole = required[0] if len(required) == 1 else next(iter(properties)) if len(properties) == 1 else None
    if not _KEY_VALUE.match(raw) and len(properties) == 1 and sole is not None:
        return {sole: read_value(properties[sole], raw)}  # a lone argument takes the whole line, '=' and all
    # each `key=` starts a new argument, so values need no quotes ("query=usb c charger max_price=20")
    chunks = re.split(r"\s+(?=[A-Za-z_]\w*=)", raw)
    arguments: dict[str, Any] = {}
    if not _KEY_VALUE.match(chunks[0]):
        if sole is None:
            raise ValueError(f"write key=value pairs, e.g. {_example_call(spec)}")
        arguments[sole] = read_value(properties[sole], chunks.pop(0))
    for chunk in chunks:
        key, _, text = chunk.partition("=")
        if key in arguments:
            raise ValueError(f"{key} is given twice")
        arguments[key] = read_value(properties.get(key), text)
    return arguments


def _types(schema: dict[str, Any] | None) -> set[str]:
    if not schema:
        return set()
    if "anyOf" in schema:
        return set().union(*(_types(s) for s in schema["anyOf"]))
    return {schema["type"]} if "type" in schema else set()


def read_value(schema: dict[str, Any] | None, text: str) -> Any:
    """One typed value, read by the argument's type: text stays text for a string argument
    (`product_id=123` is the id "123"), JSON otherwise; a list also reads as `a,b,c`."""
    text = text.strip()
    types = _types(schema)
    if text == "null" and "null" in types:
        return None
    if text[:1] == text[-1:] and text[:1] in "\"'" and len(text) >= 2:
        return text[1:-1]
    if types and types <= {"string", "null"}:
        return text
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = text
    if "array" in types and isinstance(value, str):
        value = [item.strip() for item in value.split(",") if item.strip()]
    return value


# --------------------------------------------------------------------------- describing tools
def type_name(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return " or ".join(type_name(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {type_name(schema.get('items', {}))}"
    return str(schema.get("type", "any"))


def _signature(spec: ToolSpec) -> str:
    required = set(spec.parameters.get("required", []))
    parts = [name if name in required else f"{name}={json.dumps(schema.get('default'))}"
             for name, schema in spec.parameters.get("properties", {}).items()]
    return f"/{spec.name} {' '.join(parts)}".rstrip()


def describe_tool(spec: ToolSpec) -> str:
    """A tool as a person reads it: the call, what it does and costs, each argument's type and meaning."""
    lines = [f"{_signature(spec)}    [{KIND_NOTE[spec.kind]}]",
             *textwrap.wrap(spec.description, WIDTH, initial_indent="    ", subsequent_indent="    ")]
    required = set(spec.parameters.get("required", []))
    for name, schema in spec.parameters.get("properties", {}).items():
        need = "required" if name in required else f"optional, default {json.dumps(schema.get('default'))}"
        head = f"      {name} ({type_name(schema)}, {need}): "
        lines += textwrap.wrap(head + schema.get("description", ""), WIDTH, subsequent_indent=" " * 10)
    return "\n".join(lines)


def _example_value(name: str, schema: dict[str, Any]) -> str:
    """An example for a help line: the spec's own `e.g. "..."` where it gives one."""
    quoted = re.search(r'e\.g\. "([^"]+)"', schema.get("description", ""))
    if quoted:
        return quoted.group(1)
    if "integer" in _types(schema) or "number" in _types(schema):
        return "2"
    if name.endswith("_ids"):
        return "ID1,ID2"
    if name.endswith("_id"):
        return "ID"
    return "wireless mouse" if name == "query" else "..."


def _example_call(spec: ToolSpec, *, optional: bool = False) -> str:
    properties = spec.parameters.get("properties", {})
    names = [n for n in properties if optional or n in spec.parameters.get("required", [])]
    return " ".join([f"/{spec.name}", *(f"{n}={_example_value(n, properties[n])}" for n in names)])


def help_text(episode: Episode) -> str:
    """How to play this episode, with calls built from its real tool specs."""
    specs = episode.tool_specs()
    search = next((s for s in specs if s.kind == "read" and s.parameters.get("required")), specs[0])
    with_number = next((s for s in specs if s.kind == "write" and "integer" in json.dumps(s.parameters)),
                       None)
    finals = [s for s in specs if s.kind == "final"]
    status = episode.status()
    example_args = {n: _example_value(n, search.parameters["properties"][n])
                    for n in search.parameters.get("required", [])}
    lines = [
        "You are the store's agent; the customer's goal is hidden. Reach it with the tools, then give",
        "your final answer.",
        "",
        "Talk to the customer: type a plain message and press Enter. It ends your turn; they reply.",
        "Call a tool: a slash, its name, then its arguments as key=value (no quotes needed) or JSON:",
        f"    {_example_call(search)}",
        f"    /{search.name} {json.dumps(example_args)}",
    ]
    if with_number is not None:
        lines.append(f"    {_example_call(with_number, optional=True)}    (ids come from tool results)")
    free = " and ask_user are" if "ask_user" in episode.env.tool_names else " is"
    if len(finals) == 1:
        lines.append(f"Final answer (it ends the game and shows your score): {_example_call(finals[0])}")
    else:
        lines += textwrap.wrap("Final answers, one per request (the last ends the game and shows your "
                               "score): " + ", ".join(f"/{s.name}" for s in finals), WIDTH)
    lines += [
        "",
        *textwrap.wrap(f"Rules here: at most {status.tool_budget} tool call(s) before each message to the "
                       f"customer (the final answer{free} free); the customer waits {status.max_turns} "
                       "turns; use only ids a tool returned.", WIDTH),
        *textwrap.wrap("Free commands (cost nothing): "
                       + "; ".join(f"/{k}: {v}" for k, v in META.items()) + ".", WIDTH),
        *textwrap.wrap(_mode_line(episode), WIDTH),
    ]
    return "\n".join(lines)


def _mode_line(episode: Episode) -> str:
    if episode.strict:
        return ("STRICT mode (the published rule): a tool call whose arguments fail the tool's schema ends "
                "the game with total -1 (a mistyped /command is never sent).")
    return ("Forgiving mode: a tool call with bad arguments comes back as an error and the game goes on "
            "(--strict for the published rule: it ends the game with -1).")


# ---------------------------------------------------------------------------- showing results
def fold(value: Any, max_items: int = MAX_ITEMS, max_string: int = MAX_TEXT) -> Any:
    """A tool result cut to what a person reads: long lists cut to their first items (each reduced
    to its key fields when too long for a line) and a "... N more" line; text clipped, shorter in a
    list's items (a list is skimmed, one object is read)."""
    if isinstance(value, str):
        return value if len(value) <= max_string else f"{value[:max_string]}... ({len(value)} characters)"
    if isinstance(value, dict):
        return {k: fold(v, max_items, max_string) for k, v in value.items()}
    if isinstance(value, list):
        short = min(max_string, MAX_STRING)
        if len(value) <= max_items:
            return [fold(v, max_items, short) for v in value]
        shown = [fold(_key_fields(v), max_items, short) for v in value[:max_items]]
        return [*shown, f"... {len(value) - max_items} more (/full shows all)"]
    return value


def _key_fields(item: Any) -> Any:
    if not isinstance(item, dict) or len(json.dumps(item, ensure_ascii=False)) <= WIDTH:
        return item
    kept = {k: v for k, v in item.items() if KEY_FIELD.search(k)}
    if not kept or len(kept) == len(item):
        return item
    hidden = len(item) - len(kept)
    return {**kept, "...": f"{hidden} more field{'' if hidden == 1 else 's'}"}


def layout(value: Any, width: int = WIDTH, indent: int = 0, column: int | None = None) -> str:
    """JSON, indented, with any part that fits on its line (from `column` on) kept on one line and
    long text as a wrapped block between triple quotes."""
    flat = json.dumps(value, ensure_ascii=False)
    fits = (indent if column is None else column) + len(flat) <= width
    pad, end = " " * (indent + 2), " " * indent
    if isinstance(value, str) and not fits and len(value) > 40:  # prose: a wrapped block, not one line
        block = [textwrap.fill(p, width - len(pad), initial_indent=pad, subsequent_indent=pad) if p else ""
                 for p in value.splitlines()]
        return '"""\n' + "\n".join(block) + f'\n{end}"""'
    if fits or not isinstance(value, (dict, list)) or not value:
        return flat
    if isinstance(value, dict):
        body = []
        for k, v in value.items():
            key = f"{pad}{json.dumps(k, ensure_ascii=False)}: "
            body.append(key + layout(v, width, indent + 2, len(key)))
        return "{\n" + ",\n".join(body) + f"\n{end}}}"
    return "[\n" + ",\n".join(pad + layout(v, width, indent + 2) for v in value) + f"\n{end}]"


def show_result(text: str, *, full: bool = False, width: int = WIDTH) -> str:
    """A tool's text as a person reads it: JSON laid out and folded (or in full), other text wrapped."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, (dict, list)):
        return layout(value if full else fold(value), width)
    if not full and len(text) > MAX_TEXT:
        text = f"{text[:MAX_TEXT]}... ({len(text)} characters; /full shows all)"
    return "\n".join(textwrap.fill(p, width) if len(p) > width else p for p in text.splitlines())


def _indent(text: str, prefix: str = "  ") -> str:
    return textwrap.indent(text, prefix)


def _wrap(text: str, prefix: str = "") -> str:
    """Prose (the system prompt, the score's explanation) wrapped line by line to the screen."""
    return "\n".join(textwrap.fill(line, WIDTH, initial_indent=prefix, subsequent_indent=prefix)
                     if line.strip() else "" for line in text.splitlines())


# ------------------------------------------------------------------------------------ the game
class Game:
    """One played episode: reads lines, steps the episode, shows what came back."""

    def __init__(self, episode: Episode, read: Callable[[str], str] = input,
                 write: Callable[[str], None] = print, echo: bool = False) -> None:
        self.episode = episode
        self.specs = {s.name: s for s in episode.tool_specs()}
        self.read, self.write, self.echo = read, write, echo
        self.last: Message | None = None
        self.quit = False

    def run(self) -> None:
        ep = self.episode
        self.write(f"# {ep.env.title}, difficulty {ep.difficulty.level}. /help explains how to play.\n")
        self.write(_wrap(ep.system_prompt()) + "\n")
        self.write(_wrap("Tools: " + ", ".join(self.specs) + " (/tools shows their arguments)."))
        self.write(_wrap(_mode_line(ep)) + "\n")
        self._customer(ep.opening)
        try:
            while not ep.done and not self.quit:
                try:
                    line = self.read(self._prompt())
                except EOFError:
                    self.write("")
                    break
                if self.echo:
                    self.write(line)
                self.handle(line)
        except KeyboardInterrupt:
            self.write("")
        self.write(self.summary())

    def _prompt(self) -> str:
        s = self.episode.status()
        return f"[turn {s.turn}/{s.max_turns}, {s.calls_left} tool call(s) left] > "

    def handle(self, line: str) -> None:
        """One typed line: a free command is answered here, anything else is one episode step."""
        parsed = parse_line(line, self.specs)
        if parsed is None:
            return
        if isinstance(parsed, Note):
            self.write(parsed.text)
        elif isinstance(parsed, Meta):
            self._meta(parsed)
        elif isinstance(parsed, Say):
            observation, *_ = self.episode.step(AgentAction(parsed.text))
            for message in observation:
                self._customer(message.text)
        else:
            call = ToolCallRequest(parsed.name, parsed.arguments, "play")
            observation, *_ = self.episode.step(AgentAction(tool_calls=(call,)))
            for message in observation:
                self._tool(message, parsed)

    def _meta(self, meta: Meta) -> None:
        if meta.name == "help":
            self.write(help_text(self.episode))
        elif meta.name == "tools":
            names = [meta.argument] if meta.argument in self.specs else list(self.specs)
            if meta.argument and meta.argument not in self.specs:
                self.write(f"No tool {meta.argument!r} here; all of them:")
            self.write("\n\n".join(describe_tool(self.specs[n]) for n in names))
        elif meta.name == "full":
            self.write(show_result(self.last.text, full=True) if self.last else "No tool result yet.")
        else:
            self.quit = True

    def _customer(self, text: str) -> None:
        self.write("CUSTOMER: " + textwrap.fill(text, WIDTH, subsequent_indent="          ") + "\n")

    def _tool(self, message: Message, call: Call) -> None:
        if message.tool_name == "ask_user" and not message.error:
            self._customer(message.text)
            return
        self.last = message
        if message.error:
            self.write(_wrap(f"TOOL ERROR ({message.tool_name}): {show_result(message.text)}"))
            if message.invalid and not self.episode.done:
                self.write(_wrap(self._argument_hint(call), "  "))
        else:
            shown = show_result(message.text, width=WIDTH - 2)
            self.write(f"RESULT ({message.tool_name}):\n{_indent(shown)}")
        self.write("")

    def _argument_hint(self, call: Call) -> str:
        spec = self.specs[call.name]
        properties = list(spec.parameters.get("properties", {}))
        hints = []
        for key in call.arguments:
            if key not in properties:
                close = difflib.get_close_matches(key, properties, n=1, cutoff=0.5)
                hints.append(f"{key!r} is not an argument"
                             + (f" (did you mean {close[0]}?)" if close else ""))
        return ("hint: " + "; ".join([*hints, f"the call is {_signature(spec)}"])
                + f". The game goes on; /tools {call.name} explains each argument.")

    def summary(self) -> str:
        """The end: why it ended, the reward parts and the score's explanation."""
        ep = self.episode
        unfinished = not ep.done
        result = ep.result()
        r = result.reward
        if unfinished:
            head = ["=== Game over: you left before a final answer ===",
                    f"Recorded as unfinished ({EndReason.NOT_FINISHED.value}): it scores as a failure, as it "
                    "would for a model that stopped."]
        else:
            head = [f"=== Game over: {result.end.value} ==="]
            if result.end_reason != result.end.value:
                head.append(f"Ended: {result.end_reason}.")
        why = ep.hard_fail_reason or result.end_reason
        best = compose(1.0, 1.0, 0.0)
        rows = [("success", "yes" if r.success else "no"),
                ("task", f"{r.task:+.2f}"),
                ("efficiency", f"{r.efficiency:+.2f}"),
                ("hallucination", f"{r.hallucination:+.2f}   (0 at best: it penalises ids no tool returned)"),
                ("total", f"{r.total:+.3f}  (best possible {best:+.2f})"),
                ("hard fail", f"yes: {why}" if r.hard_fail else "no")]
        return "\n".join(["", *head, *(f"  {k:<14} {v}" for k, v in rows), "", "Why:",
                          _wrap(result.explanation(), "  ")])


def play(make_episode: Callable[[], Episode]) -> None:
    """Build the episode and play it on the terminal; Ctrl-C at any point leaves without a traceback."""
    interactive = sys.stdin.isatty()
    if interactive:
        try:
            importlib.import_module("readline")  # line editing and history for input()
        except ImportError:
            pass
    try:
        episode = make_episode()
    except KeyboardInterrupt:
        print("\nStopped before the game began.")
        return
    Game(episode, echo=not interactive).run()
