"""Async batched rollouts (ecom_bench.training.async_rollouts) against the fake OpenAI-compatible
server, through the real `openai.AsyncOpenAI` client: many episodes in flight, the same results as
the in-process rollouts, logprobs and token ids recorded when the server returns them; and the
TRL `rollout_func` over them (trl_rollout), stitching episodes into token-faithful sequences."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

openai = pytest.importorskip("openai", reason="needs the openai SDK (the dev extra has it)")

from conftest import TEST_SPEC  # noqa: E402
from fake_openai_server import Served, render_prompt, running, tokenize  # noqa: E402

from ecom_bench.envs import COLLECTIONS  # noqa: E402
from ecom_bench.training.async_rollouts import (Generation, OpenAIChatPolicy, arollout,  # noqa: E402
                                                completion_from, rollout_async)
from ecom_bench.training.rollouts import PolicyError, RolloutWorkers  # noqa: E402

DIFFICULTY = 6
EPISODES = 32  # all in flight at once
PER_ENV = EPISODES // len(COLLECTIONS["C8"])


@pytest.fixture(scope="module")
def fake(context):
    served = [Served(env, DIFFICULTY, PER_ENV) for env in COLLECTIONS["C8"]]
    served += [Served("cart", 0, 4)]
    with running(served, context) as server:
        yield server


def outcome(r: Any) -> tuple:
    return (r.index, r.env, r.difficulty, r.seed, r.sample, r.success, r.reward, r.reward_parts, r.turns, r.steps,
            r.end_reason, r.end_detail)


class InFlight:
    """A policy that counts the generations waiting on the server at once."""

    def __init__(self, policy: OpenAIChatPolicy) -> None:
        self.policy, self.now, self.peak = policy, 0, 0

    async def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Generation:
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            return await self.policy(messages, tools)
        finally:
            self.now -= 1


def served(fake, model: str, n: int, envs: str, difficulty: int, *, wrap: Any = None, **options: Any) -> Any:
    """`arollout` with an `OpenAIChatPolicy` of `model` on the fake server (its client closed on the loop)."""
    async def go() -> Any:
        async with openai.AsyncOpenAI(base_url=fake.base_url, api_key="x", max_retries=0) as client:
            policy = OpenAIChatPolicy(client, model, logprobs=options.pop("logprobs", False),
                                      token_ids=options.pop("token_ids", False))
            return await arollout(wrap(policy) if wrap else policy, n, envs, difficulty, **options)

    return asyncio.run(go())


@pytest.mark.parametrize("agent, episodes", [("oracle", EPISODES), ("heuristic", EPISODES // 2)])
def test_32_episodes_in_flight_give_the_in_process_results(fake, context, agent, episodes):
    fake.problems.clear()
    counted: list[InFlight] = []

    def count(policy: OpenAIChatPolicy) -> InFlight:
        counted.append(InFlight(policy))
        return counted[0]

    traces = served(fake, agent, episodes, "C8", DIFFICULTY, wrap=count, logprobs=True, context=context,
                    concurrency=EPISODES)
    assert fake.problems == []  # every request was the episode's own conversation and tools
    assert counted[0].peak == episodes  # every episode waited on the server at once
    expected = RolloutWorkers(0, catalog=TEST_SPEC).rollout(agent, episodes, "C8", DIFFICULTY)
    assert [outcome(t) for t in traces] == [outcome(r) for r in expected]
    if agent == "oracle":
        assert all(t.success and t.end_reason == "answered" for t in traces)
    for t in traces:
        assert [c.step for c in t.completions] == list(range(1, t.steps + 1))
        assert t.messages[:2] == [{"role": "system", "content": t.messages[0]["content"]},
                                  {"role": "user", "content": t.messages[1]["content"]}]
        for c in t.completions:
            assert c.logprobs and all(lp < 0 for lp in c.logprobs)
            assert c.token_ids is None and c.prompt_token_ids is None  # not asked for
            assert c.raw["choices"][0]["message"]["role"] == "assistant"
            assert t.messages[c.prompt_messages]["role"] == "assistant"  # the message this call wrote
    assert traces.timings["env"] > 0 and traces.env_ms_per_step > 0 and traces.episodes_per_second > 0


def test_token_ids_and_logprobs_line_up(fake, context):
    traces = served(fake, "oracle", 8, "C8", DIFFICULTY, logprobs=True, token_ids=True, context=context)
    for t in traces:
        for c in t.completions:
            assert c.token_ids is not None and len(c.token_ids) == len(c.logprobs or [])
            assert c.prompt_token_ids == tokenize(render_prompt(t.messages[:c.prompt_messages]))


def test_without_logprobs_nothing_token_level_is_recorded(fake, context):
    traces = served(fake, "oracle", 2, "cart", 0, context=context)
    assert all(c.logprobs is None and c.token_ids is None for t in traces for c in t.completions)
    assert all(t.success for t in traces)


def test_scripted_names_and_plain_callables_play_the_same_episodes(context):
    by_name = rollout_async("oracle", 8, "C8", DIFFICULTY, context=context)
    from ecom_bench.agents import get_policy

    calls = []

    async def heuristic_text(messages, tools):  # an async callable returning an OpenAI message
        calls.append(len(messages))
        await asyncio.sleep(0)
        return {"content": "Could you tell me more?"}

    ran = rollout_async(heuristic_text, 4, "cart", 0, context=context, concurrency=2)
    assert calls and all(t.completions == [] and t.steps >= 1 for t in ran)
    assert [t.reward for t in by_name] == [r.reward for r in RolloutWorkers(0, catalog=TEST_SPEC).rollout(
        "oracle", 8, "C8", DIFFICULTY)]
    assert get_policy("cart", "oracle")  # the name the driver resolves


def test_a_failing_server_names_the_episode_and_cancels_the_rest(fake, context):
    with pytest.raises(PolicyError, match=r"BadRequestError.*unknown model.* at episode \d \(env cart, d 0, "
                                          r"sample \d\), step 1$"):
        served(fake, "no-such-model", 4, "cart", 0, context=context)
    fake.problems.clear()


def test_bad_arguments_are_one_line_errors(context):
    with pytest.raises(ValueError, match="concurrency must be an integer >= 1"):
        rollout_async("oracle", 2, "cart", 0, context=context, concurrency=0)
    with pytest.raises(TypeError, match="policy must be"):
        rollout_async(42, 2, "cart", 0, context=context)

    async def inside():
        rollout_async("oracle", 1, "cart", 0, context=context)

    with pytest.raises(Exception, match="inside a running event loop"):
        asyncio.run(inside())


def test_completion_from_reads_vllm_token_ids_in_logprob_tokens():
    raw = {"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop",
                        "logprobs": {"content": [{"token": "token_id:7", "logprob": -0.5},
                                                 {"token": "token_id:9", "logprob": -1.0}]}}]}
    c = completion_from(raw)
    assert (c.text, c.token_ids, c.logprobs, c.prompt_token_ids) == ("hi", [7, 9], [-0.5, -1.0], None)


# ------------------------------------------------------------------------ TRL's rollout_func
def test_rollout_func_stitches_whole_episodes(fake, context):
    from ecom_bench.training.trl_rollout import EpisodeRollouts, episode_tokens

    rollouts = EpisodeRollouts("C8", DIFFICULTY, rows=16, base_url=fake.base_url, model="oracle", api_key="x",
                               context=context)
    rows = rollouts.dataset()
    assert rows.num_rows == 16 and rows.column_names == ["prompt", "env", "difficulty", "seed", "index"]
    prompts = [rows[i]["prompt"] for i in (0, 0, 7, 9)]  # a GRPO group repeats its prompt
    assert prompts[0][0]["episode"] == "cart/6/0/0" and prompts[3][1]["episode"] == "substitution/6/0/1"
    out = rollouts.play(prompts)
    assert len(out["prompt_ids"]) == 4 and out["stitched"] == [True] * 4
    assert out["episode_success"] == [1.0] * 4 and out["completion_ids"][0] == out["completion_ids"][1]
    for prompt, ids, mask, lps in zip(out["prompt_ids"], out["completion_ids"], out["env_mask"], out["logprobs"],
                                      strict=True):
        assert len(ids) == len(mask) == len(lps) and 0 < sum(mask) <= len(ids)
        assert all((lp < 0) == bool(m) for lp, m in zip(lps, mask, strict=True))  # env tokens carry 0.0
        assert bytes(prompt).decode().startswith("<|system|>")
    # The journey episode (row 7) takes several calls: the environment's tokens sit between them.
    assert 0 in out["env_mask"][2]
    trace = rollouts.traces([rows[7]["prompt"]])[0]
    assert trace.env == "journey" and trace.steps > 1
    whole = episode_tokens(trace)
    assert render_prompt(trace.messages).encode().startswith(bytes(whole.prompt_ids + whole.completion_ids))
    assert len(episode_tokens(trace, 100).completion_ids) == 100
    with pytest.raises(ValueError, match="no episode of this EpisodeRollouts"):
        rollouts.play([[{"role": "user", "content": "hi"}]])
    rollouts.close()


def test_rollout_func_trains_a_grpo_step(fake, context, tmp_path):
    """The real GRPOTrainer takes the rollout_func's sequences and trains one step on CPU."""
    pytest.importorskip("trl", reason='needs the train extra: pip install -e ".[train]"')
    import os

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from ecom_bench.training.trl_rollout import EpisodeRollouts, episode_reward

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(["customer service"], trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1))
    rollouts = EpisodeRollouts("cart", 0, rows=2, base_url=fake.base_url, model="heuristic", api_key="x",
                               context=context)
    args = GRPOConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=4, num_generations=2,
                      max_completion_length=64, report_to="none", use_cpu=True, bf16=False, logging_steps=1)
    trainer = GRPOTrainer(model=model, processing_class=tok, reward_funcs=[episode_reward], args=args,
                          train_dataset=rollouts.dataset(), rollout_func=rollouts)
    trainer.train()
    logs = {k: v for log in trainer.state.log_history for k, v in log.items()}
    assert "rewards/episode_reward/mean" in logs and logs["completions/max_length"] <= 64
    rollouts.close()
