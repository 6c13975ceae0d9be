"""The TRL adapter: generated tools match the core specs, the oracle succeeds through the tool
methods, reward functions read the episodes, and the real `trl.GRPOTrainer` trains 2 steps on
CPU with a tiny random model and an offline tokenizer, playing real episodes."""

from __future__ import annotations

import inspect
import json
import os
from typing import Any

import pytest

# The `train` extra (CI installs it); without it this file is skipped, as the README's install has none.
pytest.importorskip("trl", reason='needs the train extra: pip install -e ".[train]"')
import torch  # noqa: E402

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers  # noqa: E402
from transformers import (LogitsProcessor, LogitsProcessorList, PreTrainedTokenizerFast, Qwen2Config,  # noqa: E402
                          Qwen2ForCausalLM, TrainerCallback)
from transformers.utils import get_json_schema  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402
from trl.chat_template_utils import qwen3_chat_template  # noqa: E402

from ecom_bench.agents import get_policy  # noqa: E402
from ecom_bench.conversation import Message  # noqa: E402
from ecom_bench.envs import COLLECTIONS, get_env  # noqa: E402
from ecom_bench.training.curriculum import AdaptiveCurriculum  # noqa: E402
from ecom_bench.training.trl import (CURRICULUM_FILE, ENDED, CurriculumCheckpoint, EcomTRLEnv,  # noqa: E402
                                     build_dataset, environment_class, environment_factories, r_total,
                                     system_prompt)


# ----------------------------------------------------------------------- tools and reset
@pytest.mark.parametrize("env", COLLECTIONS["C8"])
def test_tool_methods_match_the_core_specs(env: str) -> None:
    cls = environment_class(env)
    tools = [n for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
             if not n.startswith("_") and n != "reset"]
    assert not hasattr(cls, "get_reward")  # TRL would add it as a second reward
    assert sorted(tools) == sorted(get_env(env).tool_names)  # exactly what TRL will expose
    for name in tools:
        spec = get_env(env).toolkit_class().specs()[name]
        schema = get_json_schema(getattr(cls, name))["function"]  # what TRL renders into the prompt
        assert schema["name"] == name and schema["description"] == " ".join(spec.description.split())
        params = spec.parameters
        assert list(schema["parameters"]["properties"]) == list(params["properties"])
        assert sorted(schema["parameters"].get("required", [])) == sorted(params["required"])
        for arg, prop in schema["parameters"]["properties"].items():
            core = params["properties"][arg]
            assert prop["description"] == " ".join(core["description"].split())
            nullable = "anyOf" in core
            core_type = next(s for s in core["anyOf"] if s["type"] != "null") if nullable else core
            assert prop["type"] == core_type["type"] and prop.get("nullable", False) == nullable
            if core_type["type"] == "array":
                assert prop["items"]["type"] == core_type["items"]["type"]


def test_environment_class_is_one_class_per_env_and_refuses_collections() -> None:
    assert environment_class("cart") is environment_class("C1")
    assert environment_factories("C2")["cart"]().__class__ is environment_class("cart")
    with pytest.raises(ValueError, match="one environment"):
        environment_class("C2")
    with pytest.raises(TypeError):
        EcomTRLEnv()


def test_reset_refuses_bad_rows(context: Any) -> None:
    env = environment_class("cart")(context=context)
    with pytest.raises(ValueError, match="route rows"):
        env.reset(env="returns", difficulty=0)
    with pytest.raises(ValueError, match="no difficulty"):
        env.reset(env="cart")
    with pytest.raises(ValueError, match="curriculum"):
        env.reset(env="cart", difficulty=0, adaptive=True)
    with pytest.raises(ValueError, match="system message"):
        env.reset(env="cart", difficulty=1, prompt=[{"role": "user", "content": ""}])
    with pytest.raises(ValueError, match="difficulty"):
        env.reset(env="cart", difficulty=-1)
    with pytest.raises(ValueError, match="index"):
        env.reset(env="cart", difficulty=0, index=-2)
    with pytest.raises(RuntimeError, match="reset"):
        _ = env.outcome


