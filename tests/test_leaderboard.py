"""Leaderboards: the sweep as a resumable Inspect eval set, the table, CSVs, plots and d50."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from inspect_ai.analysis import samples_df

from conftest import TEST_CATALOG_SIZE
from ecom_bench.cli import main
from ecom_bench.leaderboard import FrontierRange, estimate_frontier, parse_difficulties, read_episodes
from ecom_bench.scorers import SCORE_PARTS


@pytest.mark.parametrize("text,levels", [("0:12:3", [0, 3, 6, 9, 12]), ("0:12:6", [0, 6, 12]), ("2:4", [2, 3, 4]),
                                         ("0,6,12", [0, 6, 12]), ("7", [7]), ("0:10:4", [0, 4, 8, 10]),
                                         ("0:12:5", [0, 5, 10, 12])])
def test_difficulty_grids(text, levels):
    assert parse_difficulties(text) == levels


@pytest.mark.parametrize("text", ["", "a:b", "12:0:3", "0:12:0", "0:1:2:3", "-3", "0,0", "1.5"])
def test_bad_difficulty_grids_are_refused(text):
    with pytest.raises(ValueError, match="difficult"):
        parse_difficulties(text)


def _binary_outcomes(rates: dict[int, float], per_level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d, wins = [], []
    for level, rate in rates.items():
        successes = round(rate * per_level)
        d += [level] * per_level
        wins += [1.0] * successes + [0.0] * (per_level - successes)
    return np.array(d), np.array(wins), np.ones(len(d))


def test_frontier_is_beyond_below_or_inside_the_tested_range():
    beyond = estimate_frontier(*_binary_outcomes({0: 1.0, 6: 0.95, 12: 0.8}, 20))
    assert beyond.range is FrontierRange.BEYOND and beyond.label().startswith("> 12")
    below = estimate_frontier(*_binary_outcomes({0: 0.3, 6: 0.05, 12: 0.0}, 20))
    assert below.range is FrontierRange.BELOW and below.label().startswith("< 0")
    # success falling from 0.9 to 0.1 across 0..12 on a logistic with d50 = 6
    rates = {d: 1 / (1 + np.exp((d - 6) / 1.5)) for d in (0, 3, 6, 9, 12)}
    inside = estimate_frontier(*_binary_outcomes(rates, 40), resamples=300)
    assert inside.range is FrontierRange.WITHIN
    assert inside.d50 == pytest.approx(6.0, abs=0.6)
    assert inside.low < 6.0 < inside.high and inside.high - inside.low < 4
    # the interval narrows with more data
    wider = estimate_frontier(*_binary_outcomes(rates, 10), resamples=300)
    assert wider.high - wider.low > inside.high - inside.low


def test_frontier_survives_perfect_separation():
    """All successes up to d=6, none from d=9: the crossing lies between, not at infinity."""
    f = estimate_frontier(*_binary_outcomes({0: 1.0, 3: 1.0, 6: 1.0, 9: 0.0, 12: 0.0}, 10), resamples=200)
    assert f.range is FrontierRange.WITHIN and 6.0 < f.d50 < 9.0


def test_sweep_resumes_and_leaderboard_reports(tmp_path, capsys):
    logs = tmp_path / "sweep"
    argv = ["sweep", "--model", "ecom/oracle", "--model", "ecom/random", "--envs", "cart,policy",
            "--difficulties", "0:12:12", "--samples", "3", "--epochs", "2", "--log-dir", str(logs),
            "--catalog-size", str(TEST_CATALOG_SIZE), "--display", "none"]
    assert main(argv) == 0
    first = {p.name: p.stat().st_mtime_ns for p in logs.glob("*.eval")}
    assert len(first) == 2 * 2 * 2  # models x envs x difficulties, one log each
    assert main(argv) == 0  # a rerun of a complete sweep does no new work
    assert {p.name: p.stat().st_mtime_ns for p in logs.glob("*.eval")} == first

    frame = samples_df(str(logs), quiet=True)
    assert len(frame) == 8 * 3 * 2
    for part in SCORE_PARTS:
        assert pd.api.types.is_float_dtype(frame[f"score_{part}"]), part

    capsys.readouterr()
    assert main(["leaderboard", str(logs), "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    assert "| model | env | success | r_total | pass^2 (success) | pass@2 (success) | d50 [95% CI]" in out
    table = pd.read_csv(logs / "leaderboard" / "leaderboard.csv")
    oracle = table[(table["model"] == "ecom/oracle") & (table["env"] != "all")]
    rand = table[(table["model"] == "ecom/random") & (table["env"] != "all")]
    assert (oracle["d50_range"] == "beyond").all() and (oracle["success"] == 1.0).all()
    assert (rand["d50_range"] == "below").all()
    assert set(table["env"]) == {"cart", "policy", "all"} and (table["episodes"] > 0).all()
    points = pd.read_csv(logs / "leaderboard" / "by_difficulty.csv")
    assert len(points) == 2 * 2 * 2 and set(points["difficulty"]) == {0, 12}
    from PIL import Image

    for name in ("success_vs_difficulty.png", "heatmap.png"):
        with Image.open(logs / "leaderboard" / name) as image:
            assert image.format == "PNG" and image.size[0] > 300
    # the written leaderboard folder does not upset a later resume
    assert main(argv) == 0


def _cart_logs(log_dir, runs: int = 1, **task_args) -> None:
    from inspect_ai import eval as inspect_eval

    from ecom_bench.tasks import cart

    for _ in range(runs):
        inspect_eval(cart(samples=2, catalog_size=TEST_CATALOG_SIZE, **task_args), model="ecom/heuristic",
                     log_dir=str(log_dir), display="none")


def test_leaderboard_counts_a_rerun_once(tmp_path, capsys):
    _cart_logs(tmp_path, runs=2)
    episodes = read_episodes(tmp_path)
    assert len(episodes.table) == 2 and episodes.superseded == 2 and episodes.logs == 2
    assert episodes.replaced == ("ecom/heuristic on cart: 2",)
    assert main(["leaderboard", str(tmp_path), "--no-plots", "--bootstrap", "50"]) == 0
    out = capsys.readouterr().out
    assert "2 epochs replaced by newer logs of the same configuration (ecom/heuristic on cart: 2)" in out
    assert "Configuration: catalog=synthetic, catalog_size=3000, catalog_seed=0, strict=true" in out


def test_leaderboard_keeps_configurations_apart(tmp_path, capsys):
    """The same samples run with another setting are another benchmark: refused together, never
    deduplicated into one another; `--config` picks one."""
    _cart_logs(tmp_path)
    _cart_logs(tmp_path, strict=False)
    assert main(["leaderboard", str(tmp_path), "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert "hold 2 configurations that are not comparable, differing in strict (false | true)" in err
    assert "--config strict=false" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err

    assert main(["leaderboard", str(tmp_path), "--no-plots", "--bootstrap", "50", "--config", "strict=False"]) == 0
    out = capsys.readouterr().out
    assert "strict=false" in out and "replaced" not in out and "1 log(s) of other configurations left out" in out
    episodes = read_episodes(tmp_path, {"strict": "true"})
    assert len(episodes.table) == 2 and episodes.superseded == 0 and episodes.other_configs == 1
    assert dict(episodes.config)["strict"] == "true"
    table = pd.read_csv(tmp_path / "leaderboard" / "leaderboard.csv")
    assert set(table["strict"]) == {False} and set(table["catalog"]) == {"synthetic"}


def test_logs_of_earlier_versions_read_their_configuration_from_task_args(tmp_path):
    """Logs written before the tasks recorded catalog_size, catalog_seed and the customer are the same
    configuration as new ones with those settings: a rerun of them still replaces rather than splits."""
    from inspect_ai.log import list_eval_logs, read_eval_log, write_eval_log

    _cart_logs(tmp_path / "old")
    [info] = list_eval_logs(str(tmp_path / "old"))
    log = read_eval_log(info)
    for key in ("catalog_size", "catalog_seed", "user"):
        del log.eval.metadata[key]
    write_eval_log(log, str(tmp_path / "both" / "old.eval"))
    _cart_logs(tmp_path / "both")
    episodes = read_episodes(tmp_path / "both")
    assert episodes.superseded == 2 and len(episodes.table) == 2
    assert dict(episodes.config)["catalog_size"] == str(TEST_CATALOG_SIZE)


@pytest.mark.parametrize("config,message", [
    (["strictness=true"], "unknown setting 'strictness'"),
    (["strict"], "--config takes SETTING=VALUE"),
    (["catalog=other"], "no logs under"),
])
def test_leaderboard_config_filters_are_checked(tmp_path, capsys, config, message):
    _cart_logs(tmp_path)
    assert main(["leaderboard", str(tmp_path), "--no-plots", *[a for c in config for a in ("--config", c)]]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_sweep_passes_model_generation_and_task_options_to_inspect(tmp_path, capsys):
    from inspect_ai.log import list_eval_logs, read_eval_log

    logs = tmp_path / "sweep"
    assert main(["sweep", "--model", "ecom/heuristic", "--envs", "cart,policy", "--difficulties", "0", "--samples", "1",
                 "--log-dir", str(logs), "--catalog-size", str(TEST_CATALOG_SIZE), "-T", "strict=false",
                 "-T", "embedder=wordllama", "--temperature", "0.3", "--top-p", "0.9", "--max-tokens", "64",
                 "--max-retries", "2", "--timeout", "30", "--max-connections", "3",
                 "--model-base-url", "http://localhost:9", "--display", "lines"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("[")]
    assert len(lines) == 2 and any(line.startswith("[1/2] ") and " d=0 ecom/heuristic: success " in line
                                   for line in lines)
    assert len(err.strip().split("\n")) == 4, err  # the plan, a line per task, the summary (bars: "\r")
    headers = [read_eval_log(info, header_only=True).eval for info in list_eval_logs(str(logs))]
    assert len(headers) == 2
    for spec in headers:
        assert spec.task_args["strict"] is False and spec.task_args["embedder"] == "wordllama"
        assert spec.metadata["strict"] is False and spec.metadata["catalog_seed"] == 0
        generate = spec.model_generate_config
        assert (generate.temperature, generate.top_p, generate.max_tokens) == (0.3, 0.9, 64)
        assert (generate.max_retries, generate.timeout, generate.max_connections) == (2, 30, 3)
        assert spec.model_base_url == "http://localhost:9"
    # the leaderboard labels the agent with the settings that change its behaviour, not the operational ones
    assert main(["leaderboard", str(logs), "--no-plots", "--bootstrap", "50"]) == 0
    assert "| ecom/heuristic (max_tokens=64, temperature=0.3, top_p=0.9) | cart |" in capsys.readouterr().out


def test_sweep_model_args_reach_the_provider(tmp_path, capsys):
    """`-M` is repeatable and keeps commas; the scripted provider takes none, and says so by name."""
    assert main(["sweep", "--model", "ecom/heuristic", "--envs", "cart", "--difficulties", "0", "--samples", "1",
                 "--log-dir", str(tmp_path), "--catalog-size", str(TEST_CATALOG_SIZE), "-M", "stop=a,b",
                 "-M", "effort=2", "--display", "lines"]) == 2
    err = capsys.readouterr().err
    assert "takes no model args, got: effort, stop" in err and "Traceback" not in err


def test_sweep_passes_model_roles_to_inspect(tmp_path, capsys):
    """`--model-role user=...` words the customer of `-T user=llm`, as `inspect eval --model-role` does."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    from ecom_bench.leaderboard.config import task_config

    assert main(["sweep", "--model", "ecom/oracle", "--envs", "cart", "--difficulties", "3", "--samples", "1",
                 "--log-dir", str(tmp_path), "--catalog-size", str(TEST_CATALOG_SIZE), "-T", "user=llm",
                 "--model-role", "user=ecom-user/faithful", "--display", "lines"]) == 0
    assert "role user=ecom-user/faithful" in capsys.readouterr().err
    [spec] = [read_eval_log(info, header_only=True).eval for info in list_eval_logs(str(tmp_path))]
    assert spec.model_roles["user"].model == "ecom-user/faithful"
    assert dict(task_config(spec))["user"] == "llm:ecom-user/faithful"


