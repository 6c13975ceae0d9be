"""Fuzzing the agent boundary at the core: `Episode.call_tool` with anything a model may send.

Every call must end in a readable tool error (the episode goes on), a schema failure
(the hard-fail score under strict), or a normal result; never an uncaught exception,
never an unbounded reply, never a reward outside [-1, 1]. Hypothesis drives random
call sequences over pre-built episodes of every environment; the named classes of bad
input (wrong types, 1 MB strings, NaN quantities, foreign ids, ...) are explicit cases.
"""

from __future__ import annotations

import copy
import json
import math
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_SPEC, call, examples, say
from ecom_bench.domains.orders.book import OrderBook
from ecom_bench.domains.policy.rulebook import Rulebook
from ecom_bench.envs import ENVIRONMENTS, get_env
from ecom_bench.envs.context import load_context
from ecom_bench.conversation import AgentAction, Message, ToolCallRequest
from ecom_bench.episode import MAX_REFUSED_CALLS_PER_TURN, Episode, EpisodeOver, new_episode
from ecom_bench.world._tooling import MAX_ARG_CHARS, MAX_ARG_ITEMS

pytestmark = pytest.mark.reliability

ENVS = tuple(ENVIRONMENTS)
DIFFICULTY = 6
#: A tool reply is never longer than this (the longest legitimate one, 20 search hits in a
#: journey, is ~17k characters); in particular a 1 MB argument is never echoed back.
MAX_REPLY_CHARS = 32_000
#: The whole result (score metadata of one sample) stays small too.
MAX_RESULT_JSON_CHARS = 200_000
MB = "x" * 1_000_000
WEIRD = ["\x00", "P-\x00001", "\u202eP-0001\u202c", "😀🛒", "كرسي", "\ufeff", "a\nb\tc", "\\u0000", "%s{0}"]
SPECS = get_env("journey").toolkit_class().specs()  # every built-in tool


# ------------------------------------------------------------------ episodes
@cache
def _template(env: str, index: int = 0) -> Episode:
    return new_episode(env, DIFFICULTY, 0, index, context=load_context(TEST_SPEC))


def fresh(env: str, strict: bool = True, index: int = 0) -> Episode:
    """A new episode of a pre-built problem (a deep copy sharing the read-only catalogue)."""
    template = _template(env, index)
    ctx = load_context(TEST_SPEC)
    memo: dict[int, Any] = {id(ctx): ctx, id(ctx.catalog): ctx.catalog, id(ctx.search_engine): ctx.search_engine}
    return Episode(template.env, copy.deepcopy(template.problem, memo), strict=strict)


def world_ids(ep: Episode) -> list[str]:
    """Real ids of this episode's world: products, variants, orders, lines, policy rules."""
    w = ep.world
    ids: list[str] = []
    for visit in w.visit_history[:4]:
        p = w.product(visit.product_id)
        if p is not None:
            ids += [p.id, *(v.id for v in p.variants[:2])]
    for o in w.state(OrderBook).orders[:3]:
        ids += [o.order_id, *(ln.line_id for ln in o.lines[:2]), *(ln.product_id for ln in o.lines[:1])]
    ids += list(w.state(Rulebook).rules)[:3]
    return ids or [next(iter(w.catalog)).id]


@cache
def foreign_ids(env: str) -> tuple[str, ...]:
    """Ids of *other* episodes (another index, and another env with orders)."""
    other = world_ids(_template(env, 1)) + world_ids(_template("returns", 2)) + world_ids(_template("policy", 2))
    mine = set(world_ids(_template(env)))
    return tuple(i for i in other if i not in mine)[:8]


def check(ep: Episode, out: Message) -> None:
    """The invariants of one tool call's outcome (its tool-result message)."""
    assert isinstance(out, Message) and out.role == "tool" and isinstance(out.text, str)
    assert len(out.text) <= MAX_REPLY_CHARS, len(out.text)
    if out.invalid:
        assert out.error
        if ep.strict:
            assert ep.done and ep.hard_fail_reason