def _as_plain_messages(transcript: list[Message]) -> list[Message]:
    """The transcript in the shape the scripted policies read: each ask_user exchange as a plain
    agent message and customer reply (the journey's read new requests from user messages), and
    a run of one-call steps (one per tool method call) as one multi-call action."""
    asked = {c.id: c.arguments["question"] for m in transcript for c in m.tool_calls if c.name == "ask_user"}
    out: list[Message] = []
    calls: list[Any] = []
    results: list[Message] = []

    def flush() -> None:
        if calls:
            out.extend([Message("assistant", "", tool_calls=tuple(calls)), *results])
        calls.clear(), results.clear()

    for m in transcript:
        if m.role == "assistant" and m.tool_calls and not any(c.id in asked for c in m.tool_calls):
            calls.extend(m.tool_calls)
        elif m.role == "tool" and m.tool_call_id not in asked and calls:
            results.append(m)
        elif m.role == "tool" and m.tool_call_id in asked:
            flush()
            out += [Message("assistant", asked[m.tool_call_id]), Message("user", m.text)]
        elif not (m.role == "assistant" and m.tool_calls):
            flush()
            out.append(m)
    flush()
    return out


def _play_oracle(env: EcomTRLEnv) -> None:
    """The oracle through the adapter's tool methods only: its messages go through ask_user."""
    episode = env.ecom_env.episode
    oracle = get_policy(episode.env.name, "oracle")
    while not episode.done:
        action = oracle.act(_as_plain_messages(env.ecom_env.transcript), episode.problem.hidden_state(),
                            episode.status())
        if not action.tool_calls:
            env.ask_user(question=action.text)
        for call in action.tool_calls:
            getattr(env, call.name)(**call.arguments)


@pytest.mark.parametrize("env", COLLECTIONS["C8"])
def test_oracle_succeeds_through_the_tool_methods(env: str, context: Any) -> None:
    instance = environment_class(env)(context=context)
    for index in range(2):
        row = build_dataset(env, 6, rows=index + 1)[index]
        text = instance.reset(**{k: v for k, v in row.items() if k != "environment"})  # as TRL calls it
        episode = instance.ecom_env.episode
        # the evaluation's prompt: the Inspect task's system prompt, then the customer's opening
        assert row["prompt"] == [{"role": "system", "content": episode.system_prompt()}, {"role": "user", "content": ""}]
        assert text == episode.opening
        _play_oracle(instance)
        assert instance.result.reward.success, instance.result.explanation()
        assert instance.outcome.total == instance.result.reward.total > 0 and instance.outcome.end == "answered"
        assert instance.ask_user(question="still there?") == ENDED


def test_r_total_reads_the_episodes_and_logs_them(context: Any) -> None:
    played, aborted = environment_class("cart")(context=context), environment_class("cart")(context=context)
    played.reset(difficulty=3, index=0)
    _play_oracle(played)
    aborted.reset(difficulty=3, index=1)
    aborted.cart_view()  # the rollout stops here: scored as it stands, without a final answer
    envs = [played, aborted, object()]
    metrics: dict[str, float] = {}
    extra: dict[str, list[Any]] = {}
    totals = r_total(environments=envs, log_metric=metrics.__setitem__, log_extra=extra.__setitem__)
    assert totals == [played.result.reward.total, -1.0, None]
    assert aborted.result.end_reason.startswith("the rollout ended")
    assert metrics["episode/success"] == 0.5 and metrics["episode/r_total"] == pytest.approx(sum(totals[:2]) / 2)
    assert metrics["episode/end/answered"] == metrics["episode/end/aborted"] == 0.5
    assert metrics["episode/end/user_quit"] == 0.0 and metrics["episode/turns"] >= 0.5
    assert {"episode/r_task", "episode/r_efficiency", "episode/r_hallucination"} <= set(metrics)
    assert extra["end_reason"] == ["answered", "aborted", None] and extra["success"] == [True, False, None]
    with pytest.raises(ValueError, match="environment_factory"):
        r_total(prompts=["x"])


