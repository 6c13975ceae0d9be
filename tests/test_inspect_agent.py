"""The Inspect front's seams: any agent under test, re-scoring a log, the customer's model role."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai import score as inspect_score
from inspect_ai.agent import Agent, AgentState, agent, react
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageAssistant, execute_tools, get_model
from inspect_ai.solver import system_message
from inspect_ai.tool import ToolCall
from inspect_ai.util import store

from conftest import TEST_CATALOG_SIZE, score_parts
from ecom_bench.leaderboard.config import agent_label
from ecom_bench.scorers import reward_scorers
from ecom_bench.tasks import cart, collection, ecom_tools, env_task, journey

ROOT = Path(__file__).resolve().parent.parent
INSPECT = str(Path(sys.executable).parent / "inspect")
SMALL = {"difficulty": 1, "samples": 2, "catalog_size": TEST_CATALOG_SIZE}


def _eval(task, model, log_dir, **kwargs):
    [log] = inspect_eval(task, model=model, log_dir=str(log_dir), display="none", **kwargs)
    return log


def _values(log):
    return {s.id: score_parts(s) for s in log.samples}


def _explanations(log):
    return {s.id: {name: (score.value, score.explanation, score.answer) for name, score in s.scores.items()}
            for s in log.samples}


def _cli(*args, cwd=ROOT):
    return subprocess.run([INSPECT, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


# ----------------------------------------------------------------- any agent under test
def test_react_example_scores_what_the_built_in_solver_scores(tmp_path):
    """examples/react_agent.py (react() with a custom prompt) on the oracle: the same scores as the default."""
    proc = _cli("eval", "examples/react_agent.py", "--model", "ecom/oracle", "-T", "env=cart", "-T", "difficulty=1",
                "-T", "samples=2", "-T", f"catalog_size={TEST_CATALOG_SIZE}", "--log-dir", str(tmp_path / "react"),
                "--display", "none")
    assert proc.returncode == 0, proc.stderr[-2000:]
    [logfile] = (tmp_path / "react").glob("*.eval")
    react_log = read_eval_log(str(logfile))
    assert react_log.status == "success", react_log.error
    assert react_log.plan.steps[0].solver == "ecom_bench/agent_conversation"
    assert react_log.eval.task_args["catalog_size"] == TEST_CATALOG_SIZE
    default_log = _eval(cart(**SMALL), "ecom/oracle", tmp_path / "default")
    assert _values(react_log) == _values(default_log)
    assert all(v["success"] == 1.0 for v in _values(react_log).values())


@pytest.mark.parametrize("model", ["ecom/oracle", "ecom/heuristic"])
def test_an_agent_on_a_journey_scores_what_the_built_in_solver_scores(tmp_path, model):
    agent = react(prompt="You are a shop's customer-service agent.", tools=[ecom_tools()], submit=False)
    with_agent = _eval(journey(**SMALL, agent=agent), model, tmp_path / "agent")
    default = _eval(journey(**SMALL), model, tmp_path / "default")
    assert with_agent.status == "success", with_agent.error
    assert _explanations(with_agent) == _explanations(default)
    # a leaderboard keeps the scaffold apart from the model alone
    assert agent_label(with_agent.eval).startswith(f"{model} + react[") and agent_label(default.eval) == model
    # the conversation is logged once: the env's system prompt first, react's own prompt not piled up per turn
    for sample in with_agent.samples:
        assert [m.role for m in sample.messages[:2]] == ["system", "user"]
        assert [m.role for m in sample.messages].count("system") == 1


@pytest.mark.parametrize("difficulty", [3, 6])
def test_the_oracle_through_an_agent_scores_what_it_scores_alone_on_every_env(tmp_path, difficulty):
    """The same model behaviour scores the same through either path, at budgets that split work over
    turns: react runs a generation's tool calls one by one, and they are still one action (one
    step, one assistant message the scripted model reads)."""
    small = {**SMALL, "difficulty": difficulty, "samples": 16}  # two samples of each of the eight envs
    agent = react(prompt="You are a shop's customer-service agent.", tools=[ecom_tools()], submit=False)
    with_agent = _eval(collection("C8", **small, agent=agent), "ecom/oracle", tmp_path / "agent")
    default = _eval(collection("C8", **small), "ecom/oracle", tmp_path / "default")
    assert with_agent.status == "success", with_agent.error
    assert _explanations(with_agent) == _explanations(default)
    assert all(v["success"] == 1.0 for v in _values(with_agent).values())


@agent
def speaks_through_ask_user() -> Agent:
    """An agent whose every message to the customer is an ask_user call (as a tool-only protocol has it)."""

    async def execute(state: AgentState) -> AgentState:
        tools = [ecom_tools()]
        while True:  # until the episode ends: the tools' next lookup stops the agent
            state.output = await get_model().generate(state.messages, tools)
            message = state.output.message
            if not message.tool_calls:
                message = ChatMessageAssistant(content="", tool_calls=[
                    ToolCall(id=f"ask-{len(state.messages)}", function="ask_user", arguments={"question": message.text})])
            state.messages.append(message)
            state.messages.extend((await execute_tools(state.messages, tools)).messages)

    return execute


@pytest.mark.parametrize("env", ["discovery", "returns"])
def test_a_scripted_model_reads_the_customer_s_replies_to_ask_user(tmp_path, env):
    """The heuristic reads the customer's words from user messages: replies that came back from
    ask_user are those words too, so it plays as it plays speaking plainly."""
    small = {**SMALL, "difficulty": 3, "samples": 4}
    asking = _eval(env_task(env, **small, agent=speaks_through_ask_user()), "ecom/heuristic", tmp_path / "agent")
    default = _eval(env_task(env, **small), "ecom/heuristic", tmp_path / "default")
    assert asking.status == "success", asking.error
    assert _values(asking) == _values(default)


def test_react_with_its_submit_tool_is_refused():
    with pytest.raises(ValueError, match="needs submit=False"):
        cart(**SMALL, agent=react(tools=[ecom_tools()]))


NO_TOOLS_TASK = """
from inspect_ai import task
from inspect_ai.agent import react
from ecom_bench.tasks import cart


