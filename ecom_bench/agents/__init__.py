"""Scripted agents (no Inspect): oracle, heuristic, and their shared plumbing.

A policy is a pure function of the conversation so far (and, for the oracle only,
the hidden goal), so one instance can serve many concurrent episodes and the same
conversation always yields the same next action.
"""

from ecom_bench.agents.base import AgentAction, EpisodeStatus, Message, Policy, ToolCallRequest, get_policy

__all__ = ["AgentAction", "EpisodeStatus", "Message", "Policy", "ToolCallRequest", "get_policy"]
