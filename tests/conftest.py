"""Shared fixtures: a small synthetic catalogue, an isolated index cache, no network."""

from __future__ import annotations

import os
import tempfile

import pytest

# Everything the suite loads must come from disk: fail loudly if anything tries a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# One index cache for the whole session, outside the user's home.
os.environ.setdefault("ECOM_BENCH_CACHE", tempfile.mkdtemp(prefix="ecom-bench-cache-"))

from ecom_bench.envs.context import CatalogSpec, EnvContext, load_context  # noqa: E402

#: Small enough to build in about a second, large enough for realistic search.
TEST_CATALOG_SIZE = 3000
TEST_SPEC = CatalogSpec(size=TEST_CATALOG_SIZE)


@pytest.fixture(scope="session")
def context() -> EnvContext:
    return load_context(TEST_SPEC)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", default=False, help="run the long property sweeps")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="long sweep: run with --long")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
