"""`ecom-bench demo`: the page's forms read the tools' schemas, and a cart episode played to its
end in a real browser (Playwright driving Debian's chromium) scores what the core scores for the
same actions."""

from __future__ import annotations

import importlib.util
import os
import re
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from ecom_bench.agents import get_policy
from ecom_bench.cli import main
from ecom_bench.conversation import AgentAction, ToolCallRequest
from ecom_bench.envs.context import EnvContext
from ecom_bench.episode import Episode, new_episode
from ecom_bench.runner import run_policy

pytest.importorskip("gradio", reason="gradio is not installed (extra `demo`)")

from ecom_bench.demo import DemoApp, DemoSession, argument_fields, arguments_from_form, chat_view, launch  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
#: Chromium kept off the network: no background services, no QUIC, nothing fetched at start.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: Where to also save the screenshot of the finished episode (docs/images/demo.png is made so).
SCREENSHOT_ENV = "ECOM_BENCH_DEMO_SCREENSHOT"
#: The episode the browser plays: the page's own fields are set to it.
DIFFICULTY, SEED = 3, 1


def _specs(context: EnvContext, env: str = "cart") -> dict[str, Any]:
    return {s.name: s for s in new_episode(env, 3, 0, 0, context=context).tool_specs()}


def test_form_fields_follow_the_schema(context: EnvContext) -> None:
    search = _specs(context)["catalog_search"]
    widgets = {arg.name: (arg.widget, arg.required) for arg in argument_fields(search)}
    assert widgets["query"] == ("text", True)
    assert widgets["max_price"] == ("text", False), "no default: left empty, it is not sent"
    assert widgets["limit"] == ("integer", False)
    assert widgets["features"] == ("text", False)
    assert all(arg.hint for arg in argument_fields(search)), "every argument shows its description"
    values = {"query": "usb charger", "max_price": "20.5", "limit": 5.0, "features": "fast, usb-c", "brand": " ",
              "min_price": ""}
    arguments = arguments_from_form(search, [values.get(arg.name) for arg in argument_fields(search)])
    # empty optional fields are left out (their defaults apply); a list is typed as "a, b"
    assert arguments == {"query": "usb charger", "max_price": 20.5, "limit": 5, "features": ["fast", "usb-c"]}


def test_chat_view_puts_the_customer_left_and_folds_results(context: EnvContext) -> None:
    episode = new_episode("cart", 3, 0, 0, context=context)
    episode.step(AgentAction(tool_calls=(ToolCallRequest("cart_view", {}, "c1"),)))
    episode.step(AgentAction("Which colour would you like?"))
    shown = chat_view(episode.messages)
    assert shown[0] == {"role": "assistant", "content": episode.opening}
    assert shown[1]["role"] == "user" and "cart_view()" in shown[1]["content"]
    assert shown[2]["metadata"] == {"title": "cart_view: result"}
    assert shown[3] == {"role": "user", "content": "Which colour would you like?"}
    assert shown[4]["role"] == "assistant" and len(shown) == 5


def test_handlers_refuse_what_cannot_be_sent_and_never_step_an_ended_episode(context: EnvContext) -> None:
    app = DemoApp(context)
    session, _, _, _, _, notice, *_ = app.reset(DemoSession(), "cart", 2.5, 0, 0, False)
    assert notice.startswith("Not reset: difficulty must be a whole number") and not session.started
    assert "Reset an episode first" in app.send(session, "hi")[2]
    session, *_ = app.reset(session, "C8", 3, 7, 0, False)
    assert session.started and session.env.episode.env.name in ("cart", "substitution", "discovery", "returns",
                                                                "tracking", "policy", "bundle", "journey")
    assert "empty one is not sent" in app.send(session, "   ")[2] and session.env.episode.steps == 0
    session, *_ = app.reset(session, "cart", 3, 0, 0, False)
    specs = session.specs()
    # a call the schema refuses comes back as an error (forgiving mode), and the game goes on
    chat, *_ = app.call_tool(session, "cart_set_quantity", "P1", None, None)
    assert chat[-1]["metadata"]["title"] == "cart_set_quantity: error" and not session.done
    target = session.env.episode.problem.hidden_state()["goal"]["targets"][0]
    assert [arg.name for arg in argument_fields(specs["cart_add"])] == ["product_id", "variant_id", "quantity"]
    app.call_tool(session, "cart_add", target["product_id"], target["variant_id"] or "", float(target["quantity"]))
    final = next(name for name, spec in specs.items() if spec.kind == "final")
    _, status, notice, reward, goal = app.call_tool(session, final)
    assert session.done and "Episode over" in status and "total" in reward and goal["visible"]
    steps = session.env.episode.steps
    assert "ended" in app.call_tool(session, final)[2] and "ended" in app.send(session, "hello?")[2]
    assert session.env.episode.steps == steps


