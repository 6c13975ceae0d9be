"""The curriculum as a service: the real `ecom-bench serve -d adaptive --curriculum-state FILE`
in a subprocess keeps its curriculum across a restart, reads and sets it over HTTP (a bad state
is refused with a 4xx naming the field, and the server keeps serving), and is the one curriculum
that trainer processes share (`CurriculumClient`), checkpointed with `CurriculumCheckpoint`.
The TRL environment over the server (`openenv_environment_class`) plays the same episodes, and
scores them the same, as the in-process one."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("openenv.core", reason="the server needs the `train` extra (openenv-core)")
pytest.importorskip("trl", reason='needs the train extra: pip install -e ".[train]"')

import httpx  # noqa: E402

from conftest import TEST_CATALOG_SIZE  # noqa: E402
from ecom_bench import cli  # noqa: E402
from ecom_bench.agents import get_policy  # noqa: E402
from ecom_bench.training.client import CurriculumClient, drive_oracle  # noqa: E402
from ecom_bench.training.curriculum import AdaptiveCurriculum  # noqa: E402
from ecom_bench.training.server import running_server  # noqa: E402
from ecom_bench.training.trl import (CURRICULUM_FILE, ENDED, CurriculumCheckpoint, build_dataset,  # noqa: E402
                                     environment_class, environment_factories, openenv_environment_class)




@pytest.fixture(scope="module")
def fixed_url(context) -> str:  # noqa: ANN001 - a server at a fixed difficulty (d = 6), all envs
    with running_server("C8", 6, catalog_size=TEST_CATALOG_SIZE) as base_url:
        yield base_url


def _serve(path: Any, *more: str) -> Any:
    return running_server("cart,policy", "adaptive", catalog_size=TEST_CATALOG_SIZE,
                          extra_args=("--curriculum-state", str(path), *more))


def test_curriculum_survives_a_server_restart(tmp_path, context):
    path = tmp_path / "curriculum.json"
    with _serve(path) as url:
        config = {**AdaptiveCurriculum().state_dict()["config"], "tau_num": 4}
        assert httpx.put(f"{url}/curriculum", json={"config": config, "windows": {}}).status_code == 200
        run = drive_oracle(url, 4, 6, context=context)  # 24 oracle wins over two envs: both promoted
        assert (run.successes, run.errors) == (24, 0), run.failures
        before = httpx.get(f"{url}/curriculum").json()
    assert sum(w["episodes"] for w in before["windows"].values()) == 24
    assert all(w["high"] >= 1 for w in before["windows"].values()) and len(before["windows"]) == 2
    assert json.loads(path.read_text()) == before  # saved at shutdown (SIGTERM)
    with _serve(path) as url:
        assert httpx.get(f"{url}/curriculum").json() == before  # loaded at start
        with CurriculumClient(url) as shared:  # and used: draws come from [0, 1]
            cart = before["windows"]["cart"]
            assert shared.window("cart") == (cart["low"], cart["high"])
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temporaries


def test_curriculum_is_read_and_set_over_http_and_bad_state_is_refused(tmp_path, context):
    path = tmp_path / "curriculum.json"
    with _serve(path, "--curriculum-save-every", "0.2") as url, httpx.Client(base_url=url, timeout=30) as http:
        state = http.get("/curriculum").json()
        assert state == {"config": {"tau_acc": 0.9, "tau_num": 32, "delta": 4, "max_level": None}, "windows": {}}
        window = {"low": 1, "high": 3, "attempts": 2, "successes": 1, "episodes": 40, "promotions": 3}
        wanted = {"config": {**state["config"], "tau_num": 4}, "windows": {"cart": window}}
        assert http.put("/curriculum", json=wanted).json() == wanted
        assert http.get("/curriculum/window", params={"env": "cart"}).json() == {"env": "cart", "low": 1, "high": 3}
        for bad, status, words in (
            ({**wanted, "windows": {"cart": {**window, "low": 4}}}, 422, "windows.cart.low (4) is above windows.cart.high (3)"),
            ({**wanted, "windows": {"shoes": window}}, 422, "windows.shoes: unknown environment 'shoes'"),
            ({**wanted, "config": {**wanted["config"], "tau_acc": 2}}, 422, "config.tau_acc must be in (0, 1]"),
            ({**wanted, "windows": {"cart": {**window, "successes": 3}}}, 422, "windows.cart.successes (3) is above"),
            ({"windows": {}}, 422, "exactly 'config' and 'windows'"),
            ([1, 2], 422, "exactly 'config' and 'windows'"),
        ):
            answer = http.put("/curriculum", json=bad)
            assert answer.status_code == status and words in answer.json()["detail"], answer.text
        answer = http.put("/curriculum", content=b"{not json")
        assert answer.status_code == 400 and "not valid JSON" in answer.json()["detail"]
        for body, words in (({"env": "cart", "level": 1, "success": 1.0}, "success"),
                            ({"env": "cart", "level": -1, "success": True}, "level"),
                            ({"env": "shoes", "level": 0, "success": True}, "unknown environment")):
            answer = http.post("/curriculum/record", json=body)
            assert 400 <= answer.status_code < 500 and words in answer.json()["detail"], answer.text
        assert http.get("/curriculum/window", params={"env": "C2"}).status_code == 400
        assert http.get("/curriculum").json() == wanted  # refused states changed nothing
        # the server kept serving: a normal adaptive episode, recorded into the set state
        run = drive_oracle(url, 1, context=context, reset={"env": "cart"})
        assert (run.successes, run.errors) == (1, 0), run.failures
        assert http.get("/curriculum").json()["windows"]["cart"]["episodes"] == 41
    assert json.loads(path.read_text())["windows"]["cart"]["episodes"] == 41


def test_fixed_difficulty_server_has_no_curriculum_and_bad_files_stop_serve(fixed_url, tmp_path, capsys):
    answer = httpx.get(f"{fixed_url}/curriculum")
    assert answer.status_code == 409 and "fixed difficulty" in answer.json()["detail"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"config": AdaptiveCurriculum().state_dict()["config"],
                               "windows": {"cart": {"low": 2, "high": 1, "attempts": 0, "successes": 0,
                                                    "episodes": 0, "promotions": 0}}}))
    for argv, words in (
        (["serve", "-d", "adaptive", "--curriculum-state", str(bad)], f"{bad}: windows.cart.low (2) is above"),
        (["serve", "-d", "3", "--curriculum-state", str(tmp_path / "c.json")], "needs difficulty 'adaptive'"),
        (["serve", "-d", "adaptive", "--curriculum-save-every", "5"], "needs --curriculum-state"),
        (["serve", "-d", "adaptive", "--curriculum-state", str(tmp_path / "no" / "c.json")], "does not exist"),
    ):
        assert cli.main([*argv, "--catalog-size", str(TEST_CATALOG_SIZE)]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_trainer_processes_share_the_server_curriculum_and_checkpoint_it(tmp_path, context):
    """Two 'processes' (two factory sets, each with its own client) record into the server's one
    curriculum; CurriculumCheckpoint saves it and, on resume, sets the server back to it."""
    with _serve(tmp_path / "curriculum.json") as url, CurriculumClient(url) as first, CurriculumClient(url) as second:
        first.load_state_dict({**first.state_dict(), "config": {**first.state_dict()["config"], "tau_num": 2}})
        for client in (first, second):
            env = environment_factories("cart", curriculum=client, context=context)["cart"]()
            row = build_dataset("cart", "adaptive", rows=1, curriculum=client)[0]
            env.reset(**row)
            _play_oracle(env)
            assert env.outcome.success
        assert first.window("cart") == second.window("cart") == (0, 1)  # both episodes counted in one place

        callback = CurriculumCheckpoint(second)
        args, state = SimpleNamespace(output_dir=str(tmp_path)), SimpleNamespace(global_step=7, is_world_process_zero=True)
        (tmp_path / "checkpoint-7").mkdir()
        callback.on_save(args, state, None)
        saved = json.loads((tmp_path / "checkpoint-7" / CURRICULUM_FILE).read_text())
        assert saved == first.state_dict()
        first.record("cart", 1, True), first.record("cart", 1, True)
        assert first.window("cart") == (0, 2)
        callback.on_train_begin(args, state, None)  # a resume at step 7
        assert first.state_dict() == saved and first.window("cart") == (0, 1)
        with pytest.raises(ValueError, match="windows.cart.low"):
            first.load_state_dict({**saved, "windows": {"cart": {**saved["windows"]["cart"], "low": 9}}})


def _play_oracle(env: Any) -> None:
    from test_trl_adapter import _play_oracle as play

    play(env)


@pytest.mark.parametrize("env_name", ["cart", "policy"])
def test_openenv_trl_environment_mirrors_the_in_process_one(env_name, fixed_url, context):
    """The TRL class over the server plays the oracle's calls with the same results, prompt and
    score as the in-process class; a rollout cut short scores -1, aborted."""
    from test_trl_adapter import _as_plain_messages

    remote_cls = openenv_environment_class(env_name, fixed_url)
    local_cls = environment_class(env_name)
    assert [n for n in dir(remote_cls) if not n.startswith("_") and callable(getattr(remote_cls, n))] == [
        n for n in dir(local_cls) if not n.startswith("_") and callable(getattr(local_cls, n))]
    remote, local = remote_cls(), local_cls(context=context)
    for index in range(2):
        rows = [build_dataset(env_name, 3, rows=index + 1, seed=4)[index] for _ in range(2)]
        assert remote.reset(**rows[0]) == local.reset(**rows[1])  # the customer's opening
        assert rows[0]["prompt"] == rows[1]["prompt"]  # the episode's system prompt
        episode = local.ecom_env.episode
        oracle = get_policy(env_name, "oracle")
        while not episode.done:
            action = oracle.act(_as_plain_messages(local.ecom_env.transcript), episode.problem.hidden_state(),
                                episode.status())
            calls = action.tool_calls or [SimpleNamespace(name="ask_user", arguments={"question": action.text})]
            for call in calls:
                assert getattr(remote, call.name)(**call.arguments) == getattr(local, call.name)(**call.arguments)
        assert remote.outcome == local.outcome and remote.outcome.success
        assert remote.ask_user(question="still there?") == ENDED
    remote.reset(**build_dataset(env_name, 3, rows=1)[0])
    remote.ask_user(question="Hello?")
    cut = remote.outcome
    assert (cut.total, cut.success, cut.end) == (-1.0, False, "aborted")


def test_grpo_trainer_plays_episodes_on_the_server(fixed_url, context, tmp_path):
    """The real trainer over `environment_factories(base_url=)`: a step of episodes played on the
    server, the one reward r_total, the episode metrics logged."""
    from test_trl_adapter import Seen, _grpo_args, _tiny_model, _tokenizer
    from trl import GRPOTrainer

    from ecom_bench.training.trl import OpenEnvTRLEnv, r_total

    tok = _tokenizer(context)
    seen = Seen()
    made: list[OpenEnvTRLEnv] = []

    def tracked(make: Any) -> Any:
        return lambda: made.append(make()) or made[-1]

    factories = environment_factories("C2", base_url=fixed_url)
    trainer = GRPOTrainer(model=_tiny_model(tok), processing_class=tok, reward_funcs=[r_total],
                          args=_grpo_args(tmp_path, max_steps=1), train_dataset=build_dataset("C2", 2, rows=4),
                          environment_factory={k: tracked(f) for k, f in factories.items()}, callbacks=[seen])
    assert trainer.reward_func_names == ["r_total"] and trainer.reward_weights.tolist() == [1.0]
    trainer.train()
    assert {type(e).__name__ for e in made} == {"CartOpenEnvEnv", "SubstitutionOpenEnvEnv"}
    log = seen.logs[0]
    assert log["tools/call_frequency"] > 0 and log["tools/failure_frequency"] == 0
    assert log["episode/r_total"] == pytest.approx(log["reward"]) and "episode/end/answered" in log
    with pytest.raises(ValueError, match="base_url"):
        environment_factories("C2", base_url=fixed_url, context=context)
    with pytest.raises(ValueError, match="http"):
        openenv_environment_class("cart", "localhost:8000")
