"""Agent actions for the training env: raw model text or structured calls, to one core action.

Accepted raw-text formats (what open models emit with their chat templates):

* **Hermes / Qwen**: zero or more ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
  blocks; text around them is the model thinking aloud and reaches no one.
* **A bare JSON object** (optionally in a ```` ``` ```` fence): ``{"name": ..., "arguments": ...}``,
  or ``{"tool_calls": [...]}`` holding such objects or OpenAI-style ``{"function": {...}}`` ones.
* Anything else is a **message to the customer** (a fenced block that does not open with ``{``
  included). ``<think>...</think>`` blocks are dropped first (and, when the chat template opened ``<think>``
  in the prompt, everything up to the first ``</think>``); an unclosed ``<think>`` hides the rest.

``arguments`` may be an object or a JSON string of one (OpenAI's wire form). Output that
opens a tool call and cannot be read (bad JSON, an unclosed tag, a JSON object that is no
call) becomes a call with a ``parse_error``: the episode treats it as invalid output (a
hard fail under the strict rule).

Structured actions are OpenAI assistant messages: ``{"content": str, "tool_calls": [...]}``.

The scanning is linear in the text's length (plain `str.find`, no backtracking regex), and a
JSON body nested too deep for the decoder is a parse error like any other: model output can
neither hang nor crash a step.
"""

from __future__ import annotations

import json
from typing import Any

from ecom_bench.conversation import AgentAction, ToolCallRequest

#: What `EcomEnv.step` takes: raw model text, an OpenAI-style assistant message, or a core action.
Action = str | dict[str, Any] | AgentAction

OPEN, CLOSE = "<tool_call>", "</tool_call>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
FENCE = "```"
#: Longest raw text quoted back in a parse error.
_QUOTE = 120


def _loads(text: str) -> Any:
    """json.loads, with nesting too deep for the decoder reported as a ValueError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _blocks(text: str, open_tag: str, close_tag: str) -> tuple[list[str], str, str | None]:
    """(bodies of closed open..close blocks, the text outside them, the tail after an unclosed
    open tag or None), in one left-to-right pass."""
    bodies: list[str] = []
    outside: list[str] = []
    i = 0
    while (start := text.find(open_tag, i)) >= 0:
        end = text.find(close_tag, start + len(open_tag))
        outside.append(text[i:start])
        if end < 0:
            return bodies, "".join(outside), text[start:]
        bodies.append(text[start + len(open_tag):end])
        i = end + len(close_tag)
    outside.append(text[i:])
    return bodies, "".join(outside), None


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


def _bad(reason: str, index: int) -> ToolCallRequest:
    return ToolCallRequest("<unparsed>", {}, f"call-{index}", parse_error=reason)


def _call(obj: Any, index: int) -> ToolCallRequest:
    """One call object ({"name", "arguments"} or OpenAI's {"id", "function": {...}})."""
    if not isinstance(obj, dict):
        return _bad(f"a tool call must be a JSON object, got {_quote(json.dumps(obj))}", index)
    given_id = obj.get("id")
    call_id = given_id if isinstance(given_id, str) and given_id else f"call-{index}"
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


def _calls_from_json(text: str) -> tuple[ToolCallRequest, ...] | None:
    """A bare JSON tool call, or None when the text is not meant as one."""
    body = text.strip()
    inner = _unfenced(body)
    if inner is not None:
        body = inner
    if not body.startswith("{"):
        return None
    try:
        obj = _loads(body)
    except ValueError as e:
        return (_bad(f"a JSON tool call that does not parse ({e}): {_quote(body)}", 0),)
    if isinstance(obj, dict) and isinstance(obj.get("tool_calls"), list) and obj["tool_calls"]:
        return tuple(_call(c, i) for i, c in enumerate(obj["tool_calls"]))
    if isinstance(obj, dict) and ("name" in obj or "function" in obj):
        return (_call(obj, 0),)
    return (_bad(f"a JSON object that is no tool call (needs \"name\" and \"arguments\"): {_quote(body)}", 0),)


def parse_text(text: str) -> AgentAction:
    """Raw model output → the core action (see the module docstring for the formats)."""
    close = text.find(THINK_CLOSE)
    if 0 <= close and not 0 <= text.find(THINK_OPEN) < close:  # the template opened <think> in the prompt
        text = text[close + len(THINK_CLOSE):]
    _, visible, _ = _blocks(text, THINK_OPEN, THINK_CLOSE)  # an unclosed <think> hides its tail too
    if OPEN in visible:
        bodies, rest, unclosed = _blocks(visible, OPEN, CLOSE)
        calls = []
        for i, body in enumerate(bodies):
            try:
                obj = _loads(body)
            except ValueError as e:
                calls.append(_bad(f"<tool_call> holds invalid JSON ({e}): {_quote(body)}", i))
                continue
            calls.append(_call(obj, i))
        if unclosed is not None:
            calls.append(_bad(f"an unclosed <tool_call>: {_quote(unclosed)}", len(calls)))
        return AgentAction(rest.strip(), tuple(calls))
    if (json_calls := _calls_from_json(visible)) is not None:
        return AgentAction("", json_calls)
    return AgentAction(visible.strip())


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


def parse_action(action: Action) -> AgentAction:
    """Any accepted action → the core action. Raises TypeError for a value that is no action at all
    (a programming error, not model output)."""
    if isinstance(action, AgentAction):
        return action
    if isinstance(action, str):
        return parse_text(action)
    if isinstance(action, dict):
        content = _content_text(action.get("content"))
        calls = action.get("tool_calls") or []
        if not isinstance(calls, list):
            raise TypeError(f"an action's tool_calls must be a list, got {type(calls).__name__}")
        if not calls:
            return parse_text(content)
        return AgentAction(content, tuple(_call(c, i) for i, c in enumerate(calls)))
    raise TypeError("an action is model text (str), an assistant message {'content', 'tool_calls'} "
                    f"or an AgentAction, got {type(action).__name__}")


def to_hermes(action: AgentAction) -> str:
    """The action as Hermes/Qwen raw text (what a model trained with that template would emit)."""
    if not action.tool_calls:
        return action.text
    blocks = [f"<tool_call>\n{json.dumps({'name': c.name, 'arguments': c.arguments})}\n</tool_call>"
              for c in action.tool_calls]
    return "\n".join([action.text, *blocks] if action.text else blocks)


def chat_message(action: AgentAction) -> dict[str, Any]:
    """The action as an OpenAI / HF chat-template assistant message (arguments as objects)."""
    message: dict[str, Any] = {"role": "assistant", "content": action.text}
    if action.tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}}
                                 for c in action.tool_calls]
    return message
