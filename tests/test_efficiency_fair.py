"""r_eff and r_hall judge the agent's own work, not the environment's rules.

Efficiency: the turns the tool budget B_tool forces on the reference solution (T_min, from
the hidden goal) are not charged, so the oracle reaches the best r_total at every
difficulty; turns beyond T_min are charged, and filling them with tool calls changes nothing.
Hallucination: an id a tool named in an error message counts as retrieved, a call the tools
refused acted on nothing, and no error message launders an id the agent made up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from conftest import call, say

from ecom_bench.agents.base import get_policy
from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, Policy, ToolCallRequest
from ecom_bench.episode import new_episode
from ecom_bench.rewards import compose, efficiency
from ecom_bench.runner import run_policy
from ecom_bench.domains.orders.book import find_order

ENVS = ("cart", "discovery", "substitution", "returns", "tracking", "policy", "bundle", "journey")


def _find(context, env, d, predicate, limit=300):  # noqa: ANN001, ANN202
    for i in range(limit):
        ep = new_episode(env, d, 0, i, context=context)
        if predicate(ep):
            return ep
    pytest.fail("no episode matched")


# ------------------------------------------------------------------------------ efficiency
@pytest.mark.parametrize("env", ENVS)
def test_the_oracle_reaches_the_best_total_at_every_difficulty(context, env):
    oracle = get_policy(env, "oracle")
    for d in range(16):
        for i in range(2):
            ep = new_episode(env, d, 0, i, context=context)
            res = run_policy(ep, oracle).result
            assert max(1, res.turns - res.user_caused_turns) <= res.min_turns <= ep.difficulty.max_turns
            r = res.reward
            assert r.success and r.efficiency == 1.0 and r.hallucination == 0.0, res.explanation()
            assert r.total == pytest.approx(compose(r.task, 1.0, 0.0))


def test_turns_the_budget_forces_are_not_charged(context):
    # d = 0: B_tool = 1, so the visit history and the cart_add take a turn each (T_min = 2 of T_max = 4)
    ep = new_episode("cart", 0, 0, 0, context=context)
    assert ep.difficulty.tool_budget == 1 and len(ep.problem.goal.targets) == 1
    res = run_policy(ep, get_policy("cart", "oracle")).result
    assert res.turns == res.min_turns == 2
    assert res.reward.efficiency == 1.0 and res.reward.total == pytest.approx(0.90)
    assert efficiency(2, 0, 4) == pytest.approx(1 / 3)  # the reference formula (T_min = 1) charged that turn


@dataclass
class WastesTheFirstTurn:
    """Spends its first turn on nothing (`calls` budgeted calls that change nothing, then a holding
    message), then plays `inner` as if the conversation started there (the oracle plans from the
    messages it sent; the turn it is in and the calls left come from the status)."""

    inner: Policy
    calls: int
    name: str = "wastes_the_first_turn"

    @property
    def reads_hidden_goal(self) -> bool:
        return self.inner.reads_hidden_goal

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        own = [i for i, m in enumerate(messages) if m.role == "assistant"]
        if len(own) < self.calls:
            return AgentAction(tool_calls=(ToolCallRequest("cart_view", {}, id=f"wasted-{len(own)}"),))
        if len(own) == self.calls:
            return AgentAction("One moment please.")
        assert not messages[own[self.calls]].tool_calls  # the holding message
        return self.inner.act(messages[:2] + messages[own[self.calls] + 2:], hidden, status)


@pytest.mark.parametrize("padded", [False, True])
def test_wasted_turns_are_charged_and_filling_them_with_calls_buys_nothing(context, padded):
    ep = new_episode("cart", 1, 0, 0, context=context)  # T_min = 2, T_max = 4, B_tool = 1
    need = ep.env.min_turns(ep.problem.task, ep.difficulty.tool_budget)
    # padded: the whole first turn's budget, on nothing useful
    run = run_policy(ep, WastesTheFirstTurn(get_policy("cart", "oracle"), ep.difficulty.tool_budget if padded else 0))
    assert not any(m.error for m in run.messages if m.tool_call_id and m.tool_call_id.startswith("wasted-"))
    res = run.result
    assert res.reward.success and res.min_turns == need == 2
    assert res.turns == 3 and res.user_caused_turns == 0
    assert res.reward.efficiency == pytest.approx(0.0)  # one wasted turn of the two spare: 1 − 2·1/2


# --------------------------------------------------------------------------- hallucination
def test_an_id_named_in_an_error_counts_as_retrieved_and_a_refused_answer_acts_on_nothing(context):
    ep = _find(context, "returns", 3, lambda e: e.problem.goal.eligible and e.problem.goal.kind == "return"
               and e.problem.goal.replacement is None)
    g = ep.problem.goal
    assert not call(ep, "order_list", {}).error  # order ids, but no line ids
    assert g.line_id not in ep.world.seen_ids
    wrong = {"order_id": g.order_id, "line_id": f"{g.order_id}-L99", "outcome": "return_started"}
    refused = call(ep, "report_return_outcome", wrong)
    assert refused.error and "its lines are: " in refused.text and g.line_id in refused.text
    say(ep, "Let me start that return for you.")
    started = call(ep, "return_initiate", {"order_id": g.order_id, "line_id": g.line_id,
                                               "reason": g.reason, "method": g.method})
    assert not started.error, started.text
    assert not call(ep, "report_return_outcome", {**wrong, "line_id": g.line_id}).error
    res = ep.result()
    assert res.invented_ids == [] and res.reward.hallucination == 0.0, res.explanation()
    assert f"{g.order_id}-L99" not in ep.world.referenced_ids


def test_a_refused_final_answer_does_not_count_as_acted_on(context):
    ep = new_episode("tracking", 3, 0, 0, context=context)
    g = ep.problem.goal
    unknown = next(f"ORD-{n:06d}" for n in range(100000, 999999) if find_order(ep.world, f"ORD-{n:06d}") is None)
    assert not call(ep, "order_list", {}).error
    assert call(ep, "report_order_status", {"order_id": unknown, "status": g.status}).error
    assert not call(ep, "report_order_status", {"order_id": g.order_id, "status": g.status}).error
    res = ep.result()
    assert res.reward.success and res.reward.hallucination == 0.0 and res.invented_ids == []


@pytest.mark.parametrize(("env", "tool", "args"), [
    ("discovery", "recommend_products", lambda pid: {"product_ids": [pid, pid]}),  # "Duplicate product ids: ..."
    ("bundle", "submit_bundle", lambda pid: {"product_ids": [pid, pid]}),  # "Product ... is listed twice"
    ("cart", "cart_remove", lambda pid: {"product_id": pid}),  # "The cart has no line for ..."
])
def test_an_error_that_echoes_the_agent_s_id_does_not_launder_it(context, env, tool, args):
    ep = new_episode(env, 3, 0, 0, context=context)
    guessed = next(p.id for p in context.catalog.products if ep.world.in_stock(p))  # real, never shown
    refused = call(ep, tool, args(guessed))
    assert refused.error and guessed in refused.text
    assert guessed not in ep.world.seen_ids and not ep.world.referenced_ids
    final = {"discovery": ("recommend_products", {"product_ids": [guessed]}),
             "bundle": ("submit_bundle", {"product_ids": [guessed]}),
             "cart": ("cart_add", {"product_id": guessed, "variant_id": next(
                 (v.id for v in context.catalog.get(guessed).variants), None)})}[env]
    assert not call(ep, *final).error
    res = ep.result()
    assert res.invented_ids[0] == guessed and res.reward.hallucination == -1.0  # (and its variant, in a cart)
