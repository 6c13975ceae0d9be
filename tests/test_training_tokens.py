"""Token-faithful episodes and the gymnasium edges of `EcomEnv`.

Prompts: with the chat templates that ship inside TRL (Qwen2.5, Qwen3 with thinking on and off,
and the Hermes-style Qwen3-Instruct-2507), every step's prompt + completion is a prefix of the
next prompt, over all eight envs at d = 0, 6 and 12; and each prompt is exactly what the
template (its prefix-preserving training variant where TRL ships one) renders from the verbatim
history. Then: what is a call and what is a message, unique call ids, the hard-fail cause,
step limits, vector envs and `gymnasium.make`.
"""

from __future__ import annotations

import importlib.resources
import itertools
import json
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("transformers", reason="chat templates need the `train` extra (transformers)")

from ecom_bench.conversation import AgentAction  # noqa: E402
from ecom_bench.envs import COLLECTIONS  # noqa: E402
from ecom_bench.training import EcomEnv, parse_text  # noqa: E402
from ecom_bench.training.env import REWARD_RANGE, register_envs  # noqa: E402
from ecom_bench.training.prompts import ChatPrompts  # noqa: E402

TEMPLATES = importlib.resources.files("trl") / "chat_templates"
#: family: (template, its options, whether the model thinks, the template a whole history is
#: checked against: the original where it preserves prefixes, else TRL's training variant)
FAMILIES = {
    "qwen2.5": ("qwen2_5.jinja", {}, False, "qwen2_5.jinja"),
    "qwen3-thinking": ("qwen3.jinja", {"enable_thinking": True}, True, "qwen3_training.jinja"),
    "qwen3-no-thinking": ("qwen3.jinja", {"enable_thinking": False}, False, "qwen3_training.jinja"),
    "hermes (qwen3-instruct-2507)": ("qwen3_instruct_2507.jinja", {}, False, "qwen3_instruct_2507.jinja"),
}


def _template(name: str) -> str:
    return (TEMPLATES / name).read_text()


def completion(action: AgentAction, step: int, thinking: bool) -> str:
    """A scripted action as a model would write it: compact JSON calls (what re-serialising
    templates change), the thinking block when thinking is on, the end-of-turn token kept."""
    blocks = [f'<tool_call>\n{json.dumps({"name": c.name, "arguments": c.arguments}, separators=(",", ":"))}'
              "\n</tool_call>" for c in action.tool_calls]
    body = "\n".join([action.text] * bool(action.text) + blocks)
    think = f"<think>\nStep {step}: what does the customer need?\n</think>\n\n" if thinking else ""
    return f"{think}{body}<|im_end|>"


def render(template: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], **options: Any) -> str:
    return ChatPrompts(template, **options).render(messages, tools)


@pytest.mark.parametrize("family", FAMILIES)
def test_each_prompt_extends_the_last_exactly(context, family):
    name, options, thinking, reference = FAMILIES[family]
    prompts = ChatPrompts(_template(name), **options)
    whole = _template(reference)
    steps = replies = 0
    for env_name, d, agent in itertools.product(COLLECTIONS["C8"], (0, 6, 12), ("oracle", "heuristic")):
        env = EcomEnv(env_name, d, context=context)
        obs, _ = env.reset(seed=0)
        prompt = prompts.first(obs["messages"], obs["tools"])
        assert prompt == render(_template(name), env.messages(), env.tools, **options)
        for k in range(200):
            text = completion(env.scripted_action(agent), k, thinking)
            obs, _, terminated, truncated, info = env.step(text)
            assert env.completions[-1].raw == text
            if terminated or truncated:
                break
            following = prompts.next(prompt, text, obs["new_messages"], obs["tools"])
            assert following.startswith(prompt + text), (env_name, d, k)
            assert following == render(whole, env.messages(verbatim=True), env.tools, **options), (env_name, d, k)
            prompt, steps = following, steps + 1
            replies += any(m["role"] == "user" for m in obs["new_messages"])
        assert info["success"] or agent != "oracle", (env_name, d, info.get("explanation"))
    assert steps >= 150 and replies >= 60  # every env, level and agent; customer turns among them


