"""The scripted-policy registry: `get_policy(env, name)`, what every front plays a scripted agent by.

The policy protocol and the conversation types it speaks are `ecom_bench.conversation`: the
envs' own policies are written against them, below this registry, which reads the envs.
"""

from __future__ import annotations

from ecom_bench.agents.adversarial import ADVERSARIAL
from ecom_bench.conversation import Policy
from ecom_bench.envs import get_env


def get_policy(env: str, name: str) -> Policy:
    """The scripted policy `name` ('oracle', 'heuristic', ...) of environment `env`.

    The env's own policies come first; the generic adversarial ones
    (`ecom_bench.agents.adversarial`: recommend_all, all_variants, answer_now,
    invent_ids) serve every env.
    """
    policies = get_env(env).policies
    if name in policies:
        return policies[name]()
    if name in ADVERSARIAL:
        return ADVERSARIAL[name](env)
    raise ValueError(
        f"no scripted policy {name!r} for env {env!r}; known policies: "
        f"{', '.join(sorted(policies) + sorted(ADVERSARIAL))}"
    )


__all__ = ["get_policy"]