def test_adaptive_rows_draw_from_the_curriculum_and_record(context: Any) -> None:
    curriculum = AdaptiveCurriculum(tau_num=1)
    make = environment_factories("cart", curriculum=curriculum, context=context)["cart"]
    ds = build_dataset("cart", "adaptive", rows=8, seed=5, curriculum=curriculum)
    env = make()
    row = ds[0]
    assert row["adaptive"] and row["difficulty"] == 0
    env.reset(**row)
    _play_oracle(env)
    assert env.outcome == env.outcome  # read twice, counted once
    assert curriculum.window("cart") == (0, 1) and curriculum.windows["cart"].episodes == 1
    # rows fetched now draw from [0, 1]; the same row always draws the same level (a GRPO group)
    rows = [ds[i] for i in range(8)]
    assert {r["difficulty"] for r in rows} == {0, 1} and [ds[i]["difficulty"] for i in range(8)] == [
        r["difficulty"] for r in rows]
    for r in rows:  # the system message follows the drawn level
        assert r["prompt"][0]["content"] == system_prompt("cart", r["difficulty"])
    with pytest.raises(ValueError, match="curriculum"):
        build_dataset("cart", "adaptive")
    with pytest.raises(ValueError, match="adaptive"):
        build_dataset("cart", 3, curriculum=curriculum)


def test_build_dataset_schedules() -> None:
    ds = build_dataset("C4", 6, rows=8, seed=3)
    assert ds.column_names == ["prompt", "environment", "env", "difficulty", "seed", "index", "adaptive"]
    assert ds["environment"] == ds["env"] == list(COLLECTIONS["C4"]) * 2
    assert ds["difficulty"] == [6] * 8 and ds["seed"] == [3] * 8 and ds["index"] == list(range(8))
    assert build_dataset("cart", [0, 1, 2], rows=3)["difficulty"] == [0, 1, 2]
    assert build_dataset("C2", lambda i, env: i // 2, rows=4)["difficulty"] == [0, 0, 1, 1]
    for bad, match in (([1], "one level per row"), ("hard", "adaptive"), (-1, "difficulty")):
        with pytest.raises(ValueError, match=match):
            build_dataset("C2", bad, rows=2)
    with pytest.raises(ValueError, match="unknown environment"):
        build_dataset("cart,shoes", 0)


# ----------------------------------------------------------------------- the real trainer
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TAGS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]


def _tokenizer(context: Any) -> PreTrainedTokenizerFast:
    """A byte-level BPE trained here on the envs' own text, with Qwen3's chat template (TRL knows
    how to parse its tool calls and makes a prefix-preserving training variant of it)."""
    texts = []
    for name in COLLECTIONS["C2"]:
        env = environment_class(name)(context=context)
        for index in range(3):
            texts.append(env.reset(difficulty=3, index=index))
            texts.append(json.dumps([get_json_schema(getattr(env, t)) for t in get_env(name).tool_names]))
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=1200, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                  padding_side="left")
    tok.add_tokens(TAGS)
    tok.chat_template = qwen3_chat_template
    return tok


#: What the scripted policy says in each model turn: ask the customer, give the env's final
#: answer, then end the rollout with a plain reply (no tool call).
def _script(final: str) -> list[str]:
    return ['<tool_call>\n{"name": "ask_user", "arguments": {"question": "What do you need?"}}\n</tool_call>',
            f'<tool_call>\n{{"name": "{final}", "arguments": {{}}}}\n</tool_call>', "Thanks, goodbye!"]


