"""`EcomEnv`: the gymnasium contract over the one core loop, and the raw-text action parser."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from ecom_bench.conversation import AgentAction, ToolCallRequest
from ecom_bench.envs import COLLECTIONS
from ecom_bench.episode import EndReason, EpisodeOver
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.agents import get_policy
from conftest import play
from ecom_bench.training import EcomEnv, parse_action, parse_text, to_hermes


@pytest.mark.parametrize("d", [0, 6, 12])
@pytest.mark.parametrize("env_name", COLLECTIONS["C8"])
def test_oracle_succeeds_through_raw_text_on_every_env(context, env_name, d):
    env = EcomEnv(env_name, d, context=context)
    for seed in range(3):
        env.reset(seed=seed)
        total, info = play(env)
        assert info["success"] and info["end_reason"] == "answered", info.get("explanation")
        assert total == pytest.approx(info["reward_parts"]["total"])


def test_reward_is_zero_until_the_end_and_info_carries_the_counters(context):
    env = EcomEnv("cart", 6, context=context)
    obs, info = env.reset(seed=1)
    assert [m["role"] for m in obs["messages"]] == ["system", "user"]
    assert {t["function"]["name"] for t in obs["tools"]} >= {"catalog_search", "checkout"}
    assert info["turn"] == 1 and info["calls_left"] == info["tool_budget"] == 4 and info["turns_left"] == 7
    assert info["success"] is False and "reward_parts" not in info
    done = False
    while not done:
        _, reward, terminated, truncated, info = env.step(to_hermes(env.scripted_action("oracle")))
        done = terminated or truncated
        if not done:
            assert reward == 0.0 and "reward_parts" not in info
    assert terminated and not truncated and reward == info["reward_parts"]["total"] > 0
    with pytest.raises(EpisodeOver, match="reset"):
        env.step("hello?")


def test_same_seed_same_episode_and_inspect_sample_by_index(context):
    """reset(seed, index) is the Inspect task's sample `index` with -T seed=<seed>; scores match the core runner."""
    a, b = EcomEnv("returns", 6, context=context), EcomEnv("returns", 6, context=context)
    first = [a.reset(seed=7)[0]["messages"] for _ in range(2)]
    assert first[0] == first[1] == b.reset(seed=7)[0]["messages"]
    obs, info = a.reset(seed=3, options={"index": 2})
    core = new_episode("returns", 6, 3, 2, context=context)
    assert obs["messages"][1]["content"] == core.opening and (info["seed"], info["index"]) == (3, 2)
    _, info = play(a, "heuristic", raw=False)
    assert info["reward_parts"]["total"] == pytest.approx(run_policy(core, get_policy("returns", "heuristic")).result.reward.total)


def test_unparseable_text_is_a_hard_fail_that_says_why(context):
    env = EcomEnv("cart", 3, context=context)
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step('<tool_call>{"name": "catalog_search", "arguments": {</tool_call>')
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["end_reason"] == EndReason.INVALID_OUTPUT.value and "invalid JSON" in info["end_detail"]
    assert info["hard_fail"] and not info["success"]


def test_lenient_mode_returns_parse_errors_to_the_agent(context):
    env = EcomEnv("cart", 3, context=context, strict=False)
    env.reset(seed=0)
    obs, reward, terminated, _, _ = env.step('{"name": "catalog_search", "arguments": "{not json"}')
    assert not terminated and reward == 0.0
    [tool] = obs["new_messages"]
    assert tool["role"] == "tool" and "Invalid output" in tool["content"]


def test_messages_are_chat_template_ready(context):
    env = EcomEnv("tracking", 6, context=context)
    env.reset(seed=2)
    play(env)
    messages = env.messages()
    assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
    calls = {}
    for m in messages:
        for c in m.get("tool_calls", []):
            assert c["type"] == "function" and isinstance(c["function"]["arguments"], dict)
            calls[c["id"]] = c["function"]["name"]
        if m["role"] == "tool":
            assert calls[m["tool_call_id"]] == m["name"]
    json.dumps(messages)  # plain data
    assert env.observation_space.contains({"messages": messages})


