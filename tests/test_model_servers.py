"""A model behind an OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama), through Inspect.

docs/evaluation.md's recipe (`--model openai-api/<name>/<model>` with `<NAME>_BASE_URL` and
`<NAME>_API_KEY`) is run against a fake server whose models are our scripted agents
(`fake_openai_server.py`), through Inspect's real `openai-api` provider and the real `openai`
SDK: every env's tools must be accepted, every tool result and customer reply must cross the
wire unchanged, and the scores must be those of the in-process scripted provider
(`ecom/<policy>`). An unreachable server must fail fast with the retry options docs/evaluation.md gives.
"""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import openai
import pytest
from conftest import TEST_CATALOG_SIZE
from fake_openai_server import FakeOpenAIServer, Served, WireError, as_inspect_models, check_tools, running, to_messages
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from ecom_bench import tasks
from ecom_bench.envs import COLLECTIONS, env_names

EVALUATION_DOC = Path(__file__).resolve().parent.parent / "docs" / "evaluation.md"
#: Low difficulty, two samples per env: the wire, not the envs, is under test here.
DIFFICULTY, SAMPLES = 2, 2
#: The heuristic over C8 at a harder level (it asks, is corrected, errs): one sample per env.
HEURISTIC_DIFFICULTY = 6


@pytest.fixture(scope="module")
def server(context) -> FakeOpenAIServer:
    served = [Served(env, DIFFICULTY, SAMPLES) for env in env_names()]
    served += [Served(env, HEURISTIC_DIFFICULTY, 1) for env in COLLECTIONS["C8"]]
    with running(served, context) as fake:
        yield fake


@pytest.fixture
def fake(server, monkeypatch) -> FakeOpenAIServer:
    return as_inspect_models(server, monkeypatch)


def run(task, model: str, log_dir: Path, **task_args):
    [log] = inspect_eval(task(catalog_size=TEST_CATALOG_SIZE, **task_args), model=model, log_dir=str(log_dir),
                         display="none")
    assert log.status == "success", log.error
    return log


def per_sample(log) -> dict[str, tuple[float, float, float]]:
    return {s.id: (s.scores["task"].value, s.scores["success"].value, s.scores["total"].value) for s in log.samples}


@pytest.mark.parametrize("env", env_names())
def test_oracle_through_an_openai_compatible_server_scores_as_the_scripted_provider(fake, tmp_path, env):
    task = getattr(tasks, env)
    before = fake.requests
    served = run(task, "openai-api/fake/oracle", tmp_path, difficulty=DIFFICULTY, samples=SAMPLES)
    assert fake.problems == []
    assert fake.requests - before >= SAMPLES  # every generation went over HTTP
    scripted = run(task, "ecom/oracle", tmp_path, difficulty=DIFFICULTY, samples=SAMPLES)
    assert per_sample(served) == per_sample(scripted)
    assert all(success == 1.0 for _, success, _ in per_sample(served).values())


@pytest.mark.slow
def test_heuristic_through_the_server_scores_as_the_scripted_provider(fake, tmp_path):
    """The agent that reads only what a model reads (tool errors, the customer's replies)
    plays the same episodes over the wire as in process."""
    args = {"envs": "C8", "difficulty": HEURISTIC_DIFFICULTY, "samples": len(COLLECTIONS["C8"])}
    served = run(tasks.collection, "openai-api/fake/heuristic", tmp_path, **args)
    assert fake.problems == []
    assert per_sample(served) == per_sample(run(tasks.collection, "ecom/heuristic", tmp_path, **args))


def test_the_server_lists_the_scripted_agents_as_models(fake):
    client = openai.OpenAI(base_url=fake.base_url, api_key="x", max_retries=0)
    assert {"oracle", "heuristic", "random"} <= {m.id for m in client.models.list()}


