"""Simulated users: the deterministic template simulator and its building blocks."""

from ecom_bench.users.customer import Customer
from ecom_bench.users.messages import Disclosure, UserAct, UserMessage, UserSimulator, render
from ecom_bench.users.noise import add_noise
from ecom_bench.users.understanding import is_request, says, topics_asked

__all__ = ["Customer", "Disclosure", "UserAct", "UserMessage", "UserSimulator", "add_noise", "is_request",
           "render", "says", "topics_asked"]
