"""The customer simulator a task runs (`-T user=...`), and the model roles it takes.

The template customer is scripted. A `user` model role (`--model-role user=...`) would be
built by Inspect and never called, and the log would read as a run with that model as the
customer: it is refused, when the task is built (the CLI) and when a sample starts (a
`Task` built before `eval(..., model_roles=...)`).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import model_roles

#: The customer simulator the tasks run by default (recorded in each log, so leaderboards keep other users apart).
USER_SIMULATOR = "template"
#: The customer simulators a task can run.
USER_SIMULATORS = (USER_SIMULATOR,)


class UserRoleError(ValueError):
    """A `user` model role given to a task whose customer uses no model."""


def refuse_user_role(user: str = USER_SIMULATOR) -> None:
    if "user" in model_roles():
        raise UserRoleError(f"the {user} customer uses no model: drop --model-role user=...")


def validate_user(user: Any) -> str:
    """The customer simulator `user`, checked, with the model roles it takes."""
    if user not in USER_SIMULATORS:
        raise ValueError(f"unknown user {user!r}; available: {', '.join(USER_SIMULATORS)}")
    refuse_user_role(user)
    return str(user)
