"""Fuzzing the agent boundary through Inspect: malformed model output reaching the episode loop.

A test model provider (`ecomfuzz/...`) plays one scripted case of bad output per sample
(truncated JSON, raw non-object arguments, wrong shapes, NaN, 1 MB strings, lone
surrogates, empty messages, text beside tool calls, reused call ids, unknown tools,
calls after a strict hard fail, budget floods) on every environment of C8. Every
sample must be scored (never errored), bounded in what the model reads back, and hard
failed exactly when the published strict rule says so.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageTool,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.model._call_tools import parse_tool_call
from inspect_ai.solver._task_state import sample_state
from inspect_ai.tool import ToolCall, ToolInfo

from conftest import TEST_CATALOG_SIZE, score_parts
from ecom_bench import tasks
from ecom_bench.envs import resolve_envs
from ecom_bench.conversation import MAX_TOOL_ERROR_CHARS

pytestmark = pytest.mark.reliability

MB = "x" * 1_000_000
#: What the model may read back from one tool call, and what one score explanation may hold.
MAX_TOOL_MESSAGE_CHARS = 32_000
MAX_EXPLANATION_CHARS = 4_000


def _first(tools: list[ToolInfo]) -> tuple[str, str]:
    """The env's first tool that takes arguments, and its first argument (a string in every env)."""
    tool = next(t for t in tools if t.parameters.properties)
    return tool.name, next(iter(tool.parameters.properties))


def _read_tool(tools: list[ToolInfo]) -> str:
    no_args = [t.name for t in tools if not t.parameters.required and t.name not in ("checkout", "ask_user")]
    return no_args[0] if no_args else _first(tools)[0]


def _calls(*calls: ToolCall, text: str = "") -> ModelOutput:
    message = ChatMessageAssistant(content=text, tool_calls=list(calls), source="generate")
    return ModelOutput.from_message(message, stop_reason="tool_calls")


def _call(name: str, args: dict[str, Any], id: str = "c1") -> ToolCall:
    return ToolCall(id=id, function=name, arguments=args)


def _raw(name: str, raw: str, tools: list[ToolInfo]) -> ToolCall:
    """A call whose arguments arrive as a raw string, parsed the way Inspect's providers do."""
    return parse_tool_call("c1", name, raw, tools)


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": value}
    return value


def _read_args(tools: list[ToolInfo]) -> dict[str, Any]:
    name = _read_tool(tools)
    if name == _first(tools)[0]:
        return {_first(tools)[1]: "usb"}
    return {}


#: case → (first output, whether it is invalid under the published strict rule)
CASES: dict[str, tuple[Any, bool]] = {
    "truncated_json": (lambda n, p, t: _calls(_raw(n, '{"%s": "usb cha' % p, t)), True),
    "trailing_garbage": (lambda n, p, t: _calls(_raw(n, '{"%s": "usb"} extra}' % p, t)), True),
    "raw_string": (lambda n, p, t: _calls(_raw(n, "usb charger", t)), False),
    "raw_number": (lambda n, p, t: _calls(_raw(n, "42", t)), True),
    "raw_list": (lambda n, p, t: _calls(_raw(n, "[1, 2]", t)), True),
    "raw_null": (lambda n, p, t: _calls(_raw(n, "null", t)), True),
    "wrong_shape": (lambda n, p, t: _calls(_call(n, {p: {"nested": [1, {"a": None}]}, "extra": 1})), True),
    "list_for_string": (lambda n, p, t: _calls(_call(n, {p: ["usb", "charger"]})), True),
    "nan": (lambda n, p, t: _calls(_call(n, {p: math.nan})), True),
    "huge_string": (lambda n, p, t: _calls(_call(n, {p: MB})), True),
    "huge_list": (lambda n, p, t: _calls(_call(n, {p: [MB, MB]})), True),
    "unicode": (lambda n, p, t: _calls(_call(n, {p: "\x00\u202eusb\u202c 😀 شاحن"})), False),
    "too_deep": (lambda n, p, t: _calls(_call(n, {p: _deep(200)})), True),
    "unknown_tool": (lambda n, p, t: _calls(_call("teleport_order", {"to": "moon"})), True),
    "empty_name": (lambda n, p, t: _calls(_call("", {})), True),
    "empty_message": (lambda n, p, t: ModelOutput.from_content("fuzz", ""), False),
    "text_and_tools": (lambda n, p, t: _calls(_call(_read_tool(t), _read_args(t)), text="Let me look."), False),
    "reused_ids": (lambda n, p, t: _calls(*[_call(_read_tool(t), _read_args(t), id="same")] * 2,
                                          _call("teleport", {}, id="same")), True),
    "invalid_then_valid": (lambda n, p, t: _calls(_call("teleport", {}, id="a"),
                                                  _call(_read_tool(t), _read_args(t), id="b")), True),
    "invalid_then_final": (lambda n, p, t: _calls(_call("teleport", {}, id="a"),
                                                  _call("answer_policy_question", {"answer": "5"}, id="b")), True),
    "budget_flood": (lambda n, p, t: _calls(*[_call(_read_tool(t), _read_args(t), id=f"f{i}")
                                              for i in range(12)]), False),
}
#: Played on one env only (a 1 MB argument is re-logged with every later generation: slow).
HUGE = ("huge_string", "huge_list")
CASE_NAMES = tuple(c for c in CASES if c not in HUGE)
#: The envs of the collection being run, in sample order (sample i belongs to env i mod n).
_RUN_ENVS: list[str] = []


