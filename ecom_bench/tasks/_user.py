"""The customer simulator a task runs (`-T user=...`), and the model roles it takes.

`template`: the scripted customer, in the benchmark's own words. A `user` model role would be
built by Inspect and never called, and the log would read as a run with that model as the
customer: it is refused. `llm`: the same customer, its decisions worded by the `user` role's
model (`--model-role user=<provider/model>`) behind the guards of `users.llm`; without the role
it is refused. Both are checked when Inspect builds the task (the CLI: before any sample) and when
a sample starts (a `Task` built in Python before `eval(..., model_roles=...)`).

The customer's model is called like the agent's, so Inspect's generation options apply to it:
`--cache` answers a prompt seen before from Inspect's cache (the same seed and customer model then
repeat the customer's words), and its calls are in the log's model usage under their own name.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import FrameType
from typing import Any

from inspect_ai._eval.loader import resolve_tasks
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, get_model, model_roles

from ecom_bench.users.llm import ChatMessages, Generate, LLMPhraser

#: The customer simulator the tasks run by default (recorded in each log, so leaderboards keep other users apart).
USER_SIMULATOR = "template"
#: The customer worded by a model: the `user` role's.
LLM_USER = "llm"
#: The customer simulators a task can run.
USER_SIMULATORS = (USER_SIMULATOR, LLM_USER)
#: The providers of the scripted agent models, which read a live episode, and of the scripted customer models.
AGENT_MODELS, CUSTOMER_MODELS = "ecom/", "ecom-user/"
#: The model role that words the customer.
USER_ROLE = "user"


class UserRoleError(ValueError):
    """A `user` model role given to a customer that uses none, or missing for one that needs it."""


def _inspect_is_creating_the_task() -> bool:
    """Whether Inspect is creating the task for an eval (`inspect eval`, `eval("ecom_bench/cart")`): it
    has set that eval's model roles first. Anywhere else (a Python caller building a `Task` to pass to
    `eval`) the roles Inspect holds are whatever an earlier eval in the process left there."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code is resolve_tasks.__code__:
            return True
        frame = frame.f_back
    return False


def check_user_role(user: str = USER_SIMULATOR, *, building: bool = False) -> None:
    """The `user` role as `user` needs it: required for the llm customer, refused for the others.

    `building`: the task is being built, where the eval's roles are known only if Inspect builds it
    (the CLI: refused before any sample, one line and a non-zero exit). A task built in Python is
    checked when its samples start, against the roles of the eval that runs it."""
    if building and not _inspect_is_creating_the_task():
        return
    check_roles_for_user(user, model_roles())


def check_roles_for_user(user: Any, roles: Mapping[str, object]) -> None:
    """The model roles `roles` (role -> model or model name) as the customer `user` (`-T user=`) needs them."""
    given = USER_ROLE in roles
    if user == LLM_USER and not given:
        raise UserRoleError("-T user=llm needs the customer's model: --model-role user=<provider/model>")
    if user != LLM_USER and given:
        raise UserRoleError(f"the {user} customer uses no model: drop --model-role user=...")
    model = str(roles.get(USER_ROLE, ""))
    if model.startswith(AGENT_MODELS):
        raise UserRoleError(f"--model-role user={model}: the {AGENT_MODELS}* models play the agent, not the "
                            f"customer; the scripted customer models are {CUSTOMER_MODELS}<name> (e.g. "
                            f"{CUSTOMER_MODELS}faithful)")


def validate_user(user: Any) -> str:
    """The customer simulator `user`, checked, with the model roles it takes."""
    if user not in USER_SIMULATORS:
        given = "''" if user is None else repr(user)  # `-T user=` arrives as None
        raise ValueError(f"unknown user {given}; available: {', '.join(USER_SIMULATORS)}")
    check_user_role(user, building=True)
    return str(user)


def _chat(messages: ChatMessages) -> list[ChatMessage]:
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    return [kinds[m["role"]](content=m["content"]) for m in messages]


def inspect_customer(role: str = USER_ROLE) -> Generate:
    """The model of `role` as a customer model for `LLMPhraser`: chat messages in, its text out."""
    model = get_model(role=role, required=True)

    async def generate(messages: ChatMessages) -> str:
        return (await model.generate(_chat(messages))).completion

    return generate


def customer_phraser(user: str) -> LLMPhraser | None:
    """Who words a sample's customer: None for the templates; for `llm`, the `user` role's model
    behind the guards (one phraser per sample, so its counts are the sample's)."""
    return LLMPhraser(inspect_customer()) if user == LLM_USER else None
