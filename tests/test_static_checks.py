"""The linter and the type checker at zero, run by the suite (configured in pyproject.toml).

ruff checks the whole repository (the package, tests, benchmarks and examples); mypy checks the
`ecom_bench` package. Both run from the installed dev extra with this interpreter, so the suite
checks the tree with the versions constraints.txt pins.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_ruff_finds_nothing():
    done = _run("ruff", "check", "--no-fix", "--output-format", "concise", ".")
    assert done.returncode == 0, f"ruff check:\n{done.stdout}{done.stderr}"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the type check targets Python 3.11, as its stubs do")
def test_mypy_finds_nothing():
    # the configuration's `files` (the package) and its per-module settings, from pyproject.toml
    done = _run("mypy", "--no-pretty")
    assert done.returncode == 0, f"mypy:\n{done.stdout}{done.stderr}"
