"""Agent actions for the training env: raw model text or structured calls, to one core action.

Accepted raw-text formats (what open models emit with their chat templates):

* **Hermes / Qwen**: zero or more ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
  blocks; text around them is the model thinking aloud and reaches no one.
* **A bare JSON object** (optionally in a ```` ```json ```` fence): ``{"name": ..., "arguments": ...}``,
  or ``{"tool_calls": [...]}`` holding such objects or OpenAI-style ``{"function": {...}}`` ones.
* Anything else is a **message to the customer**. ``<think>...</think>`` blocks are dropped first.

``arguments`` may be an object or a JSON string of one (OpenAI's wire form). Output that
opens a tool call and cannot be read (bad JSON, an unclosed tag, a JSON object that is no
call) becomes a call with a ``parse_error``: the episode treats it as invalid output (a
hard fail under the strict rule).

Structured actions are OpenAI assistant messages: ``{"content": str, "tool_calls": [...]}``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ecom_bench.conversation import AgentAction, ToolCallRequest

#: What `EcomEnv.step` takes: raw model text, an OpenAI-style assistant message, or a core action.
Action = str | dict[str, Any] | AgentAction

_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
#: Longest raw text quoted back in a parse error.
_QUOTE = 120


def _quote(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= _QUOTE else text[:_QUOTE] + "...")


def _bad(reason: str, index: int) -> ToolCallRequest:
    return ToolCallRequest("<unparsed>", {}, f"call-{index}", parse_error=reason)


def _call(obj: Any, index: int) -> ToolCallRequest:
    """One call object ({"name", "arguments"} or OpenAI's {"id", "function": {...}})."""
    if not isinstance(obj, dict):
        return _bad(f"a tool call must be a JSON object, got {_quote(json.dumps(obj))}", index)
    call_id = obj.get("id") if isinstance(obj.get("id"), str) and obj.get("id") else f"call-{index}"
    body = obj["function"] if isinstance(obj.get("function"), dict) else obj
    name = body.get("name")
    if not isinstance(name, str) or not name:
        return ToolCallRequest("<unparsed>", {}, call_id, parse_error="a tool call needs a \"name\" string")
    args = body.get("arguments", body.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError as e:
            return ToolCallRequest(name, {}, call_id, parse_error=f"arguments are not valid JSON ({e})")
    if not isinstance(args, dict):
        return ToolCallRequest(name, {}, call_id, parse_error="arguments must be a JSON object")
    return ToolCallRequest(name, args, call_id)


def _calls_from_json(text: str) -> tuple[ToolCallRequest, ...] | None:
    """A bare JSON tool call, or None when the text is not meant as one."""
    body = text.strip()
    if m := _FENCE.match(body):
        body = m.group(1)
    elif not body.startswith("{"):
        return None
    try:
        obj = json.loads(body)
    except ValueError as e:
        return (_bad(f"a JSON tool call that does not parse ({e}): {_quote(body)}", 0),)
    if isinstance(obj, dict) and isinstance(obj.get("tool_calls"), list) and obj["tool_calls"]:
        return tuple(_call(c, i) for i, c in enumerate(obj["tool_calls"]))
    if isinstance(obj, dict) and ("name" in obj or "function" in obj):
        return (_call(obj, 0),)
    return (_bad(f"a JSON object that is no tool call (needs \"name\" and \"arguments\"): {_quote(body)}", 0),)


def parse_text(text: str) -> AgentAction:
    """Raw model output → the core action (see the module docstring for the formats)."""
    visible = _THINK.sub("", text)
    if "<tool_call>" in visible:
        calls = []
        for i, m in enumerate(_TOOL_CALL.finditer(visible)):
            try:
                obj = json.loads(m.group(1))
            except ValueError as e:
                calls.append(_bad(f"<tool_call> holds invalid JSON ({e}): {_quote(m.group(1))}", i))
                continue
            calls.append(_call(obj, i))
        rest = _TOOL_CALL.sub("", visible)
        if "<tool_call>" in rest or not calls:
            calls.append(_bad(f"an unclosed <tool_call>: {_quote(rest[rest.find('<tool_call>'):])}", len(calls)))
        return AgentAction(rest.strip(), tuple(calls))
    if (calls := _calls_from_json(visible)) is not None:
        return AgentAction("", calls)
    return AgentAction(visible.strip())


def parse_action(action: Action) -> AgentAction:
    """Any accepted action → the core action. Raises TypeError for a value that is no action at all
    (a programming error, not model output)."""
    if isinstance(action, AgentAction):
        return action
    if isinstance(action, str):
        return parse_text(action)
    if isinstance(action, dict):
        content = action.get("content") or ""
        if not isinstance(content, str):
            raise TypeError(f"an action's content must be a string, got {type(content).__name__}")
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