def check_result(ep: Episode) -> dict[str, Any]:
    """The invariants of the episode's result: bounded, serialisable, rewards in [-1, 1]."""
    result = ep.result()
    r = result.reward
    for value in (r.task, r.efficiency, r.hallucination, r.total):
        assert math.isfinite(value) and -1.0 <= value <= 1.0, r
    if ep.hard_fail_reason is not None:
        assert r.hard_fail and r.total == -1.0
    data = result.to_dict()
    text = json.dumps(data, allow_nan=False, default=str)
    assert len(text) <= MAX_RESULT_JSON_CHARS, len(text)
    assert isinstance(result.explanation(), str)
    assert "" not in result.invented_ids  # a blank id names nothing
    return data


def params(name: str) -> dict[str, Any]:
    return SPECS[name].parameters["properties"]


def json_type(prop: dict[str, Any]) -> str:
    if "type" in prop:
        return prop["type"]
    return next(a["type"] for a in prop["anyOf"] if a["type"] != "null")


def valid_value(prop: dict[str, Any], ep: Episode) -> Any:
    kind = json_type(prop)
    return {"string": world_ids(ep)[0], "integer": 1, "number": 10.0, "array": world_ids(ep)[:1]}[kind]


def valid_args(name: str, ep: Episode) -> dict[str, Any]:
    spec = SPECS[name]
    return {p: valid_value(params(name)[p], ep) for p in spec.parameters["required"]}


def tools_with_params(env: str) -> list[str]:
    return [n for n in _template(env).env.tool_names if params(n)]


def string_params(env: str) -> list[tuple[str, str]]:
    return [(n, p) for n in _template(env).env.tool_names for p, prop in params(n).items()
            if json_type(prop) == "string"]


def env_tool_param_cases(kind: str | None = None) -> list[tuple[str, str, str]]:
    """(env, tool, param) for every parameter of every env's tools (optionally of one JSON type)."""
    out = []
    for env in ENVS:
        for name in _template(env).env.tool_names:
            for p, prop in params(name).items():
                if kind is None or json_type(prop) == kind:
                    out.append((env, name, p))
    return out


# ------------------------------------------------------------------ hypothesis
def _values(ep: Episode, env: str) -> st.SearchStrategy[Any]:
    ids = world_ids(ep) + list(foreign_ids(env))
    strings = st.one_of(
        st.sampled_from(ids),
        st.sampled_from(ids).map(lambda s: f"  {s.lower()} "),
        st.text(max_size=40),
        st.sampled_from(["", " ", "\t\n", MB, "y" * MAX_ARG_CHARS, "y" * (MAX_ARG_CHARS + 1), *WEIRD]),
    )
    scalars = st.one_of(
        strings,
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([0, -1, -0.0, 1e18, 10**18, 2.0, 2.5, 99, 100, True, False, None]),
    )
    return st.one_of(
        scalars,
        st.lists(strings, max_size=4),
        st.lists(scalars, max_size=3),
        st.just([ids[0]] * (MAX_ARG_ITEMS + 1)),
        st.dictionaries(st.text(max_size=5), scalars, max_size=2),
    )


@st.composite
def _call(draw: st.DrawFn, ep: Episode, env: str) -> tuple[Any, Any]:
    tools = list(ep.env.tool_names)
    name = draw(st.one_of(
        st.sampled_from(tools),
        st.sampled_from(tools),  # weight: mostly real tools
        st.sampled_from(["", " ", "teleport", "CATALOG_SEARCH", "checkout ", "x" * 10_000, None, 3, ["ask_user"]]),
        st.text(max_size=20),
    ))
    values = _values(ep, env)
    if draw(st.integers(0, 9)) == 0:  # arguments that are not a dict at all
        return name, draw(st.one_of(st.none(), st.lists(values, max_size=2), st.text(max_size=10),
                                    st.integers(), st.floats()))
    props = params(name) if isinstance(name, str) and name in SPECS else {}
    args: dict[Any, Any] = {}
    for p in props:
        choice = draw(st.integers(0, 4))
        if choice == 0:
            continue  # omitted
        if choice <= 2:
            args[p] = valid_value(props[p], ep) if choice == 1 else draw(st.sampled_from(world_ids(ep)))
        else:
            args[p] = draw(values)
    if draw(st.integers(0, 7)) == 0:
        args[draw(st.sampled_from(["extra", "", "product_id ", 0, "__class__"]))] = draw(values)
    return name, args