def case_of(metadata: dict[str, Any]) -> str:
    """Sample i of a collection run plays case i mod len(CASE_NAMES)."""
    i = metadata["index"] * len(_RUN_ENVS) + _RUN_ENVS.index(metadata["env"])
    return CASE_NAMES[i % len(CASE_NAMES)]


class _FuzzAPI(ModelAPI):
    """Plays its sample's case as the first output, then apologises until the episode ends."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **kw: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())

    async def generate(self, input, tools, tool_choice, config):  # noqa: ANN001, ANN201
        state = sample_state()
        assert state is not None
        case = self.model_name if self.model_name in CASES else case_of(state.metadata)
        step = sum(1 for m in input if isinstance(m, ChatMessageAssistant))
        if step == 0 or (case == "empty_message"):
            name, param = _first(tools)
            out = CASES[case][0](name, param, tools)
        else:
            out = ModelOutput.from_content(self.model_name, "Sorry, I cannot help with that.")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out


@modelapi(name="ecomfuzz")
def _ecomfuzz() -> type[ModelAPI]:
    return _FuzzAPI


def _run(tmp_path, strict: bool, envs: str, rounds: int):  # noqa: ANN202
    """Every case (but the huge ones) `rounds` times, spread over the envs of `envs`."""
    _RUN_ENVS[:] = resolve_envs(envs)
    task = tasks.collection(envs=envs, samples=rounds * len(CASE_NAMES), difficulty=4, strict=strict,
                            catalog_size=TEST_CATALOG_SIZE)
    [log] = inspect_eval(task, model="ecomfuzz/any", log_dir=str(tmp_path), display="none", max_samples=64)
    assert log.status == "success", log.error
    return log


def _run_case(tmp_path, case: str, strict: bool, env: str = "cart", samples: int = 1):  # noqa: ANN202
    """One case on every sample of one env."""
    task = getattr(tasks, env)(samples=samples, difficulty=4, strict=strict, catalog_size=TEST_CATALOG_SIZE)
    [log] = inspect_eval(task, model=f"ecomfuzz/{case}", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    return log


def _check_log(log, strict: bool, only: str | None = None) -> None:  # noqa: ANN001
    assert not [s.id for s in log.samples if s.error]
    seen = set()
    for s in log.samples:
        case = only or case_of(s.metadata)
        seen.add((s.metadata["env"], case, s.metadata["index"]))
        score = s.scores["total"]
        value = score_parts(s)
        for key in ("task", "efficiency", "hallucination", "total"):
            assert math.isfinite(value[key]) and -1.0 <= value[key] <= 1.0, (case, value)
        assert len(score.explanation) <= MAX_EXPLANATION_CHARS, (case, len(score.explanation))
        for m in s.messages:
            if isinstance(m, ChatMessageTool):
                shown = m.error.message if m.error else m.text
                assert len(shown) <= MAX_TOOL_MESSAGE_CHARS, (case, m.function, len(shown))
        invalid = CASES[case][1]
        end_reason = score.metadata["end_reason"]
        if strict and invalid:
            assert score.metadata["hard_fail"] and value["total"] == -1.0, (case, end_reason)
            assert "invalid" in end_reason, (case, end_reason)
        else:
            assert "invalid" not in end_reason, (case, end_reason)
        if case == "budget_flood":
            assert "stalled" in end_reason or "budget" in " ".join(
                m.error.message for m in s.messages if isinstance(m, ChatMessageTool) and m.error)
    assert len(seen) == len(log.samples)
    if only is None:
        assert {case for _, case, _ in seen} == set(CASE_NAMES)


def test_malformed_output_on_every_env_strict(tmp_path):
    log = _run(tmp_path, strict=True, envs="C8", rounds=2)  # each case on two envs
    _check_log(log, strict=True)
    # the hard fail names what was wrong
    s = next(s for s in log.samples if case_of(s.metadata) == "truncated_json")
    assert "invalid output" in s.scores["total"].explanation


def test_malformed_output_is_returned_to_the_model_when_not_strict(tmp_path):
    log = _run(tmp_path, strict=False, envs="cart,returns,policy", rounds=1)
    _check_log(log, strict=False)
    for s in log.samples:
        tool_errors = [m for m in s.messages if isinstance(m, ChatMessageTool) and m.error]
        case = case_of(s.metadata)
        if CASES[case][1]:
            assert tool_errors, case
            # the episode went on (the model apologised, the user answered) unless a later call answered
            answered = s.scores["total"].metadata["end_reason"] == "answered"
            assert answered or sum(1 for m in s.messages if m.role == "user") >= 2, case


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("case", HUGE)
def test_huge_arguments_are_never_echoed_back(tmp_path, case, strict):
    """A schema error never quotes the 1 MB value back: the model reads a short error, the score stays small."""
    log = _run_case(tmp_path, case, strict)
    _check_log(log, strict, case)
    [s] = log.samples
    [error] = [m.error for m in s.messages if isinstance(m, ChatMessageTool) and m.error]
    assert error.type == "parsing" and "invalid arguments" in error.message
    assert len(error.message) <= MAX_TOOL_ERROR_CHARS + 100


@pytest.mark.parametrize("strict", [True, False])
def test_reused_tool_call_ids_each_get_an_answer(tmp_path, strict):
    log = _run_case(tmp_path, "reused_ids", strict)
    _check_log(log, strict, "reused_ids")
    [s] = log.samples
    tool_messages = [m for m in s.messages if isinstance(m, ChatMessageTool)]
    assert len(tool_messages) == 3 and {m.tool_call_id for m in tool_messages} == {"same"}
    assert tool_messages[0].error is None  # the first read ran
    if strict:  # the unknown tool ended the episode; nothing after it counts
        assert s.scores["total"].metadata["hard_fail"]


@pytest.mark.parametrize("strict", [True, False])
def test_a_final_answer_after_an_invalid_call_in_the_same_message(tmp_path, strict):
    """Calls run in order, as in the core front: under strict the invalid call ends the episode,
    so the answer after it is refused and the score is the hard fail."""
    log = _run_case(tmp_path, "invalid_then_final", strict, env="policy", samples=2)
    for s in log.samples:
        score = s.scores["total"]
        tool_messages = [m for m in s.messages if isinstance(m, ChatMessageTool)]
        assert [m.tool_call_id for m in tool_messages] == ["a", "b"]
        if strict:
            assert score.metadata["hard_fail"] and score.value == -1.0
            assert "ended" in tool_messages[1].error.message
            assert not score.metadata["final_state"]["answers"]
        else:
            assert tool_messages[1].error is None and score.metadata["final_state"]["answers"]
