"""Scripted agents (no Inspect): the policy registry and the adversarial strategies.

A policy is a pure function of the conversation so far (and, for the oracle only,
the hidden goal), so one instance can serve many concurrent episodes and the same
conversation always yields the same next action. The protocol and the conversation
types it speaks (`Policy`, `Message`, `AgentAction`, ...) live in `ecom_bench.conversation`.
"""

from ecom_bench.agents.base import get_policy

__all__ = ["get_policy"]