def test_the_first_prompt_and_a_stripped_end_of_turn(context):
    """A generation that drops its stop token is closed with it; templates re-render what the
    model wrote only through `messages(verbatim=True)` (the parsed form re-serialises calls)."""
    prompts = ChatPrompts(_template("qwen2_5.jinja"))
    assert prompts.end_of_turn == "<|im_end|>"
    env = EcomEnv("cart", 6, context=context)
    obs, _ = env.reset(seed=1)
    prompt = prompts.first(obs["messages"], obs["tools"])
    text = '<tool_call>\n{"name":"cart_view","arguments":{}}\n</tool_call>'  # as vLLM returns it: no <|im_end|>
    obs, *_ = env.step(text)
    following = prompts.next(prompt, text, obs["new_messages"], obs["tools"])
    assert following.startswith(prompt + text + "<|im_end|>\n<|im_start|>user\n<tool_response>")
    assert following == render(_template("qwen2_5.jinja"), env.messages(verbatim=True), env.tools)
    parsed = render(_template("qwen2_5.jinja"), env.messages(), env.tools)
    assert '{"name": "cart_view", "arguments": {}}' in parsed and not parsed.startswith(prompt + text)


def _tokenizer(context: Any) -> Any:
    """A byte-level BPE trained here on the envs' own text, with the template's markers as tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    env = EcomEnv("cart", 6, context=context)
    texts = [json.dumps(env.reset(seed=s)[0]) for s in range(3)]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<|im_start|>", "<|im_end|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>")
    tok.add_tokens(["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"])
    tok.chat_template = _template("qwen3.jinja")
    return tok


def test_token_ids_extend_exactly(context):
    """On ids: each prompt's ids are the last prompt's, the completion's as generated, then the
    continuation's; they decode to the text-level prompt. Re-tokenising that text is not always
    the same ids (a merge across the completion's edge), which is why trainers keep ids."""
    tok = _tokenizer(context)
    prompts = ChatPrompts.for_tokenizer(tok, enable_thinking=False)
    env = EcomEnv("cart", 0, context=context)  # one call a turn: many steps
    obs, _ = env.reset(seed=0)
    prompt, ids = prompts.first(obs["messages"], obs["tools"]), prompts.first_ids(obs["messages"], obs["tools"])
    for k in range(50):
        text = completion(env.scripted_action("oracle"), k, False)
        generated = tok.encode(text.removesuffix("<|im_end|>"), add_special_tokens=False)  # stop token dropped
        obs, _, terminated, truncated, _ = env.step(text)
        if terminated or truncated:
            break
        following_ids = prompts.next_ids(ids, generated, obs["new_messages"], obs["tools"])
        following = prompts.next(prompt, text, obs["new_messages"], obs["tools"])
        assert following_ids[:len(ids) + len(generated)] == ids + generated
        assert tok.decode(following_ids) == following
        prompt, ids = following, following_ids
    assert k >= 2


# ------------------------------------------------------------------ what is a call, what is a message
@pytest.mark.parametrize("text,said", [
    ('{"order": "O-1001", "status": "shipped"} is what I see.', '{"order": "O-1001", "status": "shipped"} is what I see.'),
    ('{"name": "Alice", "order": "O-1001"}', '{"name": "Alice", "order": "O-1001"}'),
    ('{"name": "Alice", "order": 5} is what I have on file.', '{"name": "Alice", "order": 5} is what I have on file.'),
    ('```json\n{"items": 2, "total": "$18.00"}\n```', '```json\n{"items": 2, "total": "$18.00"}\n```'),
    ("I can look that up: I'll use a <tool_call> in a moment.", "I can look that up: I'll use a <tool_call> in a moment."),
    ("Which size do you need?<|im_end|>", "Which size do you need?"),
    ("<think>they want socks</think>\n\nWhich size?<|im_end|>\n", "Which size?"),
])
def test_messages_that_look_like_calls_reach_the_customer(context, text, said):
    env = EcomEnv("cart", 6, context=context)
    env.reset(seed=0)
    obs, reward, terminated, _, info = env.step(text)
    assert not terminated and reward == 0.0 and obs["new_messages"][0]["role"] == "user"
    assert obs["assistant"] == {"role": "assistant", "content": said, **(
        {"reasoning_content": "they want socks"} if "<think>" in text else {})}
    assert obs["messages"][-2] == obs["assistant"] and env.transcript[-2].text == said


@pytest.mark.parametrize("text,why", [
    ("<think>The customer wants socks, so I should search for", "ends inside <think>"),
    ("<think>done thinking</think><|im_end|>", "empty output"),
    ("", "empty output"),
    ('<tool_call>\n{"name": "catalog_search", "arguments": {"query": "so', "unclosed <tool_call>"),
    ("<tool_call>catalog_search(query='socks')</tool_call>", "invalid JSON"),
    ('{"name": "catalog_search", "arguments": {"query": ', "does not parse"),
    ('{"name": "catalog_search", "arguments": {"query": "socks"}} and then I will check out', "does not parse"),
])
def test_cut_off_or_empty_output_is_invalid(context, text, why):
    env = EcomEnv("cart", 6, context=context)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(text)
    assert (reward, terminated, info["end_reason"], info["hard_fail_cause"]) == (-1.0, True, "invalid_output",
                                                                                 "invalid_output")
    assert why in info["end_detail"]


def test_prose_before_a_real_call_and_calls_after_a_mention():
    action = parse_text('Searching: the <tool_call> format.\n<tool_call>\n{"name": "catalog_search", '
                        '"arguments": {"query": "socks"}}\n</tool_call><|im_end|>')
    assert action.text == "Searching: the <tool_call> format."
    assert [(c.name, c.arguments, c.parse_error) for c in action.tool_calls] == [
        ("catalog_search", {"query": "socks"}, None)]


def test_call_ids_are_unique_in_an_episode(context):
    env = EcomEnv("cart", 6, context=context)
    env.reset(seed=0)
    two = '<tool_call>{"name": "cart_view", "arguments": {}}</tool_call><tool_call>{"name": "cart_view", "arguments": {}}</tool_call>'
    env.step(two)
    env.step('{"name": "cart_view", "arguments": {}}')
    dup = {"content": "", "tool_calls": [{"id": "call-1", "type": "function", "function": {"name": "cart_view", "arguments": {}}}]}
    obs, *_ = env.step(dup)
    calls = [c["id"] for m in env.messages() if m["role"] == "assistant" for c in m["tool_calls"]]
    results = [m["tool_call_id"] for m in env.messages() if m["role"] == "tool"]
    assert calls == results == ["call-0", "call-1", "call-2", "call-3"]
    assert obs["assistant"]["tool_calls"][0]["id"] == obs["new_messages"][0]["tool_call_id"] == "call-3"
    env.reset(seed=0)
    env.step(two)
    assert [m["tool_call_id"] for m in env.messages() if m["role"] == "tool"] == ["call-0", "call-1"]


# ------------------------------------------------------------------ how an episode ends
def test_hard_fail_cause_tells_unusable_output_from_no_answer(context):
    env = EcomEnv("cart", 0, context=context)
    env.reset(seed=0)
    done, info = False, {}
    while not done:  # the customer's patience runs out: no final answer
        _, reward, terminated, truncated, info = env.step("Could you tell me more?")
        done = terminated or truncated
    assert info["end_reason"] == "user_quit" and reward == -1.0
    assert info["hard_fail"] and info["hard_fail_cause"] == "no_answer"
    env.reset(seed=0)
    *_, info = env.step('<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>')
    assert info["hard_fail_cause"] == "invalid_tool_call"
    env.reset(seed=0)
    while not (step := env.step(env.scripted_action("oracle")))[2]:
        pass
    assert step[4]["success"] and step[4]["hard_fail"] is False and step[4]["hard_fail_cause"] is None


def _stall(env: Any, steps: int) -> tuple[float, bool, dict[str, Any]]:
    """Call an unknown tool until the episode ends (lenient: the error goes back, nothing is spent)."""
    env.reset(seed=0)
    for _ in range(steps):
        _, reward, terminated, truncated, info = env.step('{"name": "no_such_tool", "arguments": {}}')
        if terminated or truncated:
            return reward, truncated, info
    raise AssertionError("no end")


def test_a_step_limit_is_scored_like_the_envs_own_cap(context):
    """`max_steps` and the env's own cap end the episode scored as it stands: −1 with its parts (no
    answer), truncated. A TimeLimit wrapper cuts from outside (that step pays 0); the next reset
    scores the episode the same way and says so."""
    own = gym.make("ecom_bench/tracking-v0", difficulty=0, context=context, strict=False, max_steps=5)
    cap = EcomEnv("tracking", 0, context=context, strict=False)
    for env, steps in ((own, 5), (cap, 1000)):
        reward, truncated, info = _stall(env, steps)
        limit = min(steps, env.unwrapped.episode.max_steps)
        assert (reward, truncated, info["reward_parts"]["total"], info["step"]) == (-1.0, True, -1.0, limit)
        assert info["hard_fail_cause"] == "no_answer"
    assert info["end_reason"] == "step_limit" and cap.episode.max_steps > 5
    cut = gym.make("ecom_bench/tracking-v0", difficulty=0, context=context, strict=False, max_episode_steps=5)
    reward, truncated, info = _stall(cut, 5)
    assert (reward, truncated, "reward_parts" in info) == (0.0, True, False)
    _, info = cut.reset(seed=1)
    assert info["abandoned"]["reward"] == -1.0 and info["abandoned"]["hard_fail_cause"] == "no_answer"
    assert "abandoned" not in cut.reset(seed=1)[1]  # an episode not stepped is not scored
    with pytest.raises(ValueError, match="max_steps"):
        EcomEnv(max_steps=0)


def test_sync_vector_env_plays_episodes(context):
    vec = gym.vector.SyncVectorEnv([lambda: EcomEnv("cart", 3, context=context) for _ in range(2)])
    obs, _ = vec.reset(seed=0)
    assert len(obs) == 2 and all(o["messages"][0]["role"] == "system" for o in obs)
    finished: list[float] = []
    for _ in range(60):
        actions = [e.scripted_action("oracle") if not e.episode.done else "" for e in vec.envs]
        obs, rewards, terminated, truncated, info = vec.step(actions)
        finished += [float(r) for r, t in zip(rewards, terminated | truncated, strict=True) if t]
        if len(finished) >= 4:
            break
    assert finished[:4] == [pytest.approx(0.9)] * 4


def test_every_env_and_collection_is_registered(context):
    ids = register_envs()
    assert len(ids) == 8 + 4 and ids[0] == "ecom_bench/cart-v0"
    for env_id in ids:
        env = gym.make(env_id, difficulty=6, context=context)
        _, info = env.reset(seed=0)
        assert info["env"] in COLLECTIONS.get(env_id[11:-3], (env_id[11:-3],)) and info["difficulty"] == 6


def test_realised_rewards_lie_in_the_documented_range(context):
    """[-1, 0.9]: the hallucination part is never above 0, so a solved, unwasted episode pays 0.9."""
    assert REWARD_RANGE == (-1.0, 0.9) and EcomEnv.reward_range == REWARD_RANGE
    seen = set()
    for env_name in COLLECTIONS["C8"]:
        env = EcomEnv(env_name, 6, context=context)
        for agent in ("oracle", "random"):
            env.reset(seed=0)
            while not (step := env.step(env.scripted_action(agent)))[2] | step[3]:
                pass
            seen.add(step[1])
        env.reset(seed=0)
        seen.add(env.step("<think>cut off")[1])
    assert min(seen) == -1.0 and max(seen) == 0.9


def test_structured_actions_keep_their_reasoning(context):
    env = EcomEnv("cart", 6, context=context)
    env.reset(seed=0)
    obs, *_ = env.step({"content": "", "reasoning_content": "check the cart first",
                        "tool_calls": [{"type": "function", "function": {"name": "cart_view", "arguments": "{}"}}]})
    assert obs["assistant"] == {"role": "assistant", "content": "", "reasoning_content": "check the cart first",
                                "tool_calls": [{"id": "call-0", "type": "function",
                                                "function": {"name": "cart_view", "arguments": {}}}]}
    assert env.messages(verbatim=True)[2] == obs["assistant"] and env.completions[0].raw is None
    with pytest.raises(ValueError, match="tokenizer"):
        ChatPrompts(_template("qwen2_5.jinja")).first_ids(obs["messages"], obs["tools"])
