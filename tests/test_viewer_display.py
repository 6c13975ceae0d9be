"""What `inspect view` shows of a sample: explanations as written, one line per request, rounded
values with the exact ones kept, the env's own final answer, a pass/fail mark, a target the
model never sees. Checked on real logs (`read_eval_log`) of the scripted provider."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi
from inspect_ai.scorer import CORRECT, INCORRECT

from conftest import TEST_CATALOG_SIZE, examples
from ecom_bench.agents import get_policy
from ecom_bench.envs import get_env
from ecom_bench.episode import new_episode
from ecom_bench.providers.scripted import ScriptedModelAPI
from ecom_bench.runner import run_policy
from ecom_bench.scorers import SCORE_PARTS
from ecom_bench.scorers._markdown import from_markdown, to_markdown
from ecom_bench.scorers.reward_scorers import DISPLAY_DECIMALS
from ecom_bench.tasks import journey, policy, returns

markdown_it = pytest.importorskip("markdown_it")
dollarmath = pytest.importorskip("mdit_py_plugins.dollarmath")


# --------------------------------------------------------------- the viewer's Markdown
class _Text(HTMLParser):
    """The text a browser shows for rendered HTML (<br> as a newline), and the tags it used."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text, self.tags = "", set()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.add(tag)
        if tag == "br":
            self.text += "\n"

    def handle_data(self, data: str) -> None:
        self.text += data.replace("\n", "")  # markdown-it puts a newline after each <br>


def viewer_render(markdown: str) -> _Text:
    """Markdown as `inspect view` renders it (its dist/assets/markdownPipeline.js): `<>&'"`
    HTML-escaped first, then markdown-it (default preset, html, newlines as breaks) with
    dollar math."""
    md = markdown_it.MarkdownIt("js-default", {"breaks": True, "html": True}).use(dollarmath.dollarmath_plugin)
    shown = _Text()
    shown.feed(md.render(html.escape(markdown, quote=True)))
    return shown


def shown_as_written(text: str) -> None:
    shown = viewer_render(to_markdown(text))
    assert shown.tags <= {"p", "br"}, (text, shown.tags)  # no emphasis, list, heading, code, link, math
    # as written line for line, up to indentation (a paragraph's first line loses it, code blocks are out)
    written = [line.strip() for line in text.splitlines() if line.strip()]
    assert [line.strip() for line in shown.text.splitlines() if line.strip()] == written


def test_markdown_specials_show_as_written():
    shown_as_written("ratio 0.875, 2*0.875^4 - 1 -> task -0.50; nDCG*5 0.50 (^5)")
    shown_as_written("price <= $40 but has $41.99; rating >= 4.5 & under $50")
    shown_as_written("2 of 3 succeeded.\n1. cart: FAILED (task -1.00).\n2. returns: success\n- not a list\n# not a heading")
    shown_as_written("already_returned _not italic_ __nor bold__ `not code` ~~not struck~~ a | b [x](http://y) [l]: z")
    shown_as_written("    not a code block\n\tnor this\n---\n===")
    text = 'say "hi" \\* and \\\\ <b>not bold</b>'
    assert from_markdown(to_markdown(text)) == text


@settings(max_examples=examples(300))
@given(st.text(st.characters(min_codepoint=9, max_codepoint=126, blacklist_characters="\r\x0b\x0c"),
               max_size=80))
def test_any_ascii_text_shows_as_written(text):
    assert from_markdown(to_markdown(text)).replace("\u00a0", " ") == re.sub(r"(?m)^[ \t]+",
                                                                              lambda m: " " * len(m[0]), text)
    shown_as_written(text)


def test_json_answers_usually_pass_unchanged():
    """The scoring tab shows the answer as plain text: ordinary JSON must need no escape."""
    answer = '[{"request": 1, "tool": "report_return_outcome", "answer": {"order_id": "ORD-1", "line_id": null}}]'
    assert to_markdown(answer) == answer


# -------------------------------------------------------------------- real Inspect logs
class _RecordingAPI(ModelAPI):
    """A scripted policy (the model name) that records every text the model is given.

    `unknowntool` calls a tool the env does not have: a hard fail with no final answer.
    """

    seen: list[str] = []

    def __init__(self, model_name, base_url=None, api_key=None, config=None, **kw):
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        self.policy = None if model_name == "unknowntool" else ScriptedModelAPI(model_name)

    async def generate(self, input, tools, tool_choice, config):
        self.seen.extend(m.text for m in input)
        self.seen.extend(f"{t.name} {t.description} {t.parameters.model_dump_json()}" for t in tools)
        if self.policy is not None:
            return await self.policy.generate(input, tools, tool_choice, config)
        out = ModelOutput.for_tool_call(self.model_name, "teleport_order", {"to": "moon"})
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out


