"""The LLM customer's model behind an OpenAI-compatible server, through Inspect.

`-T user=llm` with `--model-role user=openai-api/<name>/<model>` (docs/evaluation.md's recipe for a
local server) is run against the fake server playing a faithful customer model
(`fake_openai_server.py`: it rewords the prompt's reference draft, every fact kept), through
Inspect's real `openai-api` provider and the real `openai` SDK: every env's customer prompts must
cross the wire and come back as plain messages the guards accept at once, and every sample must
succeed as it does with the template customer.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TEST_CATALOG_SIZE
from fake_openai_server import FakeOpenAIServer, WireError, as_inspect_models, running
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from ecom_bench import tasks
from ecom_bench.envs import env_names

EVALUATION_DOC = Path(__file__).resolve().parent.parent / "docs" / "evaluation.md"
DIFFICULTY, SAMPLES = 2, 2
CUSTOMER = "openai-api/fake/faithful"


@pytest.fixture(scope="module")
def server(context) -> FakeOpenAIServer:
    with running([], context) as fake:  # the agent runs in process: the server plays only the customer
        yield fake


@pytest.fixture
def fake(server, monkeypatch) -> FakeOpenAIServer:
    return as_inspect_models(server, monkeypatch)


def run(task, log_dir: Path, **kwargs):  # noqa: ANN001, ANN003, ANN201
    [log] = inspect_eval(task, model="ecom/oracle", log_dir=str(log_dir), display="none", **kwargs)
    assert log.status == "success", log.error
    return log


def successes(log) -> dict[str, float]:  # noqa: ANN001
    return {s.id: s.scores["success"].value for s in log.samples}


def assert_guards_accepted_every_reply(log) -> None:  # noqa: ANN001
    for sample in log.samples:
        guards = sample.scores["total"].metadata["customer_guards"]
        assert guards["replies"] >= 1, guards
        assert guards["accepted"] == guards["replies"] and guards["retried"] == guards["fell_back"] == 0, guards


@pytest.mark.parametrize("env", env_names())
def test_a_customer_model_behind_an_openai_compatible_server_words_every_env(fake, tmp_path, env):
    task = getattr(tasks, env)
    args = {"difficulty": DIFFICULTY, "samples": SAMPLES, "catalog_size": TEST_CATALOG_SIZE}
    before = len(fake.customer_requests)
    # built inside the eval, as the CLI builds it (a task built outside one checks its roles only
    # as far as the process's Inspect state allows; an earlier in-process eval may leave that set)
    worded = run(task, tmp_path, task_args={"user": "llm", **args}, model_roles={"user": CUSTOMER})
    assert fake.problems == []
    served = fake.customer_requests[before:]
    departments = {r.env for r in served}  # a journey's legs name their own envs
    assert served
    assert departments <= set(env_names()) - {env} if env == "journey" else departments == {env}
    assert any(r.reply != r.draft for r in served)  # reworded, not echoed
    assert_guards_accepted_every_reply(worded)
    assert CUSTOMER in worded.stats.model_usage
    template = run(task(**args), tmp_path)
    assert successes(worded) == successes(template)
    assert all(success == 1.0 for success in successes(worded).values())


def test_a_customer_model_is_not_served_an_agent_conversation(fake):
    agent_like = [{"role": "system", "content": "You are a shop's agent."}, {"role": "user", "content": "Hi"}]
    with pytest.raises(WireError, match="plays the customer"):
        fake.answer({"model": "faithful", "messages": agent_like})


def _documented_command() -> list[str]:
    """docs/evaluation.md's command for a customer model behind a local server (continuation lines joined)."""
    text = EVALUATION_DOC.read_text().replace("\\\n", " ")
    [line] = [line for line in text.splitlines()
              if line.startswith("inspect eval ecom_bench/") and "user=llm" in line and "openai-api/vllm/" in line]
    return shlex.split(line.split("#")[0])


def test_the_documented_customer_recipe_runs_as_written(context, tmp_path, monkeypatch):
    """`--model-role user="{model: openai-api/<name>/<model>, ...}" --cache` as docs/evaluation.md gives it,
    the agent an in-process scripted one (docs/evaluation.md's is a hosted model), the customer the fake
    server's: exit 0, every sample a success, the guards' counts clean."""
    command = _documented_command()
    command[command.index("--model") + 1] = "ecom/oracle"
    role_at = command.index("--model-role") + 1
    assert "openai-api/vllm/" in command[role_at]
    command[role_at] = re.sub(r"openai-api/vllm/[^,}\s]+", CUSTOMER, command[role_at])
    inspect = Path(sys.executable).with_name("inspect")
    with running([], context) as fake:
        as_inspect_models(fake, monkeypatch)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
        done = subprocess.run([str(inspect), *command[1:], "-T", f"samples={SAMPLES}",
                               "-T", f"catalog_size={TEST_CATALOG_SIZE}", "--log-dir", str(tmp_path),
                               "--display", "plain"], check=False, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert fake.problems == []
        assert fake.customer_requests
    [log_file] = tmp_path.glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success" and log.eval.metadata["user"] == "llm"
    assert [s.scores["success"].value for s in log.samples] == [1.0] * SAMPLES
    assert_guards_accepted_every_reply(log)
