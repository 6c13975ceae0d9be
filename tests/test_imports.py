"""Every public package imports on its own, first, in a fresh process (no import cycles).

`import ecom_bench.scorers` used to fail: the scorer read its store class from `tasks`,
whose package imports the task builder, which imports the scorers.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

MODULES = ("ecom_bench.scorers", "ecom_bench.tasks", "ecom_bench.providers", "ecom_bench.tools",
           "ecom_bench.runner", "ecom_bench.episode", "ecom_bench.conversation",
           "ecom_bench.agents", "ecom_bench.training", "ecom_bench.leaderboard", "ecom_bench.play")


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_first_in_a_fresh_process(module):
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