@modelapi(name="ecomrecord")
def _ecomrecord():
    return _RecordingAPI


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Real logs read back from disk: a journey and policy played by the random agent, and a
    returns episode that hard-fails before any answer."""
    out = tmp_path_factory.mktemp("viewer-logs")
    args = {"difficulty": 6, "samples": 3, "catalog_size": TEST_CATALOG_SIZE}
    _RecordingAPI.seen.clear()
    played = inspect_eval([journey(**args), policy(**args)], model="ecomrecord/random", log_dir=str(out),
                          display="none")
    failed = inspect_eval(returns(**{**args, "samples": 1}), model="ecomrecord/unknowntool", log_dir=str(out),
                          display="none")
    assert all(log.status == "success" for log in played + failed)
    return {log.eval.task.split("/")[-1]: read_eval_log(log.location) for log in played + failed}


def test_explanations_render_as_written_one_line_per_request(logs):
    for log in logs.values():
        for s in log.samples:
            for name, score in s.scores.items():
                shown_as_written(from_markdown(score.explanation))
                assert viewer_render(score.explanation).tags <= {"p", "br"}, (s.id, name)
    sample = logs["journey"].samples[0]
    requests = len(sample.scores["total"].metadata["hidden_goal"]["goal"]["intents"])
    lines = viewer_render(sample.scores["total"].explanation).text.splitlines()
    assert [line.split(":")[0] for line in lines if re.match(r"\d+\. ", line)] == [
        f"{i}. {e['env']}" for i, e in enumerate(sample.scores["total"].metadata["verdict"]["subtasks"], 1)]
    assert len([line for line in lines if re.match(r"\d+\. ", line)]) == requests >= 2
    # the policy verdict's formula keeps its star
    stars = [s for s in logs["policy"].samples if "*" in from_markdown(s.scores["task"].explanation)]
    assert all("2*0." in viewer_render(s.scores["task"].explanation).text for s in stars)


def test_values_are_rounded_for_display_and_exact_in_metadata(logs, context):
    for log in logs.values():
        for s in log.samples:
            m = s.metadata
            core = run_policy(new_episode(m["env"], 6, 0, m["index"], context=context),
                              get_policy(m["env"], "random")).result.reward if m["env"] != "returns" else None
            for part in SCORE_PARTS:
                score = s.scores[part]
                assert score.value == round(score.metadata["exact"], DISPLAY_DECIMALS), (s.id, part)
                assert len(repr(score.value).split(".")[-1]) <= DISPLAY_DECIMALS
                if core is not None:
                    assert score.metadata["exact"] == float(getattr(core, part)), (s.id, part)
    assert logs["journey"].results.scores[0].metrics["mean"].value == pytest.approx(
        sum(s.scores["total"].value for s in logs["journey"].samples) / 3)


def test_failed_samples_are_marked_and_hard_fail_shows_no_answer(logs):
    for log in logs.values():
        for s in log.samples:
            solved = s.scores["solved"].value
            assert solved == (CORRECT if s.scores["success"].value == 1.0 else INCORRECT), s.id
    [failed] = logs["returns"].samples
    total = failed.scores["total"]
    assert total.value == -1.0 and total.metadata["hard_fail"] and failed.scores["solved"].value == INCORRECT
    assert from_markdown(total.answer) == f"(no final answer: {total.metadata['end_reason']})"
    assert "cart" not in total.answer
    for s in logs["policy"].samples:  # an answered sample shows what went to the final tool
        assert from_markdown(s.scores["total"].answer) == json.dumps(
            s.scores["total"].metadata["final_state"]["final_answer"], ensure_ascii=False)


def test_target_says_what_success_needs_and_the_model_never_sees_it(logs):
    for log in logs.values():
        for s in log.samples:
            assert s.target.startswith("Solved when") and get_env(s.metadata["env"]).summary in s.target
            goal = s.scores["total"].metadata["hidden_goal"]
            assert not any(v in s.target for v in re.findall(r"[A-Z]{1,4}-?\d{4,}", str(goal)))
    seen = "\n".join(_RecordingAPI.seen)
    assert seen and "Solved when" not in seen and "hidden goal" not in seen