@task
def no_tools():
    return cart(difficulty=1, samples=1, catalog_size={size}, agent=react(prompt="Help the customer.", submit=False))
"""


def test_react_without_the_episode_tools_is_refused_before_any_sample(tmp_path):
    with pytest.raises(ValueError, match=r"never looks up the episode's tools: give it tools=\[ecom_tools\(\)\]"):
        cart(**SMALL, agent=react(prompt="Help the customer.", submit=False))
    (tmp_path / "no_tools.py").write_text(NO_TOOLS_TASK.format(size=TEST_CATALOG_SIZE))
    proc = _cli("eval", "no_tools.py", "--model", "ecom/oracle", "--log-dir", str(tmp_path), "--display", "none",
                cwd=tmp_path)
    assert proc.returncode != 0
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("the agent under test never looks up the episode's tools")
    assert not list(tmp_path.glob("*.eval"))


@agent
def says_hello() -> Agent:
    async def execute(state: AgentState) -> AgentState:
        state.messages.append(ChatMessageAssistant(content="Hello!"))
        return state

    return execute


def test_an_agent_that_never_looks_up_the_episode_tools_is_a_clear_error(tmp_path):
    log = _eval(cart(**SMALL, agent=says_hello()), "ecom/oracle", tmp_path)
    assert log.status == "error"
    assert "tools=[ecom_tools()]" in log.error.message


@agent
def peeks_at_the_store(seen: list) -> Agent:
    """react() on the episode's tools that, before each turn, records what the sample's store holds."""
    inner = react(prompt="You are a shop's customer-service agent.", tools=[ecom_tools()], submit=False)

    async def execute(state: AgentState) -> AgentState:
        seen.append(dict(store().items()))
        return await inner(state)

    return execute


def test_an_agent_under_test_cannot_read_the_hidden_goal_from_the_store(tmp_path):
    """The store is the agent's too (it runs in the sample): the hidden goal is written there only
    when the episode is over, for the scorers and the viewer."""
    seen: list = []
    log = _eval(cart(**SMALL, agent=peeks_at_the_store(seen)), "ecom/oracle", tmp_path)
    assert log.status == "success", log.error
    assert seen and all(not snapshot.get("EpisodeStore:hidden") for snapshot in seen)
    assert all(sample.store["EpisodeStore:hidden"] for sample in log.samples)
    assert all(score_parts(s)["success"] == 1.0 for s in log.samples)


@pytest.mark.parametrize("not_an_agent", ["react", lambda state: state])
def test_what_is_no_inspect_agent_is_refused(not_an_agent):
    with pytest.raises(ValueError, match="agent must be an Inspect Agent"):
        cart(**SMALL, agent=not_an_agent)


# ------------------------------------------------------------------------- re-scoring
@pytest.mark.parametrize("env", ["cart", "journey"])
@pytest.mark.parametrize("model", ["ecom/oracle", "ecom/heuristic"])
def test_rescoring_a_log_gives_the_same_scores(tmp_path, env, model):
    log = _eval(env_task(env, **SMALL), model, tmp_path)
    rescored = inspect_score(read_eval_log(log.location), reward_scorers(), action="overwrite", display="none")
    assert _explanations(rescored) == _explanations(log)
    assert [s.model_dump() for s in rescored.results.scores] == [s.model_dump() for s in log.results.scores]


@agent
def crashes_once() -> Agent:
    """react() on the episode's tools, raising once its first run is over (the first sample it plays errors)."""
    inner = react(prompt="You are a shop's customer-service agent.", tools=[ecom_tools()], submit=False)
    crashed: list[bool] = []

    async def execute(state: AgentState) -> AgentState:
        state = await inner(state)
        if not crashed:
            crashed.append(True)
            raise RuntimeError("the agent crashed")
        return state

    return execute