class Scripted(LogitsProcessor):
    """Steers sampling of the random model along the script (the model's own logits are untouched
    for training: GRPO recomputes log-probs with a real forward pass)."""

    def __init__(self, tok: PreTrainedTokenizerFast) -> None:
        self.header = tok.encode("<|im_start|>assistant\n")
        self.eos = tok.eos_token_id
        self.scripts = {final: [tok.encode(t) + [self.eos] for t in _script(final)]
                        for final in ("checkout", "recommend_products")}
        self.tok = tok
        self.prompts: set[str] = set()  # every prompt the model was sampled from (its text before the first turn)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        forced = torch.full_like(scores, float("-inf"))
        n = len(self.header)
        for row, ids in enumerate(input_ids.tolist()):
            starts = [i + n for i in range(len(ids) - n + 1) if ids[i:i + n] == self.header]
            prompt = self.tok.decode(ids[:starts[0]])
            self.prompts.add(prompt)
            final = "checkout" if '"name": "checkout"' in prompt else "recommend_products"
            script = self.scripts[final][min(len(starts) - 1, 2)]
            k = len(ids) - starts[-1]
            forced[row, script[k] if k < len(script) else self.eos] = 0.0
        return forced


class TinyScriptedLM(Qwen2ForCausalLM):
    """A randomly initialised Qwen2 (a few hundred k parameters) whose sampling follows `Scripted`."""

    script: Scripted

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        return super().generate(*args, logits_processor=LogitsProcessorList([self.script]), **kwargs)


class Seen(TrainerCallback):
    def __init__(self) -> None:
        self.logs: list[dict[str, float]] = []

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kw: Any) -> None:
        self.logs.append(dict(logs or {}))


def _tiny_model(tok: PreTrainedTokenizerFast) -> TinyScriptedLM:
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192,
                         eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, tie_word_embeddings=True)
    model = TinyScriptedLM(config)
    model.script = Scripted(tok)
    assert sum(p.numel() for p in model.parameters()) < 500_000
    return model


def _grpo_args(output_dir: Any, **overrides: Any) -> GRPOConfig:
    settings: dict[str, Any] = dict(
        output_dir=str(output_dir), max_steps=2, per_device_train_batch_size=4, num_generations=2,
        max_completion_length=600, learning_rate=1e-3, logging_steps=1, report_to="none", use_cpu=True, bf16=False,
        save_strategy="no", seed=0, dataloader_num_workers=0)
    return GRPOConfig(**{**settings, **overrides})