#: Fixed fuzz inputs in CI; ten times as many, freshly drawn, under --long (conftest profiles).
FUZZ = settings(max_examples=examples(30))


@pytest.mark.parametrize("env", ENVS)
@FUZZ
@given(data=st.data())
def test_random_call_sequences_never_crash(env, data):
    strict = data.draw(st.booleans(), label="strict")
    ep = fresh(env, strict=strict)
    for _ in range(data.draw(st.integers(1, 6), label="steps")):
        if data.draw(st.integers(0, 5)) == 0:
            text = data.draw(st.sampled_from(["", "ok?", MB[:5000], *WEIRD]))
            if ep.done:
                with pytest.raises(EpisodeOver):
                    say(ep, text)
            else:
                assert say(ep, text) is ep.user_messages[-1]
            continue
        name, args = data.draw(_call(ep, env), label="call")
        if ep.done:  # every action after the end is refused, the result unchanged
            before = check_result(ep)
            with pytest.raises(EpisodeOver):
                call(ep, name, args)
            assert check_result(ep) == before
            continue
        check(ep, call(ep, name, args))
    check_result(ep)


@pytest.mark.parametrize("env", ENVS)
@FUZZ
@given(data=st.data())
def test_every_tool_with_fuzzed_values_keeps_going_unless_invalid(env, data):
    """Non-strict: one call per tool of the env; only schema failures are flagged invalid."""
    ep = fresh(env, strict=False)
    for name in ep.env.tool_names:
        if ep.done:
            break
        args = {p: data.draw(_values(ep, env)) for p in params(name) if data.draw(st.booleans())}
        out = call(ep, name, args)
        check(ep, out)
        if out.invalid:
            assert "invalid arguments" in out.text and any(p in out.text for p in params(name))
    check_result(ep)


# ------------------------------------------------------------------ explicit cases
def _expect_invalid(ep: Episode, out: Message, *needles: str) -> None:
    check(ep, out)
    assert out.invalid and out.error, out
    for needle in needles:
        assert needle in out.text, (needle, out.text)
    if ep.strict:
        assert ep.done
        data = check_result(ep)
        assert data["hard_fail"] and data["reward"]["total"] == -1.0
    else:
        assert not ep.done
        check_result(ep)


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("arguments", [None, [], ["query"], "query=usb", "", 5, 1.5, True, ("a",)],
                         ids=repr)
@pytest.mark.parametrize("env", ENVS)
def test_arguments_that_are_not_a_dict(env, arguments, strict):
    ep = fresh(env, strict=strict)
    name = tools_with_params(env)[0]
    _expect_invalid(ep, call(ep, name, arguments), name, "JSON object", type(arguments).__name__)


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("name", ["", "   ", "teleport_order", "CATALOG_SEARCH", "checkout ", MB, None, 42,
                                  ("ask_user",), "ask_user\x00"], ids=lambda n: repr(n)[:20])
def test_unknown_tool_names(name, strict):
    for env in ENVS:
        ep = fresh(env, strict=strict)
        out = call(ep, name, {})
        _expect_invalid(ep, out, "unknown tool", "available:")
        assert len(out.text) < 2000


@pytest.mark.parametrize("env", ENVS)
def test_tools_of_other_envs_are_unknown(env):
    for name in SPECS:
        ep = fresh(env, strict=False)
        if name not in ep.env.tool_names:
            _expect_invalid(ep, call(ep, name, {}), "unknown tool", name)


