"""Shared task construction: dataset, solver, scorer and parameter validation.

Every environment's task and the collections are built by `build_task`, so all take the
same parameters and validate them the same way.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.agent import Agent
from inspect_ai.log import HeadlineMetric

from ecom_bench._version import __version__
from ecom_bench.catalog.catalog import progress
from ecom_bench.difficulty import Difficulty, validate_level
from ecom_bench.envs import get_env
from ecom_bench.envs.context import DEFAULT_CATALOG_SIZE, MIN_CATALOG_SIZE, CatalogSpec, load_context
from ecom_bench.episode import new_episode
from ecom_bench.scorers import reward_scorers
from ecom_bench.tasks import _prebuilt
from ecom_bench.tasks._agent import agent_conversation, check_agent
from ecom_bench.tasks._solver import customer_conversation
from ecom_bench.tasks._user import USER_SIMULATOR, validate_user

DEFAULT_SAMPLES = 100
#: No Inspect message limit: the episode's own caps end every sample (the customer's patience,
#: the per-turn tool budget and its refusals, and the step cap, `Episode.max_steps` generations).
#: A fixed count would bind first on long episodes (a journey at d = 12 runs 50 turns of up to 7
#: calls each, ~800 messages for an agent making one call a generation), and no fixed count bounds
#: the messages of a generation holding many tool calls, so none could be set that never binds.
MESSAGE_LIMIT: int | None = None
#: Bumped when a change to the tasks makes earlier logs incomparable (recorded as Inspect's task version).
TASK_VERSION = 1


def _int_param(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def _bool_param(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"{name} must be true or false, got {value!r}")


def reject_unknown_params(task_name: str, unknown: dict[str, Any], task_fn: Callable[..., Any]) -> None:
    """Fail on a parameter the task does not take (`-T difficuly=6`).

    Inspect only logs a warning for such a parameter and runs the task with its default
    (d = 0 here): a typo would silently change what is measured. The task functions take
    `**unknown` so that they see these parameters and can refuse them by name.
    """
    if not unknown:
        return

    valid = [n for n, p in inspect.signature(task_fn).parameters.items() if p.kind is not p.VAR_KEYWORD]
    problems = []
    for name in sorted(unknown):
        close = difflib.get_close_matches(name, valid, n=1)
        problems.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    raise ValueError(f"unknown parameter{'s' if len(problems) > 1 else ''} {', '.join(problems)} for task "
                     f"{task_name!r}; it takes: {', '.join(valid)}")


def sample_id(env: str, difficulty: int, seed: int, index: int) -> str:
    return f"{env}-d{difficulty}-s{seed}-{index:04d}"


def success_criterion(env_name: str) -> str:
    """The sample's `target`: what success needs, in general terms (the viewer's TARGET column).

    Only the env's published task and rule, never the hidden goal (the scorer's `total`
    metadata has that): nothing in it is news to the agent. The model never sees a target
    anyway: the solvers build its messages from the episode alone (tests/test_no_leak.py).
    """
    env = get_env(env_name)
    answer = f"the answer ({env.final_tool})" if env.final_tool else "every request's answer (its task's final tool)"
    return (f"Solved when {answer} passes the verifier's success rule against the hidden goal, with no hard fail "
            f"(the goal is in the total score's metadata). {env.summary}")


def build_samples(env_names: tuple[str, ...], difficulty: int, samples: int, seed: int, catalog: CatalogSpec,
                  embedder: str, strict: bool = True) -> list[Sample]:
    """Procedurally generated samples with stable ids; input = the customer's opening, target =
    what success needs (`success_criterion`).

    With several environments (a collection) sample i belongs to env i mod n, so the
    samples are spread evenly, and each env's episodes are the same as in its own task.
    Each episode is left for the solver (`_prebuilt`), so its world is generated once.
    """
    context = load_context(catalog, embedder)
    out = []
    with progress(samples, f"Generating {samples} {'/'.join(env_names)} episodes", unit="episode") as bar:
        for i in range(samples):
            env_name = env_names[i % len(env_names)]
            index = i // len(env_names)
            episode = new_episode(env_name, difficulty, seed, index, context=context, strict=strict)
            metadata = {"env": env_name, "difficulty": difficulty, "seed": seed, "index": index,
                        "episode_seed": episode.problem.seed}
            _prebuilt.leave(_prebuilt.key(metadata, catalog, embedder, strict), episode)
            out.append(Sample(id=sample_id(env_name, difficulty, seed, index), input=episode.opening,
                              target=success_criterion(env_name), metadata=metadata))
            bar.update()
    return out


def build_task(env_name: str, *, difficulty: Any = 0, samples: Any = DEFAULT_SAMPLES, seed: Any = 0,
             strict: Any = True, catalog: str = "synthetic", catalog_size: Any = DEFAULT_CATALOG_SIZE,
             catalog_seed: Any = 0, embedder: str = "wordllama", envs: tuple[str, ...] | None = None,
             agent: Agent | None = None, user: Any = USER_SIMULATOR) -> Task:
    """The Inspect task of one environment (or, with `envs`, of a collection called `env_name`).

    `agent`: an Inspect agent taking the agent's turns (`ecom_bench.tasks._agent`); None, the model
    under test drives the episode directly.
    """
    d = validate_level(difficulty)
    user = validate_user(user)
    if agent is not None:
        check_agent(agent)
    samples = _int_param("samples", samples, 1)
    seed = _int_param("seed", seed, 0)
    strict = _bool_param("strict", strict)
    size = _int_param("catalog_size", catalog_size, MIN_CATALOG_SIZE)
    spec = CatalogSpec(str(catalog), size, _int_param("catalog_seed", catalog_seed, 0)).validate()
    env_names: tuple[str, ...]
    if envs is None:
        env_names, title = (env_name,), get_env(env_name).title
    else:
        env_names, title = envs, f"Collection {env_name}: {', '.join(envs)}"
    dataset = MemoryDataset(build_samples(env_names, d, samples, seed, spec, embedder, strict),
                            name=f"ecom_bench-{env_name}-d{d}-s{seed}")
    return Task(
        dataset=dataset,
        solver=(customer_conversation(strict=strict, catalog=spec, embedder=embedder, user=user) if agent is None
                else agent_conversation(agent, strict=strict, catalog=spec, embedder=embedder, user=user)),
        scorer=reward_scorers(),
        message_limit=MESSAGE_LIMIT,
        # Leaderboards rank by the mean composite reward; success (pass^k, pass@k) is beside it.
        headline_metric=HeadlineMetric(scorer="total", metric="mean"),
        version=TASK_VERSION,
        metadata={"env": env_name, "envs": list(env_names), "title": title, "difficulty": d, "seed": seed,
                  "strict": strict, "catalog": spec.source, "catalog_size": spec.size, "catalog_seed": spec.seed,
                  "catalog_products": len(load_context(spec, embedder).catalog), "embedder": embedder,
                  "user": user,
                  "ecom_bench_version": __version__, "axes": Difficulty.from_level(d).to_dict(),
                  "env_axes": {name: get_env(name).axis_values(d) for name in env_names}},
    )