def test_grpo_trainer_plays_episodes_on_r_total_and_logs_them(context: Any, tmp_path: Any) -> None:
    """The acceptance run: 2 GRPO steps of the real trainer on C2; the one reward is r_total
    (the trainer's reward functions and weights say so), and the episodes' success, reward parts,
    end reasons and turns reach the trainer's logs."""
    tok = _tokenizer(context)
    model = _tiny_model(tok)
    factories = environment_factories("C2", context=context)
    played: list[tuple[str, dict[str, Any], EcomTRLEnv]] = []

    def spy(make: Any) -> Any:  # record each instance TRL builds, and what it was reset with
        def factory() -> EcomTRLEnv:
            env = make()
            reset = env.reset

            def tracked(**row: Any) -> str:
                played.append((env.env_name, row, env))
                return reset(**row)
            env.reset = tracked  # an instance attribute: TRL still reads the class's tools
            return env
        return factory

    seen = Seen()
    trainer = GRPOTrainer(model=model, processing_class=tok, reward_funcs=[r_total], args=_grpo_args(tmp_path),
                          train_dataset=build_dataset("C2", 2, rows=8),
                          environment_factory={name: spy(f) for name, f in factories.items()}, callbacks=[seen])
    # r_total alone, weight 1: no env-owned get_reward column, no success reward
    assert trainer.reward_func_names == ["r_total"] and trainer.reward_weights.tolist() == [1.0]
    trainer.train()

    # Episodes ran: instances reset with dataset rows, stepped through ask_user and the final tool.
    assert len(played) == 2 * 4 and {name for name, _, _ in played} == {"cart", "substitution"}
    for name, row, env in played:
        assert row["env"] == name and row["difficulty"] == 2 and "environment" not in row
        episode = env.ecom_env.episode
        assert episode.turns >= 1 and len(episode.user_messages) >= 2  # the customer answered ask_user
        assert episode.done
        # the model was prompted as in evaluation: the episode's system prompt, then the opening
        assert any(episode.system_prompt() in p and episode.opening in p for p in model.script.prompts)
    assert not any("A reply without a tool call" in p for p in model.script.prompts)
    logs = {k: v for log in seen.logs for k, v in log.items()}
    assert "rewards/r_total/mean" in logs and not any(k.startswith("rewards/") and "Env" in k for k in logs)
    for metric in ("success", "r_total", "r_task", "r_efficiency", "r_hallucination", "turns", "end/answered",
                   "end/aborted", "end/user_quit"):
        assert f"episode/{metric}" in seen.logs[0] and f"episode/{metric}" in seen.logs[1], metric
    assert sum(seen.logs[1][f"episode/end/{r}"] for r in ("answered", "aborted", "user_quit", "user_ended", "stalled",
                                                         "invalid_tool_call", "invalid_output", "step_limit",
                                                         "not_finished")) == pytest.approx(1.0)
    last = [env.outcome for _, _, env in played[-4:]]  # pooled instances hold the last step's episodes
    assert float(seen.logs[1]["reward"]) == pytest.approx(sum(o.total for o in last) / 4)
    assert seen.logs[1]["episode/r_total"] == pytest.approx(seen.logs[1]["reward"])
    assert seen.logs[1]["episode/success"] == pytest.approx(sum(o.success for o in last) / 4)
    assert logs["tools/call_frequency"] > 0 and logs["tools/failure_frequency"] == 0
    assert all(float(log["loss"]) == 0.0 for log in seen.logs[:2])  # every group scored alike: no advantage
    print("\nGRPO step logs:", {k: round(float(v), 3) for k, v in seen.logs[1].items() if k.startswith(("episode/", "reward"))})


def test_curriculum_is_saved_with_checkpoints_and_restored_on_resume(context: Any, tmp_path: Any) -> None:
    """An adaptive run saves the curriculum into each checkpoint; a new trainer resuming from
    the first checkpoint restores that state (not the later one, not a fresh one)."""
    tok = _tokenizer(context)

    def trainer(curriculum: AdaptiveCurriculum, max_steps: int) -> GRPOTrainer:
        return GRPOTrainer(model=_tiny_model(tok), processing_class=tok, reward_funcs=[r_total],
                           args=_grpo_args(tmp_path, max_steps=max_steps, save_strategy="steps", save_steps=1),
                           train_dataset=build_dataset("cart", "adaptive", rows=8, curriculum=curriculum),
                           environment_factory=environment_factories("cart", curriculum=curriculum, context=context),
                           callbacks=[CurriculumCheckpoint(curriculum)])

    first = AdaptiveCurriculum(tau_num=2)
    trainer(first, 2).train()
    saved = [json.loads((tmp_path / f"checkpoint-{step}" / CURRICULUM_FILE).read_text()) for step in (1, 2)]
    assert saved[1] == first.state_dict() and saved[0]["windows"]["cart"]["episodes"] == 4
    assert saved[1]["windows"]["cart"]["episodes"] == 8

    resumed = AdaptiveCurriculum(tau_num=2)
    run = trainer(resumed, 2)
    callback = next(c for c in run.callback_handler.callbacks if isinstance(c, CurriculumCheckpoint))
    restored: list[dict[str, Any]] = []
    run.add_callback(type("Peek", (TrainerCallback,), {  # after CurriculumCheckpoint's on_train_begin
        "on_train_begin": lambda self, *a, **k: restored.append(resumed.state_dict())})())
    run.train(resume_from_checkpoint=str(tmp_path / "checkpoint-1"))
    assert restored == [saved[0]] and callback.restored_from.endswith(f"checkpoint-1/{CURRICULUM_FILE}")
    assert resumed.windows["cart"].episodes == 8  # step 2 played on from the restored state
    bad = AdaptiveCurriculum(tau_num=2)
    (tmp_path / "checkpoint-1" / CURRICULUM_FILE).unlink()
    with pytest.raises(FileNotFoundError, match="curriculum.json"):
        trainer(bad, 2).train(resume_from_checkpoint=str(tmp_path / "checkpoint-1"))