def test_collection_draws_envs_uniformly_and_is_seeded(context):
    env = EcomEnv("C4", 3, context=context)
    env.reset(seed=11)
    drawn = [env.reset()[1]["env"] for _ in range(200)]
    assert set(drawn) == set(COLLECTIONS["C4"]) and all(30 <= drawn.count(e) <= 70 for e in set(drawn))
    again = EcomEnv("C4", 3, context=context)
    again.reset(seed=11)
    assert [again.reset()[1]["env"] for _ in range(200)] == drawn


def test_reset_options_override_one_episode(context):
    env = EcomEnv("cart", 0, context=context)
    _, info = env.reset(seed=0, options={"env": "policy", "difficulty": 9})
    assert (info["env"], info["difficulty"]) == ("policy", 9)
    assert env.reset(seed=0)[1]["env"] == "cart"
    for bad, message in (({"env": "nope"}, "nope"), ({"difficulty": -1}, "difficulty"),
                         ({"difficulty": "hard"}, "adaptive"), ({"index": -2}, "index"), ({"sed": 1}, "sed"),
                         ({"difficulty": "adaptive"}, "needs a curriculum: this env plays a fixed difficulty")):
        with pytest.raises(ValueError, match=message):
            env.reset(options=bad)


def test_gymnasium_checker_and_spaces(context):
    from gymnasium.utils.env_checker import check_env

    env = EcomEnv("discovery", 3, context=context)
    check_env(env, skip_render_check=True)
    assert env.action_space.contains(env.action_space.sample())
    with pytest.raises(TypeError, match="action"):
        env.step(42)
    assert isinstance(env, gym.Env)


def test_render_ansi(context):
    env = EcomEnv("policy", 3, context=context, render_mode="ansi")
    env.reset(seed=0)
    play(env)
    text = env.render()
    assert "[user]" in text and "policy_search" in text


# ------------------------------------------------------------------ the parser
def test_parser_reads_hermes_blocks_and_ignores_thinking():
    action = parse_text('<think>the customer wants socks</think>Let me look.\n<tool_call>\n'
                        '{"name": "catalog_search", "arguments": {"query": "socks"}}\n</tool_call>'
                        '<tool_call>{"name": "cart_view", "arguments": "{}"}</tool_call>')
    assert action.text == "Let me look."
    assert [(c.name, c.arguments, c.parse_error) for c in action.tool_calls] == [
        ("catalog_search", {"query": "socks"}, None), ("cart_view", {}, None)]


@pytest.mark.parametrize("text", [
    '{"name": "checkout", "arguments": {}}',
    '```json\n{"name": "checkout", "arguments": {}}\n```',
    '{"tool_calls": [{"id": "x1", "type": "function", "function": {"name": "checkout", "arguments": "{}"}}]}',
])
def test_parser_reads_bare_json_calls(text):
    [call] = parse_text(text).tool_calls
    assert call.name == "checkout" and call.arguments == {} and call.parse_error is None


@pytest.mark.parametrize("text,why", [
    ('<tool_call>{"name": "x", "arguments": {}}', "unclosed"),
    ("<tool_call>not json</tool_call>", "invalid JSON"),
    ('{"tool_calls": [{"function": ', "does not parse"),
    ('{"name": "checkout", "arguments": [1]}', "JSON object"),
    ('{"name": ', "does not parse"),
])
def test_parser_marks_unreadable_calls(text, why):
    calls = parse_text(text).tool_calls
    assert any(c.parse_error and why in c.parse_error for c in calls)


