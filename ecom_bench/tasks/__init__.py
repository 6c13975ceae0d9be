"""Inspect tasks: one per registered environment, plus the collections C1-C8.

`inspect eval ecom_bench/<env>` runs a built-in environment; `env_task(name, ...)` builds the
`Task` of any registered one, and `inspect_task(name)` its `@task` function.
"""

from ecom_bench.tasks._agent import ecom_tools
from ecom_bench.tasks.collection import collection
from ecom_bench.tasks.environments import BUILTIN_TASKS, env_task, inspect_task

globals().update(BUILTIN_TASKS)

__all__ = ["collection", "ecom_tools", "env_task", "inspect_task", *BUILTIN_TASKS]