@pytest.mark.parametrize("argv,message", [
    (["sweep", "--model", "ecom/oracle", "--log-dir", "x", "-T", "user=llm"], "--model-role user=<provider/model>"),
    (["sweep", "--model", "ecom/oracle", "--log-dir", "x", "--model-role", "user=ecom-user/faithful"],
     "the template customer uses no model: drop --model-role user=..."),
    (["sweep", "--model", "ecom/oracle", "--log-dir", "x", "-T", "user=llm", "--model-role", "user=ecom/oracle"],
     "the ecom/* models play the agent, not the customer"),
    (["sweep", "--model", "ecom/oracle", "--log-dir", "x", "--model-role", "user"],
     "--model-role takes ROLE=MODEL, got 'user'"),
    (["sweep", "--envs", "cart", "--log-dir", "x"], "the following arguments are required: --model"),
    (["sweep", "--model", "ecom/oracle", "--log-dir", "x", "--difficulties", "12:0"], "difficulties must be"),
    (["sweep", "--model", "ecom/oracle", "--model", "ecom/oracle", "--log-dir", "x"], "named twice"),
    (["sweep", "--model", "ecom/oracle", "--envs", "C9", "--log-dir", "x"], "unknown environment 'C9'"),
    (["leaderboard", "/nonexistent/logs"], "log directory does not exist"),
    (["sweep", "--model", "ecom/oracle", "--log-dir", "x", "-T", "strictt=false"],
     "unknown parameter 'strictt' (did you mean 'strict'?) for task"),
    (["sweep", "--model", "ecom/oracle", "--log-dir", "x", "-T", "samples=3"],
     "-T samples: the sweep sets it with --samples"),
    (["sweep", "--model", "ecom/oracle", "--log-dir", "x", "-T", "strict"], "-T takes KEY=VALUE, got 'strict'"),
    (["sweep", "--model", "ecom/oracle", "--log-dir", "x", "-M", "a=1", "-M", "a=2"], "-M a is given twice"),
    (["sweep", "--model", "ecom/oracle", "--envs", "cart", "--log-dir", "x", "-T", "strict=maybe"],
     "strict must be true or false"),
])
def test_bad_sweep_and_leaderboard_input_is_one_clear_error(argv, message, capsys):
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own usage errors
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if "error:" in line]) == 1


