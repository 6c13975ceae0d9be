"""ecom-bench: verifiable, adaptive e-commerce customer-service environments.

The public API, one name per concept (docs/extending.md shows them at work):

* the environment contract: `Environment`, `SubTask`, `Verdict`, `EnvAxis`, `JourneyRole`,
  `JourneyEnv`, `budget_turns`, `register_env`, `unregister_env`, `get_env`, `env_names`,
  `check_env`, `Difficulty`;
* the world and tools: `World`, `tool_method`, `ToolError`, `ToolBase` and the built-in tool
  groups (`CatalogTools`, `CartTools`, `OrderTools`, `PolicyTools`, `RecommendTools`,
  `BundleTools`);
* the shared catalogue: `load_context`, `CatalogSpec`;
* the customer: `Customer`, `UserSimulator`, `UserMessage`, `UserAct`; the seam a model
  customer words through: `CustomerDecision`, `Phraser`, `PhrasingContext`, `PhrasingError`,
  `TemplatePhraser`;
* the agent protocol: `Policy`, `AgentAction`, `ToolCallRequest`, `Message`, `EpisodeStatus`,
  `get_policy`;
* the episode: `Episode`, `new_episode`, `run_policy`, `EpisodeResult`, `EndReason`;
* the fronts: `env_task` (an Inspect `Task`) and `EcomEnv` (gymnasium).

The core imports no Inspect: names are loaded when first used, so `import ecom_bench` is cheap
and `env_task` alone pulls in Inspect.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ecom_bench._version import __version__

#: Public name → the module that defines it.
_EXPORTS: dict[str, str] = {
    "Environment": "ecom_bench.envs.base",
    "SubTask": "ecom_bench.envs.base",
    "Verdict": "ecom_bench.envs.base",
    "EnvAxis": "ecom_bench.envs.base",
    "JourneyRole": "ecom_bench.envs.base",
    "JourneyEnv": "ecom_bench.envs.journey",
    "budget_turns": "ecom_bench.envs.base",
    "check_env": "ecom_bench.runner",
    "load_context": "ecom_bench.envs.context",
    "CatalogSpec": "ecom_bench.envs.context",
    "ToolBase": "ecom_bench.world._tooling",
    "CatalogTools": "ecom_bench.world.tools.catalog",
    "CartTools": "ecom_bench.world.tools.cart",
    "OrderTools": "ecom_bench.domains.orders.tools",
    "PolicyTools": "ecom_bench.domains.policy.tools",
    "RecommendTools": "ecom_bench.world.tools.recommend",
    "BundleTools": "ecom_bench.world.tools.bundle",
    "register_env": "ecom_bench.envs",
    "unregister_env": "ecom_bench.envs",
    "get_env": "ecom_bench.envs",
    "env_names": "ecom_bench.envs",
    "Difficulty": "ecom_bench.difficulty",
    "World": "ecom_bench.world.state",
    "tool_method": "ecom_bench.world._tooling",
    "ToolError": "ecom_bench.world._tooling",
    "Customer": "ecom_bench.users.customer",
    "UserSimulator": "ecom_bench.users",
    "UserMessage": "ecom_bench.users",
    "UserAct": "ecom_bench.users",
    "CustomerDecision": "ecom_bench.users.phrasing",
    "Phraser": "ecom_bench.users.phrasing",
    "PhrasingContext": "ecom_bench.users.phrasing",
    "PhrasingError": "ecom_bench.users.phrasing",
    "TemplatePhraser": "ecom_bench.users.phrasing",
    "Policy": "ecom_bench.conversation",
    "get_policy": "ecom_bench.agents.base",
    "AgentAction": "ecom_bench.conversation",
    "ToolCallRequest": "ecom_bench.conversation",
    "Message": "ecom_bench.conversation",
    "EpisodeStatus": "ecom_bench.conversation",
    "Episode": "ecom_bench.episode",
    "EpisodeResult": "ecom_bench.episode",
    "EndReason": "ecom_bench.episode",
    "new_episode": "ecom_bench.episode",
    "run_policy": "ecom_bench.runner",
    "env_task": "ecom_bench.tasks.environments",
    "EcomEnv": "ecom_bench.training.env",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ecom_bench' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:
    # `name as name`: a re-export, so type checkers see the lazily loaded names as public.
    from ecom_bench.agents.base import get_policy as get_policy
    from ecom_bench.conversation import (
        AgentAction as AgentAction, EpisodeStatus as EpisodeStatus, Message as Message, Policy as Policy,
        ToolCallRequest as ToolCallRequest,
    )
    from ecom_bench.difficulty import Difficulty as Difficulty
    from ecom_bench.envs import (
        env_names as env_names, get_env as get_env, register_env as register_env,
        unregister_env as unregister_env,
    )
    from ecom_bench.envs.base import (
        EnvAxis as EnvAxis, Environment as Environment, JourneyRole as JourneyRole, SubTask as SubTask,
        Verdict as Verdict, budget_turns as budget_turns,
    )
    from ecom_bench.envs.context import CatalogSpec as CatalogSpec, load_context as load_context
    from ecom_bench.envs.journey import JourneyEnv as JourneyEnv
    from ecom_bench.episode import (
        EndReason as EndReason, Episode as Episode, EpisodeResult as EpisodeResult,
        new_episode as new_episode,
    )
    from ecom_bench.runner import check_env as check_env, run_policy as run_policy
    from ecom_bench.tasks.environments import env_task as env_task
    from ecom_bench.training.env import EcomEnv as EcomEnv
    from ecom_bench.users import (
        UserAct as UserAct, UserMessage as UserMessage, UserSimulator as UserSimulator,
    )
    from ecom_bench.users.customer import Customer as Customer
    from ecom_bench.users.phrasing import (
        CustomerDecision as CustomerDecision, Phraser as Phraser, PhrasingContext as PhrasingContext,
        PhrasingError as PhrasingError,
        TemplatePhraser as TemplatePhraser,
    )
    from ecom_bench.world._tooling import (
        ToolBase as ToolBase, ToolError as ToolError, tool_method as tool_method,
    )
    from ecom_bench.world.tools.bundle import BundleTools as BundleTools
    from ecom_bench.world.tools.cart import CartTools as CartTools
    from ecom_bench.world.tools.catalog import CatalogTools as CatalogTools
    from ecom_bench.domains.orders.tools import OrderTools as OrderTools
    from ecom_bench.domains.policy.tools import PolicyTools as PolicyTools
    from ecom_bench.world.tools.recommend import RecommendTools as RecommendTools
    from ecom_bench.world.state import World as World
