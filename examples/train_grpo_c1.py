"""GRPO (DAPO loss) on C1 (cart), the published run: Qwen3-8B, G = 8, lr 1e-5, 300 steps.

    pip install 'ecom-bench[train]' vllm
    accelerate launch --num_processes 8 examples/train_grpo_c1.py              # fixed d = 6
    ecom-bench serve --envs C1 -d adaptive --curriculum-state runs/curriculum.json &
    accelerate launch --num_processes 8 examples/train_grpo_c1.py --curriculum-url http://127.0.0.1:8000
    accelerate launch --num_processes 1 examples/train_grpo_c1.py --adaptive   # one process, its own curriculum

Each rollout is one episode, prompted as the Inspect task prompts it (the env's system prompt
as the system message, the customer's opening as the user message); every tool call is one
step of the core loop, the customer is reached through `ask_user`. The one reward is `r_total`
(weight 1); success, the reward parts, end reasons and turns are logged under `episode/`.
With a curriculum, `CurriculumCheckpoint` saves it into every checkpoint and restores it on
--resume. Several processes share one curriculum through the server (--curriculum-url);
--adaptive gives each process its own, so use it with one process only.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ecom_bench.training.curriculum import AdaptiveCurriculum
from ecom_bench.training.trl import CurriculumCheckpoint, build_dataset, environment_factories, r_total

if TYPE_CHECKING:
    from trl import GRPOConfig, GRPOTrainer

MODEL = "Qwen/Qwen3-8B"


def grpo_config(output_dir: str = "runs/grpo-c1", **overrides: object) -> "GRPOConfig":
    """The run's settings (DAPO: token-level loss, clip-higher, no KL, overlong completions masked)."""
    from trl import GRPOConfig

    settings: dict[str, object] = dict(
        output_dir=output_dir, max_steps=300, learning_rate=1e-5, lr_scheduler_type="constant_with_warmup",
        warmup_steps=10, num_generations=8, per_device_train_batch_size=8, gradient_accumulation_steps=4,
        loss_type="dapo", epsilon=0.2, epsilon_high=0.28, beta=0.0, mask_truncated_completions=True,
        max_completion_length=8192, max_tool_calling_iterations=64, temperature=1.0,
        reward_weights=[1.0],  # r_total, the only reward
        bf16=True, gradient_checkpointing=True, use_vllm=True, vllm_mode="colocate",
        chat_template_kwargs={"enable_thinking": False}, logging_steps=1, save_steps=50, report_to="none",
    )
    settings.update(overrides)
    return GRPOConfig(**settings)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--difficulty", type=int, default=6)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--adaptive", action="store_true", help="draw d from this process's own ecomrlve curriculum")
    group.add_argument("--curriculum-url", default=None,
                       help="draw d from the curriculum of the `ecom-bench serve -d adaptive` server at this URL")
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--output-dir", default="runs/grpo-c1")
    parser.add_argument("--resume", action="store_true", help="resume from the last checkpoint in --output-dir")
    return parser.parse_args(argv)


def build_trainer(args: argparse.Namespace, *, model: Any = None, processing_class: Any = None,
                  **config: object) -> "GRPOTrainer":
    """The trainer of `args` (`model`, `processing_class` and `config` override the run's)."""
    from trl import GRPOTrainer

    curriculum: Any = None
    if args.curriculum_url:
        from ecom_bench.training.client import CurriculumClient

        curriculum = CurriculumClient(args.curriculum_url)
    elif args.adaptive:
        curriculum = AdaptiveCurriculum("ecomrlve")
    difficulty = "adaptive" if curriculum is not None else args.difficulty
    return GRPOTrainer(
        model=model if model is not None else args.model,
        processing_class=processing_class,
        reward_funcs=[r_total],
        args=grpo_config(args.output_dir, **config),
        train_dataset=build_dataset("C1", difficulty, rows=args.rows, curriculum=curriculum),
        environment_factory=environment_factories("C1", curriculum=curriculum),
        callbacks=[CurriculumCheckpoint(curriculum)] if curriculum is not None else None,
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    build_trainer(args).train(resume_from_checkpoint=True if args.resume else None)


if __name__ == "__main__":
    main()
