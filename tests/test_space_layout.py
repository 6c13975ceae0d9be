"""OpenEnv's Space layout: `openenv validate` passes on the repository, `server/app.py` serves the
environments (checked live with `openenv validate --url`), and uv.lock resolves at the tested pins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
OPENENV = Path(sys.executable).with_name("openenv")


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==")
            pins[name.strip().lower().replace("_", "-")] = version.strip()
    return pins


def test_openenv_validate_passes_on_the_repository():
    if not OPENENV.exists():
        pytest.skip("the openenv CLI (openenv-core) is not installed")
    run = subprocess.run([str(OPENENV), "validate", str(ROOT), "--json", "--verbose"], capture_output=True,
                         text=True, timeout=120)
    report = json.loads(run.stdout)
    assert run.returncode == 0 and report["passed"], report["issues"]
    assert all(report["deployment_modes"][mode] for mode in ("openenv_serve", "uv_run", "python_module"))


def test_uv_lock_is_at_the_tested_versions():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = {name.lower().replace("_", "-"): version for name, version in
                (c.split("==") for c in pyproject["tool"]["uv"]["constraint-dependencies"])}
    assert declared == _pins()  # the constraints uv resolves with are constraints.txt's
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    locked = {p["name"]: p.get("version") for p in lock["package"]}
    assert locked["ecom-bench"] and locked["openenv-core"]
    assert {n: v for n, v in _pins().items() if n in locked} == {n: locked[n] for n in _pins() if n in locked}
    assert pyproject["project"]["scripts"]["server"] == "ecom_bench.training.space:main"


def test_space_variables_become_the_serve_command_line():
    from ecom_bench.training.space import command_line

    assert command_line({}, []) == ["serve", "--host", "0.0.0.0", "--port", "8000", "--envs", "C8",
                                    "--difficulty", "6"]
    args = command_line({"ECOM_BENCH_SERVE_DIFFICULTY": "adaptive", "ECOM_BENCH_CATALOG_SIZE": "3000",
                         "PORT": "7860"}, ["--envs", "C4"])
    assert args[-2:] == ["--envs", "C4"] and "adaptive" in args and args[args.index("--port") + 1] == "7860"
    assert args[args.index("--catalog-size") + 1] == "3000"


def _server(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "server.app"], cwd=ROOT, env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_bad_space_variable_is_an_error_line_and_exit_2():
    proc = _server({"ECOM_BENCH_SERVE_DIFFICULTY": "hard", "PYTHONPATH": str(ROOT)})
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "Traceback" not in err  # argparse's usage, then the one error line
    assert err.strip().splitlines()[-1] == ("ecom-bench serve: error: argument -d/--difficulty: difficulty must be "
                                            "a non-negative integer, got 'hard'")


@pytest.mark.slow
def test_server_app_serves_and_passes_openenv_runtime_validation():
    pytest.importorskip("openenv.core", reason="the server needs openenv-core")
    from openenv.cli._validation import validate_running_environment

    from ecom_bench.training.server import free_port

    port = free_port()
    proc = _server({"PORT": str(port), "HOST": "127.0.0.1", "ECOM_BENCH_CATALOG_SIZE": "3000",
                    "ECOM_BENCH_SERVE_ENVS": "cart", "PYTHONPATH": str(ROOT)})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"server/app.py did not come up: {proc.communicate()[1][-2000:]}")
                time.sleep(0.5)
        report = validate_running_environment(url, timeout_s=30)
        assert report["passed"], [c for c in report["criteria"] if not c["passed"]]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