def test_leaderboard_of_a_folder_without_logs(tmp_path, capsys):
    assert main(["leaderboard", str(tmp_path)]) == 2
    assert "no ecom_bench samples" in capsys.readouterr().err


def test_leaderboard_of_an_interrupted_sweep_says_so(tmp_path, capsys):
    """Logs that hold no finished sample (a sweep stopped at once) get their own advice."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log, write_eval_log

    from ecom_bench.tasks import cart

    [log] = inspect_eval(cart(samples=1, catalog_size=TEST_CATALOG_SIZE), model="ecom/oracle",
                         log_dir=str(tmp_path / "done"), display="none")
    started = read_eval_log(log.location).model_copy(update={"status": "started", "samples": None,
                                                             "results": None})
    write_eval_log(started, str(tmp_path / "stopped" / "stopped.eval"))
    assert main(["leaderboard", str(tmp_path / "stopped")]) == 2
    assert "an interrupted sweep? Rerun `ecom-bench sweep`" in capsys.readouterr().err


def test_sweep_shows_one_progress_bar_and_keeps_errors_on_screen(tmp_path, capsys, context):
    """The default display: the plan, one bar redrawn in place (no line per task), the summary;
    a task that ends in an error is printed above the bar as a line of its own. (`context`: the
    index cache is warm, so no index build shows a bar of its own.)"""

    from inspect_ai.log import EvalError, read_eval_log

    from ecom_bench.leaderboard.progress import sweep_display

    logs = tmp_path / "sweep"
    argv = ["sweep", "--model", "ecom/oracle", "--model", "ecom/random", "--envs", "cart,tracking", "--difficulties",
            "0,3", "--samples", "1", "--log-dir", str(logs), "--catalog-size", str(TEST_CATALOG_SIZE)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    # lines end in "\n", a bar's redraws in "\r"; what stays on screen is each line's last redraw
    shown = [line.split("\r")[-1] for line in err.strip().split("\n")]
    assert shown[0].startswith("sweep: 2 model(s) x 2 env(s)") and shown[-1].startswith("all 8 tasks complete")
    assert "8/8" in shown[-2] and "8 samples; last: " in shown[-2]
    # in between only bars (an index build on a cold cache shows its own): no line per task
    assert all("|" in line or not line.strip(" \x1b[A") for line in shown[1:-1]), shown
    assert main(argv) == 0  # a rerun runs nothing and still ends full
    assert "8/8" in capsys.readouterr().err.split("\r")[-1]

    log = read_eval_log(str(next(logs.glob("*.eval"))))
    failed = log.model_copy(update={"status": "error", "error": EvalError(message="Connection error.", traceback="",
                                                                           traceback_ansi="")})
    with sweep_display("progress", 2) as reporter:
        reporter.report(failed)
        reporter.report(log)
        reporter.close(None)
    err = capsys.readouterr().err
    shown = [line.split("\r")[-1] for line in err.split("\n")]
    assert [line for line in shown if line.startswith("error: ")] == [
        f"error: {failed.eval.task.rsplit('/', 1)[-1]} d={failed.eval.task_args['difficulty']} "
        f"{failed.eval.model}: error (Connection error.)"]
    assert "1/2" in err.split("\r")[-1] and "1 failed" in err.split("\r")[-1]
