"""E_CART under attack: the customer's feedback is not an oracle, plain questions are answered
(padding: tests/test_exploit_soundness.py)."""

from __future__ import annotations

import json
import re

import pytest

from conftest import call, questions, say, withheld_slots
from ecom_bench.conversation import AgentAction, ToolCallRequest
from ecom_bench.conversation import tool_results
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.users import UserAct
from ecom_bench.users.understanding import is_request
from red_team.exploits import make_exploit

def episode(context, d, index=0):
    return new_episode("cart", d, 0, index, context=context)


def history(ep) -> list[dict]:
    return json.loads(call(ep, "user_get_visit_history", {}).text)["visits"]


# ------------------------------------------------------------------ feedback is not an oracle
def test_a_messy_cart_gets_one_general_objection_and_costs_patience(context):
    ep = episode(context, 9)
    visits = history(ep)
    for v in visits[: ep.difficulty.tool_budget - 1]:
        call(ep, "cart_add", {"product_id": v["product_id"], "variant_id": next(iter(v["variants"]), None)})
    targets = ep.problem.goal.targets
    assert sum(1 for v in visits[: ep.difficulty.tool_budget - 1]
               if ep.problem.goal.target(v["product_id"]) is None) >= 2
    reply = say(ep, "I've added the items. Is the cart right?")
    assert reply.act is UserAct.CORRECT and not reply.revealed
    # Nothing itemised: no product named, no variant value, no quantity, whatever was right.
    for v in visits:
        assert v["title"].split(",")[0].lower() not in reply.text.lower()
    for t in targets:
        assert t.short_name.lower() not in reply.text.lower()
        assert t.variant_value is None or not re.search(rf"\b{re.escape(t.variant_value)}\b", reply.text)
    assert not re.search(r"\d", reply.text)
    # Still a mess at the next message: the customer leaves.
    reply = say(ep, "Is there anything else you need?")
    assert reply.act is UserAct.QUIT and ep.done


def test_a_single_stray_item_is_named_and_a_second_objection_ends_it(context):
    ep = episode(context, 6)
    stray = next(v for v in history(ep) if ep.problem.goal.target(v["product_id"]) is None)
    assert not call(ep, "cart_add", {"product_id": stray["product_id"],
                                         "variant_id": next(iter(stray["variants"]), None)}).error
    reply = say(ep, "Added it.")
    assert reply.act is UserAct.CORRECT and "didn't ask for" in reply.text
    assert ep.problem.user.strikes == 1
    reply = say(ep, "Added it.")
    assert reply.act is UserAct.QUIT


def test_an_honest_variant_mistake_is_still_corrected_without_a_strike(context):
    ep = next(e for e in (episode(context, 6, i) for i in range(50)) if e.problem.goal.targets[0].variant_required)
    t = ep.problem.goal.targets[0]
    wrong = next(v for v in ep.world.product(t.product_id).variants if v.id != t.variant_id)
    call(ep, "cart_add", {"product_id": t.product_id, "variant_id": wrong.id})
    reply = say(ep, "I've added it.")
    assert reply.act is UserAct.CORRECT and t.variant_value in reply.text
    assert ep.problem.user.strikes == 0


def test_a_slip_named_in_the_agents_own_summary_is_still_corrected_without_a_strike(context):
    """Ninth red team, fairness: a summary naming the wrong variant the agent added ("I've added the
    X (L); shall I check out?") read as a rejected proposal and cost patience; it is the cart's slip."""
    ep = next(e for e in (episode(context, d, i) for d in (3, 6) for i in range(80))
              if e.problem.goal.targets[0].variant_required and not e.problem.user.withheld())
    t = ep.problem.goal.targets[0]
    wrong = next(v for v in ep.world.product(t.product_id).variants if v.id != t.variant_id)
    call(ep, "cart_add", {"product_id": t.product_id, "variant_id": wrong.id})
    reply = say(ep, f"I've added the {t.short_name} ({wrong.value}). Shall I check out?")
    assert reply.act is UserAct.CORRECT and ep.problem.user.strikes == 0, reply.text
    assert f"is the {wrong.value} one" in reply.text  # the cart's correction, not a rejected proposal


class ProbeOneByOne:
    """Red team: never read the request; add one viewed product per turn, drop it if the customer
    says it was not asked for, keep it otherwise; apply nothing else; check out on the last turn."""

    name = "probe_one_by_one"
    reads_hidden_goal = False

    def act(self, messages, hidden, status):
        n = len(messages)
        system = messages[0].text
        patience = int(re.search(r"patience is (\d+) turns", system).group(1))
        results = tool_results(messages)
        visits = next((json.loads(r.text)["visits"] for c, r in results if c.name == "user_get_visit_history"), None)
        turn = 1 + sum(1 for m in messages if m.role == "assistant" and not m.tool_calls)
        if visits is None:
            return AgentAction(tool_calls=(ToolCallRequest("user_get_visit_history", {}, f"h{n}"),))
        if turn >= patience:
            return AgentAction(tool_calls=(ToolCallRequest("checkout", {}, f"c{n}"),))
        added = [c.arguments["product_id"] for c, _ in results if c.name == "cart_add"]
        removed = {c.arguments["product_id"] for c, _ in results if c.name == "cart_remove"}
        last = messages[-1]
        if last.role == "user" and added and added[-1] not in removed and "didn't ask" in last.text:
            return AgentAction(tool_calls=(ToolCallRequest("cart_remove", {"product_id": added[-1]}, f"r{n}"),))
        if last.role == "tool" or len(added) >= len(visits):
            return AgentAction(text="Is the cart right?")
        v = visits[len(added)]
        return AgentAction(tool_calls=(ToolCallRequest(
            "cart_add", {"product_id": v["product_id"], "variant_id": next(iter(v["variants"]), None)}, f"a{n}"),))


@pytest.mark.parametrize("d", [3, 6, 9, 12])
def test_strategies_that_ignore_the_request_do_not_converge(context, d):
    for policy in (make_exploit("cart_corrections", "cart"), ProbeOneByOne()):
        wins = sum(run_policy(episode(context, d, i), policy).result.reward.success for i in range(25))
        assert wins <= 2, (policy.name, d, wins)


# ------------------------------------------------------------------ plain questions
@pytest.mark.parametrize("intent", ["cart_variant", "cart_quantity", "anything_else", "requirements"])
def test_any_plain_question_discloses_a_withheld_detail(context, intent):
    indices = [i for i in range(30) if withheld_slots(episode(context, 9, i))][:4]
    for question in questions(intent):
        if not is_request(question):  # the shared reader's gap (users/understanding.py), not this env's
            continue
        for i in indices:
            ep = episode(context, 9, i)
            before = set(withheld_slots(ep))
            reply = say(ep, question)
            assert reply.act is UserAct.CLARIFY and reply.excused, (question, reply)
            assert reply.revealed and set(reply.revealed) <= before, (question, reply)
            for kind in ("variant", "quantity"):
                if intent == f"cart_{kind}" and any(s.endswith(kind) for s in before):
                    assert any(s.endswith(kind) for s in reply.revealed), (question, reply)


def test_a_question_with_nothing_withheld_is_charged(context):
    ep = next(e for e in (episode(context, 1, i) for i in range(50)) if not withheld_slots(e))
    reply = say(ep, "Is there anything else you need?")
    assert reply.act is UserAct.CONTINUE and not reply.excused


