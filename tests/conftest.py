"""Shared fixtures: a small synthetic catalogue, an isolated index cache, no network."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Everything the suite loads must come from disk: fail loudly if anything tries a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# One index cache for the whole session, outside the user's home, removed when the session
# ends (a given ECOM_BENCH_CACHE is the caller's: kept).
if "ECOM_BENCH_CACHE" not in os.environ:
    os.environ["ECOM_BENCH_CACHE"] = tempfile.mkdtemp(prefix="ecom-bench-cache-")
    atexit.register(shutil.rmtree, os.environ["ECOM_BENCH_CACHE"], ignore_errors=True)

from ecom_bench.conversation import AgentAction, Message, ToolCallRequest
from ecom_bench.envs.context import CatalogSpec, EnvContext, load_context  # noqa: E402
from ecom_bench.episode import Episode
from ecom_bench.users import UserMessage

#: Small enough to build in about a second, large enough for realistic search.
TEST_CATALOG_SIZE = 3000
TEST_SPEC = CatalogSpec(size=TEST_CATALOG_SIZE)


#: How many times more examples / episodes the sweeps draw under `--long`.
LONG_FACTOR = 10
_long_run = [False]

# CI: a fixed set of examples (derandomized, no example database), so a run is repeatable.
# --long: ten times as many, freshly drawn each run (new seeds, new fuzz inputs).
_COMMON = {"deadline": None, "database": None,
           "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                     HealthCheck.data_too_large]}
settings.register_profile("ci", derandomize=True, **_COMMON)
settings.register_profile("long", derandomize=False, **_COMMON)
settings.load_profile("ci")


def examples(n: int) -> int:
    """`n` in CI, LONG_FACTOR·n under --long (hypothesis max_examples, adversarial episodes)."""
    return n * LONG_FACTOR if _long_run[0] else n


def long_run() -> bool:
    """Whether this is a `--long` run (sweep more difficulties)."""
    return _long_run[0]


def pytest_configure(config: pytest.Config) -> None:
    _long_run[0] = bool(config.getoption("--long"))
    settings.load_profile("long" if _long_run[0] else "ci")


@pytest.fixture(scope="session")
def context() -> EnvContext:
    return load_context(TEST_SPEC)


def benchmark_module(name: str):  # noqa: ANN201
    """A script of `benchmarks/` imported as a module (they are scripts, not a package)."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", default=False, help="run the long sweeps: slow tests, 10x the property/fuzz examples and adversarial episodes")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="long sweep: run with --long")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


# ----------------------------------------------------------- plain-English questions
#: Agent questions by intent (tests/data): `dev` for development, `heldout` for acceptance only.
DATA = Path(__file__).parent / "data"


@cache
def _question_set(name: str) -> dict[str, list[str]]:
    return json.loads((DATA / f"questions_{name}.json").read_text())


def questions(*intents: str, heldout: bool = False) -> list[str]:
    """The plain-English questions of these intents (dev set unless `heldout`)."""
    data = _question_set("heldout" if heldout else "dev")
    return [q for intent in intents for q in data[intent]]


def withheld_slots(episode) -> list[str]:  # noqa: ANN001
    """The slots the episode's customer has not told yet."""
    return [s for s, told in episode.problem.user.disclosure().items() if not told]


# ------------------------------------------------------------ driving an episode by hand
def call(episode: Episode, name: str, arguments: Any) -> Message:
    """One tool call as one agent action through `Episode.step` (counted as a step like any
    other); returns its tool-result `Message` (`.text`, `.error`, `.invalid`, `.json()`).
    `arguments` goes to the episode as given (fuzz tests pass non-dicts). Raises `EpisodeOver`
    once the episode has ended."""
    request = ToolCallRequest(name, arguments, id=f"call-{episode.steps}")
    observation, *_ = episode.step(AgentAction(tool_calls=(request,)))
    return observation[0]


def say(episode: Episode, text: str) -> UserMessage:
    """A message to the customer as one agent action through `Episode.step` (it ends the turn);
    returns the customer's reply, a `UserMessage` (`.text`, `.act`, `.revealed`, ...). Raises
    `EpisodeOver` once the episode has ended."""
    observation, *_ = episode.step(AgentAction(text))
    assert [m.role for m in observation] == ["user"], observation
    return episode.user_messages[-1]


# ----------------------------------------------------------------- the training env
def play(env, agent: str = "oracle", *, raw: bool = True) -> tuple[float, dict]:
    """Play one episode of a reset `EcomEnv` to its end with a scripted agent (as Hermes text when
    `raw`); returns (sum of rewards, last info)."""
    from ecom_bench.training import to_hermes

    total, done, info = 0.0, False, {}
    while not done:
        action = env.scripted_action(agent)
        _, reward, terminated, truncated, info = env.step(to_hermes(action) if raw else action)
        total += reward
        done = terminated or truncated
    return total, info


def play_many(env, agent: str, episodes: int, seed: int = 0) -> None:
    """Reset and play `episodes` episodes in a row (the env's curriculum sees each one)."""
    env.reset(seed=seed)
    for _ in range(episodes):
        play(env, agent, raw=False)
        env.reset()


def score_parts(sample) -> dict[str, float]:  # noqa: ANN001
    """The five reward parts of one Inspect sample (one scorer each)."""
    from ecom_bench.scorers import SCORE_PARTS

    return {part: sample.scores[part].value for part in SCORE_PARTS}
