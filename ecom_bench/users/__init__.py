"""Simulated users: the deterministic template simulator and its building blocks."""

from ecom_bench.users.base import UserAct, UserMessage, UserSimulator, render
from ecom_bench.users.noise import add_noise

__all__ = ["UserAct", "UserMessage", "UserSimulator", "add_noise", "render"]