def test_single_environment_factory_builds_a_trainer(context: Any, tmp_path: Any) -> None:
    """A plain class is a valid single factory: every row plays that env (C1, the published run)."""
    tok = _tokenizer(context)
    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1))
    args = GRPOConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=2, num_generations=2,
                      report_to="none", use_cpu=True, bf16=False)
    trainer = GRPOTrainer(model=model, processing_class=tok, reward_funcs=[r_total], args=args,
                          train_dataset=build_dataset("C1", 0, rows=2), environment_factory=environment_class("cart"))
    assert [t.__name__ for t in trainer.tools] == sorted(get_env("cart").tool_names)
    assert trainer.reward_func_names == ["r_total"] and trainer.reward_weights.tolist() == [1.0]


def _example() -> Any:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "examples" / "train_grpo_c1.py"
    spec = importlib.util.spec_from_file_location("train_grpo_c1", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_c1_example_config_builds() -> None:
    """The published run's config builds without GPUs (it is not run)."""
    module = _example()
    config = module.grpo_config(use_cpu=True, bf16=False, use_vllm=False)
    assert (config.num_generations, config.learning_rate, config.max_steps) == (8, 1e-5, 300)
    assert config.loss_type == "dapo" and config.epsilon_high == 0.28 and config.beta == 0.0
    assert config.reward_weights == [1.0]
    assert module.MODEL == "Qwen/Qwen3-8B"


def test_c1_example_trains_and_resumes_with_its_curriculum(context: Any, tmp_path: Any) -> None:
    """The example's own trainer (`build_trainer` of its arguments) trains a step on CPU with the
    tiny model, saves the curriculum with the checkpoint, and `--resume` restores it."""
    module = _example()
    tok = _tokenizer(context)
    small = dict(use_cpu=True, bf16=False, use_vllm=False, gradient_checkpointing=False, max_steps=1,
                 num_generations=2, per_device_train_batch_size=2, gradient_accumulation_steps=1,
                 max_completion_length=600, save_steps=1, lr_scheduler_type="constant", warmup_steps=0)
    args = module.parse_args(["--adaptive", "--rows", "4", "--output-dir", str(tmp_path)])
    trainer = module.build_trainer(args, model=_tiny_model(tok), processing_class=tok, **small)
    assert trainer.reward_func_names == ["r_total"] and trainer.reward_weights.tolist() == [1.0]
    trainer.train()
    saved = json.loads((tmp_path / "checkpoint-1" / CURRICULUM_FILE).read_text())
    assert saved["windows"]["cart"]["episodes"] == 2
    resumed = module.build_trainer(module.parse_args(["--adaptive", "--rows", "4", "--output-dir", str(tmp_path),
                                                      "--resume"]),
                                   model=_tiny_model(tok), processing_class=tok, **{**small, "max_steps": 2})
    resumed.train(resume_from_checkpoint=True)
    callback = next(c for c in resumed.callback_handler.callbacks if isinstance(c, CurriculumCheckpoint))
    assert callback.restored_from is not None and callback.curriculum.windows["cart"].episodes == 4