@pytest.mark.parametrize("score_on_error", [False, True])
def test_rescoring_keeps_an_errored_sample_as_the_eval_left_it(tmp_path, score_on_error):
    """Unscored (Inspect scores no errored sample) stays unscored, not a failure score that moves the
    means; one scored under --score-on-error is scored again, the same."""
    log = _eval(cart(**SMALL, agent=crashes_once()), "ecom/oracle", tmp_path, fail_on_error=False, max_samples=1,
                score_on_error=score_on_error)
    assert [bool(s.error) for s in log.samples].count(True) == 1
    rescored = inspect_score(read_eval_log(log.location), reward_scorers(), action="overwrite", display="none")
    assert {s.id: s.scores or {} for s in rescored.samples} == {s.id: s.scores or {} for s in log.samples}
    assert [s.model_dump() for s in rescored.results.scores] == [s.model_dump() for s in log.results.scores]
    errored = next(s for s in log.samples if s.error)
    assert bool(errored.scores) == score_on_error


def test_inspect_score_cli_reproduces_the_scores(tmp_path):
    log = _eval(journey(**SMALL), "ecom/heuristic", tmp_path)
    out = tmp_path / "rescored.eval"
    proc = _cli("score", log.location, "--action", "overwrite", "--output-file", str(out), "--display", "none")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _explanations(read_eval_log(str(out))) == _explanations(log)


def test_a_sample_no_episode_ran_for_is_an_error_not_a_score(tmp_path):
    log = _eval(cart(**SMALL), "ecom/oracle", tmp_path, solver=system_message("Hello"))
    assert log.status == "error"
    assert "no ecom_bench episode ran for this sample" in log.error.message


# ---------------------------------------------------------------------- the customer
def test_the_customer_is_template_or_llm():
    assert cart(**SMALL).metadata["user"] == "template"
    with pytest.raises(ValueError, match=r"^unknown user 'gpt'; available: template, llm$"):
        cart(**SMALL, user="gpt")
    with pytest.raises(ValueError, match=r"^unknown user ''; available"):  # `-T user=` arrives as None
        cart(**SMALL, user=None)


def test_a_user_model_role_is_refused_on_the_cli(tmp_path):
    proc = _cli("eval", "ecom_bench/cart", "--model", "ecom/oracle", "--model-role", "user=ecom/oracle",
                "-T", "samples=1", "-T", f"catalog_size={TEST_CATALOG_SIZE}", "--log-dir", str(tmp_path),
                "--display", "none", cwd=tmp_path)
    assert proc.returncode != 0
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert lines == ["the template customer uses no model: drop --model-role user=..."]
    assert not list(tmp_path.glob("*.eval"))


def test_a_user_model_role_is_refused_from_python(tmp_path):
    log = _eval(cart(**SMALL), "ecom/oracle", tmp_path, model_roles={"user": "ecom/oracle"})
    assert log.status == "error"
    assert "the template customer uses no model" in log.error.message



def test_an_agent_model_as_the_customer_is_refused_on_the_cli(tmp_path):
    """ecom/* models play the agent from a live episode: as the customer's model they would fail every
    sample; the one line names the customer models."""
    proc = _cli("eval", "ecom_bench/cart", "-T", "user=llm", "--model", "ecom/oracle", "--model-role",
                "user=ecom/oracle", "-T", "samples=1", "-T", f"catalog_size={TEST_CATALOG_SIZE}",
                "--log-dir", str(tmp_path), "--display", "none", cwd=tmp_path)
    assert proc.returncode != 0
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and "ecom-user/faithful" in lines[0] and "play the agent" in lines[0], lines
    assert not list(tmp_path.glob("*.eval"))