def test_malformed_tool_schemas_are_refused(context):
    from ecom_bench.episode import new_episode

    episode = new_episode("cart", 0, context=context)
    good = [spec.openai_schema() for spec in episode.tool_specs()]
    check_tools(good, episode)
    first = good[0]["function"]
    query = first["parameters"]["properties"]["query"]
    broken = {
        "bad function name": {**first, "name": "catalog search"},
        "parameters must be an object schema": {**first, "parameters": {"type": "string"}},
        "not a valid JSON schema": {**first, "parameters": {**first["parameters"], "required": "query"}},
        "did not round-trip": {**first, "parameters": {**first["parameters"], "properties": {
            **first["parameters"]["properties"], "query": {**query, "type": "integer"}}}},
        "a function definition has only": {**first, "parameter": {}},
    }
    for problem, function in broken.items():
        with pytest.raises(WireError, match=problem):
            check_tools([{"type": "function", "function": function}, *good[1:]], episode)


def test_a_conversation_that_is_not_the_episode_is_refused(fake, context):
    """The server's mirror catches a tool result that did not cross the wire unchanged."""
    from ecom_bench.conversation import AgentAction
    from ecom_bench.episode import new_episode

    episode = new_episode("cart", DIFFICULTY, 0, 0, context=context)
    tools = [spec.openai_schema() for spec in episode.tool_specs()]
    wire = [{"role": "system", "content": episode.system_prompt()}, {"role": "user", "content": episode.opening}]
    reply = fake.answer({"model": "oracle", "messages": wire, "tools": tools})["choices"][0]["message"]
    [action] = to_messages([reply])
    observation, *_ = episode.step(AgentAction(action.text, action.tool_calls))
    results = [{"role": o.role, "content": o.text, "tool_call_id": o.tool_call_id} for o in observation]
    fake.answer({"model": "oracle", "messages": [*wire, reply, *results], "tools": tools})  # the true one
    tampered = [{**results[0], "content": "{}"}, *results[1:]]
    with pytest.raises(WireError, match="not the episode's"):
        fake.answer({"model": "oracle", "messages": [*wire, reply, *tampered], "tools": tools})


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_server_fails_fast_with_the_documented_options(monkeypatch, tmp_path):
    """Without limits Inspect retries a refused connection for minutes; with docs/evaluation.md's
    `--max-retries`/`--timeout` the sample errors within seconds, naming the connection."""
    monkeypatch.setenv("FAKE_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("FAKE_API_KEY", "x")
    task = tasks.cart(difficulty=0, samples=1, catalog_size=TEST_CATALOG_SIZE)
    start = time.perf_counter()
    [log] = inspect_eval(task, model="openai-api/fake/oracle", log_dir=str(tmp_path), display="none",
                         max_retries=0, timeout=30)
    assert time.perf_counter() - start < 60  # the eval's own start and end included, on a busy machine
    assert log.status == "error"
    [sample] = log.samples
    assert sample.total_time < 15  # ~1-4 s: the one request and the openai SDK's own two quick retries
    assert "APIConnectionError" in log.error.message and "Connection error" in log.error.traceback


def _documented_command() -> list[str]:
    """docs/evaluation.md's vLLM command line (the recipe every local server shares)."""
    [line] = [line for line in EVALUATION_DOC.read_text().splitlines()
              if line.startswith("inspect eval ecom_bench/") and "openai-api/vllm/" in line]
    return shlex.split(line.split("#")[0])


def test_the_documented_recipe_runs_as_written(context, tmp_path, monkeypatch):
    """`inspect eval ... --model openai-api/<name>/<model>` with `<NAME>_BASE_URL` and
    `<NAME>_API_KEY`, as docs/evaluation.md gives it for vLLM, against the fake server: exit 0, scored."""
    command = _documented_command()
    env = command[2].removeprefix("ecom_bench/")
    difficulty = int(re.search(r"difficulty=(\d+)", " ".join(command)).group(1))
    model_at = command.index("--model") + 1
    assert command[model_at].startswith("openai-api/vllm/")
    command[model_at] = "openai-api/fake/oracle"
    inspect = Path(sys.executable).with_name("inspect")
    with running([Served(env, difficulty, SAMPLES)], context) as fake:
        as_inspect_models(fake, monkeypatch)
        done = subprocess.run([str(inspect), *command[1:], "-T", f"samples={SAMPLES}",
                               "-T", f"catalog_size={TEST_CATALOG_SIZE}", "--log-dir", str(tmp_path),
                               "--display", "plain"], check=False, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert fake.problems == []
    [log_file] = tmp_path.glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success"
    assert [s.scores["success"].value for s in log.samples] == [1.0] * SAMPLES
