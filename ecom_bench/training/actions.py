"""Agent actions for the training env: raw model text or structured calls, to one core action.

What is a **call** and what is a **message** in raw text (what open models emit with their chat
templates):

* Trailing end-of-turn tokens (``<|im_end|>``, ``<|endoftext|>``, ``<|eot_id|>``, ``<|end|>``,
  ``</s>``) are the template's, not the agent's: they are dropped before reading.
* ``<think>...</think>`` is reasoning: it reaches no one and is kept apart (when the chat template
  opened ``<think>`` in the prompt, everything up to the first ``</think>``). Output that ends
  inside ``<think>`` was cut off before any action: invalid output.
* **Hermes / Qwen calls**: a ``<tool_call>`` tag followed (after spaces) by ``{`` opens a call,
  which runs to ``</tool_call>``; a tag closed by ``</tool_call>`` around any other non-blank
  text is a malformed call. Text around the calls is the agent thinking aloud and reaches no one.
  A ``<tool_call>`` mentioned in prose (followed by neither) is text.
* **A bare JSON call** (the whole output, optionally in a ```` ``` ```` fence): an object
  ``{"name": ..., "arguments": {...}}`` (no keys besides name, arguments, parameters, id, type),
  ``{"function": {...}}`` or ``{"tool_calls": [...]}``. Output that opens with ``{"name"``,
  ``{"function"`` or ``{"tool_calls"`` and does not parse is a malformed call, unless it opens
  with a whole JSON object that is no call and goes on in prose (a message).
* **Anything else is a message to the customer**, JSON that is no call included (a reply that
  opens with ``{``, a fenced JSON order summary). Empty output (nothing but reasoning) is invalid.

``arguments`` may be an object or a JSON string of one (OpenAI's wire form). A malformed call
becomes a call with a ``parse_error``: the episode treats it as invalid output (a hard fail
under the strict rule).

Structured actions are OpenAI assistant messages: ``{"content": str, "tool_calls": [...],
"reasoning_content": str}``.

The scanning is linear in the text's length (plain `str.find`, no backtracking regex), and a
JSON body nested too deep for the decoder is a parse error like any other: model output can
neither hang nor crash a step.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ecom_bench.conversation import AgentAction, ToolCallRequest

#: What `EcomEnv.step` takes: raw model text, an OpenAI-style assistant message, or a core action.
Action = str | dict[str, Any] | AgentAction

OPEN, CLOSE = "<tool_call>", "</tool_call>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
FENCE = "```"
#: End-of-turn tokens a chat template's generation can leave at the end of the text.
END_OF_TURN = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>", "</s>")
#: The keys of a bare JSON call object ({"name", "arguments"} and the variants models write).
CALL_KEYS = frozenset({"name", "arguments", "parameters", "id", "type"})
#: How a bare JSON call opens: output that opens so and does not parse is a malformed call.
CALL_OPENERS = ('"name"', '"function"', '"tool_calls"')
#: Longest raw text quoted back in a parse error.
_QUOTE = 120


@dataclass(frozen=True)
class Completion:
    """One agent output: as produced (`raw`, None for a structured action), its reasoning (the
    ``<think>`` text or a message's ``reasoning_content``, None if none) and the action it is."""

    raw: str | None
    reasoning: str | None
    action: AgentAction


def default_call_ids() -> Iterator[str]:
    """call-0, call-1, ...: ids for calls the model gave none (an episode draws from one)."""
    return (f"call-{i}" for i in itertools.count())


def _loads(text: str) -> Any:
    """json.loads, with nesting too deep for the decoder reported as a ValueError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def strip_end_of_turn(text: str) -> str:
    """The text without the end-of-turn tokens (and the spaces around them) at its end (one pass
    from the end: no copy per token)."""
    end = len(text)
    while True:
        before_spaces = end
        while before_spaces > 0 and text[before_spaces - 1].isspace():
            before_spaces -= 1
        token = next((t for t in END_OF_TURN if text.endswith(t, 0, before_spaces)), None)
        if token is None:
            return text[:end]
        end = before_spaces - len(token)


def _unfenced(body: str) -> str | None:
    """The inside of a ```/```json fence around the whole text, or None if it is not fenced."""
    if not (body.startswith(FENCE) and body.endswith(FENCE) and len(body) >= 2 * len(FENCE)):
        return None
    inner = body[len(FENCE):-len(FENCE)]
    if inner[:4].lower() == "json":
        inner = inner[4:]
    return inner.strip()


def _quote(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= _QUOTE else text[:_QUOTE] + "...")


def _bad(reason: str, ids: Iterator[str]) -> ToolCallRequest:
    return ToolCallRequest("<unparsed>", {}, next(ids), parse_error=reason)


def _call(obj: Any, ids: Iterator[str]) -> ToolCallRequest:
    """One call object ({"name", "arguments"} or OpenAI's {"id", "function": {...}})."""
    if not isinstance(obj, dict):
        return _bad(f"a tool call must be a JSON object, got {_quote(json.dumps(obj))}", ids)
    given_id = obj.get("id")
    call_id = given_id if isinstance(given_id, str) and given_id else next(ids)
    body = obj["function"] if isinstance(obj.get("function"), dict) else obj
    name = body.get("name")
    if not isinstance(name, str) or not name:
        return ToolCallRequest("<unparsed>", {}, call_id, parse_error="a tool call needs a \"name\" string")
    args = body.get("arguments", body.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = _loads(args) if args.strip() else {}
        except ValueError as e:
            return ToolCallRequest(name, {}, call_id, parse_error=f"arguments are not valid JSON ({e})")
    if not isinstance(args, dict):
        return ToolCallRequest(name, {}, call_id, parse_error="arguments must be a JSON object")
    return ToolCallRequest(name, args, call_id)


def _is_call_object(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    if isinstance(obj.get("tool_calls"), list) and obj["tool_calls"]:
        return True
    if isinstance(obj.get("function"), dict):
        return True
    return isinstance(obj.get("name"), str) and set(obj) <= CALL_KEYS


def _leads_with_a_non_call(body: str) -> bool:
    """Whether `body` opens with a whole JSON object that is no call, prose after it: a message."""
    try:
        obj, _ = json.JSONDecoder().raw_decode(body)
    except (ValueError, RecursionError):
        return False
    return not (isinstance(obj, dict) and _is_call_object(obj))


def _calls_from_json(text: str, ids: Iterator[str]) -> tuple[ToolCallRequest, ...] | None:
    """A bare JSON tool call, or None when the text is not meant as one (a message)."""
    body = text.strip()
    inner = _unfenced(body)
    if inner is not None:
        body = inner
    if not body.startswith("{"):
        return None
    try:
        obj = _loads(body)
    except ValueError as e:
        if _leads_with_a_non_call(body):  # {"name": "Alice", ...} is what I have on file.
            return None
        if body[1:].lstrip().startswith(CALL_OPENERS):
            return (_bad(f"a JSON tool call that does not parse ({e}): {_quote(body)}", ids),)
        return None
    if not _is_call_object(obj):
        return None
    if isinstance(obj.get("tool_calls"), list) and obj["tool_calls"]:
        return tuple(_call(c, ids) for c in obj["tool_calls"])
    return (_call(obj, ids),)


def _split_thinking(text: str) -> tuple[str, str | None, bool]:
    """(the text outside ``<think>`` blocks, the reasoning or None, whether it ends inside one)."""
    reasoning: list[str] = []
    close = text.find(THINK_CLOSE)
    if 0 <= close and not 0 <= text.find(THINK_OPEN) < close:  # the template opened <think> in the prompt
        reasoning.append(text[:close])
        text = text[close + len(THINK_CLOSE):]
    outside: list[str] = []
    i, cut_off = 0, False
    while (start := text.find(THINK_OPEN, i)) >= 0:
        outside.append(text[i:start])
        end = text.find(THINK_CLOSE, start + len(THINK_OPEN))
        if end < 0:
            reasoning.append(text[start + len(THINK_OPEN):])
            i, cut_off = len(text), True
            break
        reasoning.append(text[start + len(THINK_OPEN):end])
        i = end + len(THINK_CLOSE)
    outside.append(text[i:])
    thought = "\n".join(part.strip("\n") for part in reasoning)
    return "".join(outside), (thought if reasoning else None), cut_off


def _tool_call_blocks(text: str, ids: Iterator[str]) -> tuple[list[ToolCallRequest], str]:
    """The calls in ``<tool_call>`` blocks and the text outside them, in one left-to-right pass
    (the next closing tag is looked up once per tag it lies after, so the scan stays linear)."""
    calls: list[ToolCallRequest] = []
    outside: list[str] = []
    i, n = 0, len(text)
    next_close = -2  # not looked up yet; -1: none left
    while (start := text.find(OPEN, i)) >= 0:
        body_start = start + len(OPEN)
        if next_close != -1 and next_close < body_start:
            next_close = text.find(CLOSE, body_start)
        next_open = text.find(OPEN, body_start)
        closed = next_close >= 0 and (next_open < 0 or next_close < next_open)
        body = text[body_start:next_close] if closed else text[body_start:next_open if next_open >= 0 else n]
        opens_json = body.lstrip().startswith("{")
        if not opens_json and not (closed and body.strip()):  # a tag mentioned in prose
            outside.append(text[i:body_start])
            i = body_start
            continue
        outside.append(text[i:start])
        if not closed:
            calls.append(_bad(f"an unclosed <tool_call>: {_quote(body)}", ids))
            i = next_open if next_open >= 0 else n
            continue
        try:
            calls.append(_call(_loads(body), ids))
        except ValueError as e:
            calls.append(_bad(f"<tool_call> holds invalid JSON ({e}): {_quote(body)}", ids))
        i = next_close + len(CLOSE)
    outside.append(text[i:])
    return calls, "".join(outside)


def parse_completion(text: str, call_ids: Iterator[str] | None = None) -> Completion:
    """Raw model output → what it is (see the module docstring for what is a call and what a
    message). `call_ids` gives the ids of calls the model gave none (default call-0, call-1, ...)."""
    ids = call_ids if call_ids is not None else default_call_ids()
    visible, reasoning, cut_off = _split_thinking(strip_end_of_turn(text))
    if cut_off:
        return Completion(text, reasoning, AgentAction(visible.strip(), (_bad(
            "the output ends inside <think> (cut off before any message or tool call)", ids),)))
    calls, rest = _tool_call_blocks(visible, ids)
    if calls:
        return Completion(text, reasoning, AgentAction(rest.strip(), tuple(calls)))
    if (json_calls := _calls_from_json(visible, ids)) is not None:
        return Completion(text, reasoning, AgentAction("", json_calls))
    message = visible.strip()
    if not message:
        return Completion(text, reasoning, AgentAction("", (_bad(
            "empty output: no message to the customer and no tool call", ids),)))
    return Completion(text, reasoning, AgentAction(message))


def parse_text(text: str, call_ids: Iterator[str] | None = None) -> AgentAction:
    """Raw model output → the core action (see the module docstring for the formats)."""
    return parse_completion(text, call_ids).action


def _content_text(content: Any) -> str:
    """A message's content: a string, or OpenAI's list of content parts (their text parts joined)."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(isinstance(part, dict) for part in content):
        kinds = {part.get("type") for part in content} - {"text"}
        if kinds:
            raise TypeError(f"an action's content parts must be text, got {', '.join(sorted(map(str, kinds)))}")
        texts = [part.get("text") for part in content]
        if all(isinstance(t, str) for t in texts):
            return "".join(texts)
    raise TypeError("an action's content must be a string or a list of text parts "
                    f"{{'type': 'text', 'text': ...}}, got {type(content).__name__}")


def read_action(action: Action, call_ids: Iterator[str] | None = None) -> Completion:
    """Any accepted action → a `Completion`. Raises TypeError for a value that is no action at
    all (a programming error, not model output)."""
    ids = call_ids if call_ids is not None else default_call_ids()
    if isinstance(action, AgentAction):
        return Completion(None, None, action)
    if isinstance(action, str):
        return parse_completion(action, ids)
    if isinstance(action, dict):
        content = _content_text(action.get("content"))
        reasoning = action.get("reasoning_content", action.get("reasoning"))
        if reasoning is not None and not isinstance(reasoning, str):
            raise TypeError(f"an action's reasoning_content must be a string, got {type(reasoning).__name__}")
        calls = action.get("tool_calls") or []
        if not isinstance(calls, list):
            raise TypeError(f"an action's tool_calls must be a list, got {type(calls).__name__}")
        if not calls:
            parsed = parse_completion(content, ids)
            return Completion(None, reasoning if reasoning is not None else parsed.reasoning, parsed.action)
        return Completion(None, reasoning, AgentAction(content, tuple(_call(c, ids) for c in calls)))
    raise TypeError("an action is model text (str), an assistant message {'content', 'tool_calls'} "
                    f"or an AgentAction, got {type(action).__name__}")


def parse_action(action: Action, call_ids: Iterator[str] | None = None) -> AgentAction:
    """Any accepted action → the core action (`read_action`'s action)."""
    return read_action(action, call_ids).action


def to_hermes(action: AgentAction) -> str:
    """The action as Hermes/Qwen raw text (what a model trained with that template would emit)."""
    if not action.tool_calls:
        return action.text
    blocks = [f"<tool_call>\n{json.dumps({'name': c.name, 'arguments': c.arguments})}\n</tool_call>"
              for c in action.tool_calls]
    return "\n".join([action.text, *blocks] if action.text else blocks)


def chat_message(action: AgentAction, reasoning: str | None = None) -> dict[str, Any]:
    """The action as an OpenAI / HF chat-template assistant message (arguments as objects; the
    reasoning, if any, as ``reasoning_content``, which Qwen3-style templates render)."""
    message: dict[str, Any] = {"role": "assistant", "content": action.text}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if action.tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}}
                                 for c in action.tool_calls]
    return message
