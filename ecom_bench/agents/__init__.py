"""Scripted agents (no Inspect): the policy registry and the adversarial strategies.

A policy is a pure function of the conversation so far (and, for the oracle only,
the hidden goal), so one instance can serve many concurrent episodes and the same
conversation always yields the same next action. The protocol and the conversation
types are `ecom_bench.conversation`'s, re-exported here with the registry.
"""

from ecom_bench.agents.base import get_policy
from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, Policy, ToolCallRequest

__all__ = ["AgentAction", "EpisodeStatus", "Message", "Policy", "ToolCallRequest", "get_policy"]
