"""Training front: the environments for RL, over the same core loop as the Inspect tasks.

* `EcomEnv`: a gymnasium env for text agents (raw model text or structured tool calls);
  importing this package registers ``ecom_bench/<env>-v0`` and ``ecom_bench/C1..C8-v0``.
* `ChatPrompts`: each next prompt rendered as an exact extension of the last (token-faithful
  multi-turn rollouts; needs `transformers`).
* `AdaptiveCurriculum`, `CurriculumConfig`, `TaskSampler`: the per-env difficulty window.
* `ecom_bench.training.trl`: TRL's environments (extra `train`); `ecom_bench.training.server`: OpenEnv.
* `ecom_bench.training.rollouts`: parallel rollouts on Ray actors (extra `ray`).
* `ecom_bench.training.async_rollouts`: many episodes in flight against an OpenAI-compatible
  generation server (vLLM), recording completions, logprobs and token ids;
  `ecom_bench.training.trl_rollout`: TRL's `rollout_func` over them.
"""

from ecom_bench.training.actions import Action, Completion, parse_action, parse_text, read_action, to_hermes
from ecom_bench.training.curriculum import PRESETS, AdaptiveCurriculum, CurriculumConfig, TaskSampler
from ecom_bench.training.env import REWARD_RANGE, EcomEnv
from ecom_bench.training.prompts import ChatPrompts

__all__ = ["PRESETS", "REWARD_RANGE", "Action", "AdaptiveCurriculum", "ChatPrompts", "Completion", "CurriculumConfig",
           "EcomEnv", "TaskSampler", "parse_action", "parse_text", "read_action", "to_hermes"]
