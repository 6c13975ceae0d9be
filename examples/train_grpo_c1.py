"""GRPO (DAPO loss) on C1 (cart), the published run: Qwen3-8B, G = 8, lr 1e-5, 300 steps.

    pip install 'ecom-bench[train]' vllm
    accelerate launch --num_processes 8 examples/train_grpo_c1.py            # fixed d = 6
    accelerate launch --num_processes 8 examples/train_grpo_c1.py --adaptive # the ecomrlve curriculum

Each rollout is one episode: `reset` builds it from the dataset row, every tool call is one step
of the core loop, the customer is reached through `ask_user`, and the env's `get_reward` (r_total)
is the reward; `success` is logged with weight 0. With --adaptive each process keeps its own
curriculum (TRL builds the environments per process).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ecom_bench.training.curriculum import AdaptiveCurriculum
from ecom_bench.training.trl import build_dataset, environment_factories, success

if TYPE_CHECKING:
    from trl import GRPOConfig

MODEL = "Qwen/Qwen3-8B"


def grpo_config(output_dir: str = "runs/grpo-c1", **overrides: object) -> "GRPOConfig":
    """The run's settings (DAPO: token-level loss, clip-higher, no KL, overlong completions masked)."""
    from trl import GRPOConfig

    settings: dict[str, object] = dict(
        output_dir=output_dir, max_steps=300, learning_rate=1e-5, lr_scheduler_type="constant_with_warmup",
        warmup_steps=10, num_generations=8, per_device_train_batch_size=8, gradient_accumulation_steps=4,
        loss_type="dapo", epsilon=0.2, epsilon_high=0.28, beta=0.0, mask_truncated_completions=True,
        max_completion_length=8192, max_tool_calling_iterations=64, temperature=1.0,
        reward_weights=[0.0],  # `success` is logged only; the reward is the env's get_reward (r_total)
        bf16=True, gradient_checkpointing=True, use_vllm=True, vllm_mode="colocate",
        chat_template_kwargs={"enable_thinking": False}, logging_steps=1, save_steps=50, report_to="none",
    )
    settings.update(overrides)
    return GRPOConfig(**settings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--difficulty", type=int, default=6)
    parser.add_argument("--adaptive", action="store_true", help="draw d from the ecomrlve curriculum")
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--output-dir", default="runs/grpo-c1")
    args = parser.parse_args()

    from trl import GRPOTrainer

    curriculum = AdaptiveCurriculum("ecomrlve") if args.adaptive else None
    trainer = GRPOTrainer(
        model=args.model,
        reward_funcs=[success],
        args=grpo_config(args.output_dir),
        train_dataset=build_dataset("C1", "adaptive" if args.adaptive else args.difficulty, rows=args.rows),
        environment_factory=environment_factories("C1", curriculum=curriculum),
    )
    trainer.train()


if __name__ == "__main__":
    main()