@pytest.mark.parametrize("env", ENVS)
def test_missing_required_argument_names_it(env):
    for name in tools_with_params(env):
        for p in SPECS[name].parameters["required"]:
            ep = fresh(env, strict=False)
            args = valid_args(name, ep)
            del args[p]
            _expect_invalid(ep, call(ep, name, args), p, "Field required")


@pytest.mark.parametrize("extra", ["extra", "", "Product_ID", "__init__", "x" * 5000])
@pytest.mark.parametrize("env", ENVS)
def test_extra_argument_names_it(env, extra):
    name = tools_with_params(env)[0]
    ep = fresh(env, strict=True)
    args = valid_args(name, ep) | {extra: 1}
    out = call(ep, name, args)
    _expect_invalid(ep, out, "Extra inputs are not permitted", extra[:50])
    assert len(out.text) < 2000


def test_non_string_keys_are_a_schema_failure():
    ep = fresh("cart", strict=True)
    _expect_invalid(ep, call(ep, "catalog_search", {"query": "usb", 1: 2}), "catalog_search")


_WRONG = {
    "string": [5, 1.5, True, None, ["P-1"], {"id": "P-1"}],
    "integer": ["3", "three", 2.5, True, None, [1], float("nan"), float("inf"), -math.inf],
    "number": ["10", True, [1.0], float("nan"), float("inf"), -math.inf],
    "array": ["P-1", 5, None, {"0": "P-1"}, [1, 2], [None], [["P-1"]]],
}


@pytest.mark.parametrize("env,name,param", env_tool_param_cases())
def test_wrong_types_name_the_argument(env, name, param):
    """Wrong JSON types (incl. NaN/inf, list-for-string and string-for-list) are schema failures."""
    prop = params(name)[param]
    kind = json_type(prop)
    optional = "anyOf" in prop
    for bad in _WRONG[kind]:
        if bad is None and optional:
            continue
        ep = fresh(env, strict=False)
        args = valid_args(name, ep) | {param: bad}
        _expect_invalid(ep, call(ep, name, args), name, param)


@pytest.mark.parametrize("env,name,param", env_tool_param_cases("string"))
def test_huge_strings_are_rejected_and_never_echoed(env, name, param):
    for strict in (True, False):
        ep = fresh(env, strict=strict)
        out = call(ep, name, valid_args(name, ep) | {param: MB})
        _expect_invalid(ep, out, param, f"at most {MAX_ARG_CHARS} characters")
        assert len(out.text) < 2000
    # at the bound the call is schema-valid: a readable tool error or a result, still bounded
    ep = fresh(env, strict=True)
    out = call(ep, name, valid_args(name, ep) | {param: "P" * MAX_ARG_CHARS})
    check(ep, out)
    assert not out.invalid
    check_result(ep)


@pytest.mark.parametrize("env", ENVS)
def test_huge_lists_are_rejected(env):
    for name in tools_with_params(env):
        for p, prop in params(name).items():
            if json_type(prop) == "array":
                ep = fresh(env, strict=True)
                out = call(ep, name, {p: ["P-1"] * (MAX_ARG_ITEMS + 1)})
                _expect_invalid(ep, out, p, f"at most {MAX_ARG_ITEMS} items")
                ep = fresh(env, strict=False)
                _expect_invalid(ep, call(ep, name, {p: [MB]}), p)


