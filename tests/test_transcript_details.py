"""What a transcript shows: the cart heuristic follows a removal, a journey's answer lists every
request's answer, scripted agents report no token usage."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

from inspect_ai import eval as inspect_eval

from conftest import TEST_CATALOG_SIZE
from ecom_bench.agents import get_policy
from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, ToolCallRequest
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.scorers._answer import answer_text
from ecom_bench.scorers._markdown import from_markdown
from ecom_bench.tasks import journey

WRONG = {"product_id": "P1", "title": "Rustica Foods RusticRoast Olive Oil, Tin, Peppery",
         "variants": {"P1-v1": "16.9 fl oz", "P1-v2": "25.3 fl oz"}}
RIGHT = {"product_id": "P2", "title": "Rustica Foods HeritagePantry Olive Oil, Glass Bottle",
         "variants": {"P2-v1": "25.3 fl oz", "P2-v2": "16.9 fl oz"}}


class _FakeStore:
    """Tool results for a store whose search finds only a look-alike; the customer viewed the right one."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.adds: list[str] = []

    def __call__(self, call: ToolCallRequest) -> dict[str, Any]:
        a = call.arguments
        if call.name == "catalog_search":
            return {"results": [WRONG]}
        if call.name == "user_get_visit_history":
            return {"visits": [RIGHT]}
        if call.name == "cart_add":
            self.adds.append(a["product_id"])
            title = next(p["title"] for p in (WRONG, RIGHT) if p["product_id"] == a["product_id"])
            self.lines.append({"product_id": a["product_id"], "title": title, "quantity": a["quantity"],
                               "variant_id": a["variant_id"]})
        elif call.name == "cart_remove":
            self.lines = [ln for ln in self.lines if ln["product_id"] != a["product_id"]]
        return {"ok": True, "cart": {"lines": [dict(ln) for ln in self.lines]}}


def test_cart_heuristic_follows_a_removal_instead_of_swapping_back():
    """The customer refuses the look-alike; the heuristic removes it, adds what the customer viewed, and
    never puts the refused product back (it used to, whenever the refused product had just left the cart)."""
    store, policy = _FakeStore(), get_policy("cart", "heuristic")
    replies = iter([f"I didn't ask for the {WRONG['title']}; please remove it. I need the 16.9 fl oz one.",
                    "Looks right to me. Go ahead and check out."])
    messages = [Message("system", "You are a shopping assistant."),
                Message("user", "Hi! Please add to my cart: the Rustica Foods HeritagePantry Olive Oil (I need a "
                                "specific size).")]
    status = EpisodeStatus(turn=1, max_turns=10, turns_left=10, tool_budget=8, calls_left=8, step=0, max_steps=60)
    for _ in range(30):
        action: AgentAction = policy.act(messages, None, status)
        messages.append(Message("assistant", action.text, tool_calls=action.tool_calls))
        if any(c.name == "checkout" for c in action.tool_calls):
            break
        if action.tool_calls:
            messages += [Message("tool", json.dumps(store(c)), tool_call_id=c.id, tool_name=c.name)
                         for c in action.tool_calls]
        else:
            messages.append(Message("user", next(replies)))
    else:
        raise AssertionError("the heuristic never checked out")
    assert [(ln["product_id"], ln["variant_id"]) for ln in store.lines] == [("P2", "P2-v2")]
    assert store.adds == ["P1", "P2"]  # the refused product never came back


def test_journey_heuristic_hands_a_misrouted_request_on_instead_of_repeating_itself(context):
    """Noise hid this bundle request's cue, so a cart answered it; the customer's follow-up names a list
    of things, and the heuristic hands the request to bundle instead of saying "That's done" until the
    customer leaves (pinned before: 50 turns, total -0.59)."""
    from ecom_bench.envs.journey.agents import DONE_TEXT

    run = run_policy(new_episode("journey", 12, 0, 0, context=context), get_policy("journey", "heuristic"))
    said = [m.text for m in run.messages if m.role == "assistant" and not m.tool_calls]
    assert all(a != b for a, b in pairwise(said) if a == DONE_TEXT)
    tools = [c.name for m in run.messages for c in m.tool_calls]
    assert tools.index("submit_bundle") > tools.index("checkout")
    assert run.result.end_reason == "answered"


def test_journey_answer_lists_every_request(context):
    """`answer` shows each request's final answer (it showed only the last one)."""
    run = run_policy(new_episode("journey", 6, 0, 1, context=context), get_policy("journey", "oracle"))
    final = run.result.final_state
    shown = json.loads(answer_text(final, "journey", run.result.end_reason))
    assert len(shown) == len(final["answers"]) >= 2
    assert [a["request"] for a in shown] == [a["intent"] + 1 for a in final["answers"]]
    assert [a["answer"] for a in shown] == [a["arguments"] for a in final["answers"]]
    # an atomic env still shows its one final answer
    tracking = {"final_answer": {"order_id": "ORD-1", "status": "delivered"}, "answers": [], "cart": []}
    assert json.loads(answer_text(tracking, "tracking", "answered")) == {"order_id": "ORD-1", "status": "delivered"}
    # no final answer: said so, with how the episode ended (the cart read as a submitted answer)
    assert answer_text({"final_answer": None, "cart": []}, "cart", "user quit: patience exhausted; no final answer") \
        == "(no final answer: user quit: patience exhausted)"
    assert answer_text({"final_answer": None, "answers": []}, "journey", "stalled") == "(no final answer: stalled)"


def test_scripted_agents_report_no_token_usage_and_journey_answers_in_the_log(tmp_path):
    [log] = inspect_eval(journey(samples=1, difficulty=3, catalog_size=TEST_CATALOG_SIZE), model="ecom/oracle",
                         log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    usage = log.stats.model_usage["ecom/oracle"]
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (0, 0, 0)
    [sample] = log.samples
    shown = json.loads(from_markdown(sample.scores["total"].answer))
    assert len(shown) == len(sample.scores["total"].metadata["hidden_goal"]["goal"]["intents"])