def test_plain_text_and_structured_actions():
    assert parse_text("Which size do you need?") == AgentAction("Which size do you need?")
    assert parse_text("<think>hmm</think> Hello!") == AgentAction("Hello!")
    structured = parse_action({"content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "cart_view", "arguments": {}}}]})
    assert structured.tool_calls == (ToolCallRequest("cart_view", {}, "c1"),)
    # OpenAI's content parts (the red team's finding: they were refused)
    parts = {"role": "assistant", "content": [{"type": "text", "text": "Which "}, {"type": "text", "text": "size?"}]}
    assert parse_action(parts) == AgentAction("Which size?")
    for bad in (None, 3, ["text"], {"content": 5}, {"tool_calls": "x"}, {"content": [{"type": "image_url"}]},
                {"content": [{"type": "text", "text": 5}]}, {"content": ["hi"]}):
        with pytest.raises(TypeError):
            parse_action(bad)


def test_hermes_round_trip():
    action = AgentAction("ok", (ToolCallRequest("catalog_search", {"query": "red mug", "top_k": 5}, "a"),))
    back = parse_text(to_hermes(action))
    assert back.text == "ok" and [(c.name, c.arguments) for c in back.tool_calls] == [
        ("catalog_search", {"query": "red mug", "top_k": 5})]


# ------------------------------------------------- found by the red team (tests/red_team, training front)
DEEP = "[" * 5000


@pytest.mark.parametrize("text", [
    f"<tool_call>{DEEP}</tool_call>",
    '{"name": "catalog_search", "arguments": ' + DEEP,
    '{"name": "catalog_search", "arguments": ' + json.dumps(DEEP) + "}",
    {"content": "", "tool_calls": [{"function": {"name": "catalog_search", "arguments": DEEP}}]},
])
def test_json_nested_too_deep_is_invalid_output_not_a_crash(context, text):
    env = EcomEnv("cart", 0, context=context)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(text)
    assert (reward, terminated, info["end_reason"]) == (-1.0, True, "invalid_output")
    assert "nested too deeply" in info["end_detail"]


@pytest.mark.parametrize("text", [
    "```" + "\n" * 20_000 + "ok",  # cubic in the old fence regex: hours
    "<tool_call>" * 50_000,  # quadratic in the old block regexes: minutes
    "<think>" * 50_000 + "hello",
    "</think>" * 50_000,
    " <|im_end|>" * 100_000,  # a copy per stripped token: quadratic
    "<tool_call> prose" * 50_000,  # tags in prose: each looks for its closing tag once at most
    "</tool_call><tool_call>x" * 50_000,
])
def test_degenerate_output_parses_in_linear_time(text):
    import time

    start = time.perf_counter()
    parse_text(text)
    assert time.perf_counter() - start < 5.0


def test_fenced_plain_text_is_a_message_to_the_customer(context):
    assert parse_text("```\nOrder summary: 2 x blue mug\n```").tool_calls == ()
    env = EcomEnv("cart", 0, context=context)
    env.reset(seed=0)
    obs, reward, terminated, *_ = env.step("```\nOrder summary: 2 x blue mug, total $18.00\n```")
    assert not terminated and obs["new_messages"][0]["role"] == "user"


def test_template_opened_thinking_is_dropped():
    assert parse_text("the customer wants a mug</think>Which colour would you like?") == AgentAction(
        "Which colour would you like?")


def test_episodes_cut_off_by_a_time_limit_count_as_failures(context):
    """A policy that stalls when unsure must not be promoted on the episodes it chose to finish."""
    from gymnasium.wrappers import TimeLimit

    from ecom_bench.training import AdaptiveCurriculum

    curriculum = AdaptiveCurriculum(tau_num=8)
    env = TimeLimit(EcomEnv("tracking", "adaptive", curriculum=curriculum, context=context), max_episode_steps=6)
    for i in range(64):
        env.reset(seed=i)
        done = False
        while not done:
            inner = env.unwrapped
            sure = i % 4 == 0
            action = inner.scripted_action("oracle") if sure else '{"name": "datetime_now", "arguments": {}}'
            *_, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
    env.close()
    window = curriculum.windows["tracking"]
    assert window.episodes == 64 and window.high == 0


def test_a_turn_of_refused_final_answers_ends_the_episode(context):
    env = EcomEnv("tracking", 3, context=context)
    env.reset(seed=0)
    bad = {"name": "report_order_status", "arguments": {"order_id": "x", "status": "shipped"}}
    obs, reward, terminated, _, info = env.step({"content": "", "tool_calls": [bad] * 50})
    assert terminated and info["end_reason"] == "stalled" and reward == -1.0
    assert sum("ended" in m["content"] for m in obs["new_messages"]) == 50 - 4