@pytest.mark.parametrize("argv, needle", [
    (["demo", "--port", "70000"], "between 1 and 65535"),
    (["demo", "--catalog", "/no/such/catalogue.parquet"], "no/such/catalogue.parquet"),
])
def test_demo_refuses_bad_options_in_one_line(argv: list[str], needle: str, capsys: pytest.CaptureFixture) -> None:
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own refusal: usage, then one error line
        code = int(e.code or 0)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and needle in err[-1] and "Traceback" not in "\n".join(err)


def test_demo_refuses_a_port_in_use_before_loading_anything(capsys: pytest.CaptureFixture) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["demo", "--port", str(port), "--catalog", "/no/such/catalogue.parquet"]) == 2
    assert capsys.readouterr().err.strip() == (f"ecom-bench: error: cannot listen on 127.0.0.1:{port} (Address already "
                                               "in use): pick another --port or --host")


# ------------------------------------------------------------------------------ in a browser
def _missing() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed (extra `demo`)"
    if not os.path.exists(CHROMIUM):
        return f"chromium is not installed at {CHROMIUM} (apt-get install chromium)"
    return None


def _plan(context: EnvContext) -> list[AgentAction]:
    """What the browser plays, one call or message per action: a greeting, then the scripted
    oracle's actions for the same episode (so the greeting costs a turn: the reward is not the best)."""
    oracle = run_policy(new_episode("cart", DIFFICULTY, SEED, 0, context=context), get_policy("cart", "oracle"))
    plan = [AgentAction("Hello! Let me look into that for you.")]
    for m in oracle.messages:
        if m.role == "assistant":
            plan += [AgentAction(tool_calls=(c,)) for c in m.tool_calls] if m.tool_calls else [AgentAction(m.text)]
    return plan


@pytest.fixture(scope="module")
def demo_url(context: EnvContext) -> Iterator[str]:
    missing = _missing()
    if missing:
        pytest.skip(missing)
    page = launch(context, "127.0.0.1", None)
    try:
        yield page.local_url or ""
    finally:
        page.close()


def _fill(page: Any, name: str, value: Any) -> None:
    box = page.locator(f"#arg-{name} textarea, #arg-{name} input").first
    if isinstance(value, list):
        value = ", ".join(value)
    box.fill("" if value is None else str(value))


def _act(page: Any, action: AgentAction, step: int, episode: Episode) -> None:
    """One action through the page's forms; waits for the page to show step `step` (or the end)."""
    if action.tool_calls:
        (call,) = action.tool_calls
        page.locator(f'#tools input[value="{call.name}"]').check()
        page.locator("#tool-doc").get_by_text(call.name).first.wait_for()
        for arg in argument_fields(episode.toolkit.specs()[call.name]):
            _fill(page, arg.name, call.arguments.get(arg.name))
        page.locator("#call-tool").click()
    else:
        page.locator("#message textarea").fill(action.text)
        page.locator("#send").click()
    page.locator("#status").get_by_text("Episode over" if episode.done else f"Step {step}:").wait_for()


def test_a_cart_episode_played_in_the_browser_scores_as_the_core(context: EnvContext, demo_url: str) -> None:
    from playwright.sync_api import sync_playwright

    core = new_episode("cart", DIFFICULTY, SEED, 0, context=context, strict=False)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            hosts: set[str] = set()
            page.on("request", lambda request: hosts.add(request.url.split("/")[2]))
            start = time.perf_counter()
            page.goto(demo_url)
            page.locator("#reset").wait_for()
            print(f"page loaded in {time.perf_counter() - start:.2f}s")
            page.locator("#difficulty input").fill(str(DIFFICULTY))
            page.locator("#seed input").fill(str(SEED))
            page.locator("#reset").click()
            page.locator("#status").get_by_text("Step 0:").wait_for()
            assert core.opening in page.locator("#chat").inner_text()
            for step, action in enumerate(_plan(context), 1):
                assert not core.done
                core.step(action)
                _act(page, action, step, core)
            assert core.done, "the plan ends with the final answer"
            reward_text = page.locator("#reward").inner_text()
            hidden_text = page.locator("#hidden-goal").inner_text()
            if os.environ.get(SCREENSHOT_ENV):
                page.screenshot(path=os.environ[SCREENSHOT_ENV], full_page=True)
        finally:
            browser.close()
    reward = core.result().reward
    shown = dict(re.findall(r"^\W*(task|efficiency|hallucination|total)\W+([+-]\d+\.\d+)", reward_text, re.M))
    assert shown == {"task": f"{reward.task:+.2f}", "efficiency": f"{reward.efficiency:+.2f}",
                     "hallucination": f"{reward.hallucination:+.2f}", "total": f"{reward.total:+.3f}"}
    assert reward.success and reward.efficiency < 1, "the greeting cost a turn"
    assert core.result().explanation().splitlines()[1] in reward_text
    for target in core.problem.hidden_state()["goal"]["targets"]:
        assert target["product_id"] in hidden_text
    assert str(core.problem.hidden_state()["seed"]) in hidden_text, "the seed as it is, not rounded to a double"
    assert hosts == {demo_url.split("/")[2]}, f"the page asked other hosts: {hosts}"