@pytest.mark.parametrize("text", [*WEIRD, "\ud800", "P-0001\udfff"], ids=repr)
@pytest.mark.parametrize("env", ENVS)
def test_unicode_nul_rtl_and_surrogates(env, text):
    """Odd but valid Unicode reaches the tools; a lone surrogate (unwritable to a UTF-8 log) is a schema failure."""
    surrogate = any(0xD800 <= ord(c) <= 0xDFFF for c in text)
    for name, p in string_params(env):
        ep = fresh(env, strict=False)
        out = call(ep, name, valid_args(name, ep) | {p: text})
        check(ep, out)
        assert out.invalid is surrogate, (name, p, out)
        if surrogate:
            assert p in out.text and "unicode" in out.text
        out.text.encode("utf-8")
        json.dumps(check_result(ep), ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("blank", ["", " ", "\t\n "])
@pytest.mark.parametrize("env", ENVS)
def test_blank_ids_are_tool_errors_not_invented_ids(env, blank):
    for name, p in string_params(env):
        if name == "ask_user":
            continue
        ep = fresh(env, strict=True)
        out = call(ep, name, valid_args(name, ep) | {p: blank})
        check(ep, out)
        assert not out.invalid
        assert "" not in ep.world.referenced_ids
        check_result(ep)


@pytest.mark.parametrize("env", ENVS)
def test_ids_of_other_episodes_are_tool_errors_or_real_catalogue_items(env):
    """Order, line and rule ids of another episode do not exist here; products are shared catalogue items."""
    for name, p in string_params(env):
        for foreign in foreign_ids(env):
            ep = fresh(env, strict=True)
            out = call(ep, name, valid_args(name, ep) | {p: foreign})
            check(ep, out)
            assert not out.invalid
            if foreign.startswith("ORD-") and p == "order_id" and name in ("order_get", "return_check_eligibility"):
                assert out.error and f"No order with id {foreign!r}" in out.text
            check_result(ep)


QUANTITIES = [0, -1, -0.0, 100, 10**18, 1e18, 2**63, -(10**30)]


@pytest.mark.parametrize("quantity", QUANTITIES, ids=repr)
@pytest.mark.parametrize("tool", ["cart_add", "cart_set_quantity"])
def test_out_of_range_quantities_are_readable_errors(tool, quantity):
    ep = fresh("cart", strict=True)
    pid = ep.problem.hidden_state()["goal"]["targets"][0]["product_id"]
    vid = ep.problem.hidden_state()["goal"]["targets"][0].get("variant_id")
    if tool == "cart_set_quantity":
        assert not call(ep, "cart_add", {"product_id": pid, "variant_id": vid}).error
    out = call(ep, tool, {"product_id": pid, "variant_id": vid, "quantity": quantity})
    check(ep, out)
    assert out.error and not out.invalid and "quantity" in out.text
    assert not ep.done
    check_result(ep)


@pytest.mark.parametrize("quantity", [float("nan"), float("inf"), -math.inf, 2.5, "2", True, None, [2]], ids=repr)
def test_non_integer_quantities_are_schema_failures(quantity):
    for strict in (True, False):
        ep = fresh("cart", strict=strict)
        out = call(ep, "cart_add", {"product_id": world_ids(ep)[0], "quantity": quantity})
        _expect_invalid(ep, out, "quantity")


def test_integral_float_quantity_is_accepted_like_json_schema():
    ep = fresh("cart", strict=True)
    target = ep.problem.hidden_state()["goal"]["targets"][0]
    out = call(ep, "cart_add", {"product_id": target["product_id"], "variant_id": target.get("variant_id"),
                                    "quantity": 1.0})
    assert not out.error, out.text
    assert ep.world.cart[0].quantity == 1 and isinstance(ep.world.cart[0].quantity, int)


@pytest.mark.parametrize("field,value,ok", [
    ("min_price", -5.0, True), ("max_price", 0, True), ("max_price", 1e308, True), ("min_rating", 1e18, True),
    ("max_ship_days", -3, True), ("max_ship_days", 10**18, True), ("min_price", float("nan"), False),
    ("max_price", float("inf"), False), ("min_rating", -math.inf, False), ("limit", 0, None),
    ("limit", -1, None), ("limit", 21, None), ("limit", 10**18, None), ("limit", 1e18, None),
])
def test_search_filters_extreme_numbers(field, value, ok):
    """Finite extremes filter (maybe to nothing); NaN/inf are schema failures; a bad limit is a tool error."""
    ep = fresh("cart", strict=False)
    out = call(ep, "catalog_search", {"query": "usb charger", field: value})
    check(ep, out)
    if ok is True:
        assert not out.error, out.text
    elif ok is False:
        assert out.invalid and field in out.text and "finite" in out.text
    else:
        assert out.error and not out.invalid and "limit" in out.text
    check_result(ep)


@pytest.mark.parametrize("answer", ["-5", "-0", "0", "0.0", "9" * 200, "1,000,000,000,000,000", "nan", "inf",
                                    "1e999", "$-12.50", "   ", "😀", "\x00", "9" * 1000, "9" * 1001])
def test_policy_answers_keep_the_reward_finite(answer):
    from ecom_bench.domains.policy.tools import MAX_ANSWER_CHARS

    ep = fresh("policy", strict=True)
    out = call(ep, "answer_policy_question", {"answer": answer})
    check(ep, out)
    assert not out.invalid
    if len(answer) > MAX_ANSWER_CHARS:
        assert out.error and "answer is too long" in out.text
    check_result(ep)


@pytest.mark.parametrize("env", ENVS)
def test_calls_after_the_episode_ended(env):
    """The calls of an action after the one that ended the episode are refused, and every action
    after the end raises `EpisodeOver`: the result stays as the end left it."""
    ep = fresh(env, strict=True)
    calls = [ToolCallRequest("no_such_tool", {}, id="end")]
    calls += [ToolCallRequest(name, valid_args(name, ep), id=name) for name in ep.env.tool_names]
    first, *rest = ep.step(AgentAction(tool_calls=tuple(calls))).observation
    assert first.invalid and ep.done and len(rest) == len(ep.env.tool_names)
    before = check_result(ep)
    for out in rest:
        assert out.error and not out.invalid and "ended" in out.text
    for action in (AgentAction(tool_calls=(ToolCallRequest("no_such_tool", None),)), AgentAction("hello?"),
                   AgentAction(tool_calls=(ToolCallRequest("checkout", {}, parse_error="garbage"),))):
        with pytest.raises(EpisodeOver):
            ep.step(action)
    after = check_result(ep)
    assert after["reward"] == before["reward"] and after["end_reason"] == before["end_reason"]


@pytest.mark.parametrize("env", ENVS)
def test_more_calls_than_the_tool_budget(env):
    ep = fresh(env, strict=True)
    budget = ep.difficulty.tool_budget
    read = next(n for n in ep.env.tool_names if SPECS[n].kind == "read")
    args = valid_args(read, ep)
    outs = [call(ep, read, args) for _ in range(budget)]
    assert not any("budget" in o.text for o in outs)
    for _ in range(MAX_REFUSED_CALLS_PER_TURN + 1):
        out = call(ep, read, args)
        check(ep, out)
        assert out.error and not out.invalid and f"budget of {budget} tool call(s)" in out.text
    assert ep.done and "stalled" in ep.end_reason
    data = check_result(ep)
    assert data["reward"]["total"] == -1.0 and "no final answer" in data["end_reason"]


@pytest.mark.parametrize("env", ENVS)
def test_budget_resets_each_turn_and_user_tools_are_free(env):
    ep = fresh(env, strict=True)
    read = next(n for n in ep.env.tool_names if SPECS[n].kind == "read")
    for _ in range(3):
        for _ in range(ep.difficulty.tool_budget):
            assert "budget" not in call(ep, read, valid_args(read, ep)).text
        if ep.done:
            break
        say(ep, "")  # an empty message is still a turn
    check_result(ep)


def test_results_of_fuzzed_tools_are_bounded_for_legit_maxima():
    ep = fresh("journey", strict=True)
    out = call(ep, "catalog_search", {"query": "a " * 249, "limit": 20})
    check(ep, out)
    assert "too long" not in out.text
