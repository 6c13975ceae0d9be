"""E_RETURN through the core: store rule, generator, user, verifier, policies."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from conftest import call, say

from ecom_bench.agents.base import get_policy
from ecom_bench.difficulty import Difficulty
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.users import UserAct
from ecom_bench.domains.orders.book import find_order, OrderBook
from ecom_bench.domains.orders.eligibility import check_eligibility


def episode(context, d, index=0, seed=0):
    return new_episode("returns", d, seed, index, context=context)


def _find(context, d, predicate, limit=300):
    for i in range(limit):
        ep = episode(context, d, i)
        if predicate(ep):
            return ep
    pytest.fail("no episode matched")


def _target(ep):
    g = ep.problem.goal
    order = find_order(ep.world, g.order_id)
    return g, order, order.line(g.line_id)


def test_oracle_solves_every_level(context):
    oracle = get_policy("returns", "oracle")
    for d in range(16):
        for i in range(3):
            res = run_policy(episode(context, d, i), oracle).result
            assert res.reward.success and res.reward.task == pytest.approx(1.0), res.explanation()
            assert res.reward.hallucination == 0.0


def test_random_rarely_succeeds_and_why(context):
    random_ = get_policy("returns", "random")
    results = [run_policy(episode(context, d, i), random_).result for d in (3, 6, 9, 12) for i in range(15)]
    assert sum(r.reward.success for r in results) / len(results) <= 0.05
    assert any("wrong line" in r.verdict.explanation and r.verdict.details["act"] == -1 for r in results)


def test_heuristic_resolves_descriptions_at_every_level(context):
    # Asks one plain question when the reference is vague and reads the answer (titles, brands, dates,
    # notes, variants, ordinals): every description is unique, so it stays good at d = 12.
    heuristic = get_policy("returns", "heuristic")

    def rate(d):
        return sum(run_policy(episode(context, d, i), heuristic).result.reward.success for i in range(20)) / 20
    easy, hard = rate(0), rate(12)
    assert easy >= 0.8 and hard >= 0.8


def test_history_follows_h_orders(context):
    for d in (0, 4, 12):
        ep = episode(context, d)
        g, order, line = _target(ep)
        assert g.n_recent == Difficulty.from_level(d).n_orders
        leaf_orders = [o for o in ep.world.state(OrderBook).orders for ln in o.lines if ep.world.product(ln.product_id).leaf_category == g.leaf]
        assert len(leaf_orders) == g.n_recent and len(ep.world.state(OrderBook).orders) >= 30


def test_edge_cases_follow_p_edge_and_the_store_rule(context):
    # p_edge = 0.7·σ((d−4)/1.5): 0.045 at d=0, 0.70 at d=12
    assert sum(bool(episode(context, 0, i).problem.goal.edge) for i in range(30)) <= 4
    edges, n_edge = {}, 0
    for i in range(60):
        ep = episode(context, 12, i)
        g, order, line = _target(ep)
        if g.edge:
            n_edge += 1
            edges.setdefault(g.edge, ep)
        assert check_eligibility(ep.world, order, line).eligible == g.eligible
    assert 30 <= n_edge <= 55 and len(edges) >= 4
    for edge, ep in edges.items():
        g, order, line = _target(ep)
        days = (ep.world.now.date() - order.delivered_at.date()).days
        e = check_eligibility(ep.world, order, line)
        if edge == "last_day":
            assert e.eligible and days == e.window_days
        if edge == "day_after_last":
            assert not e.eligible and days == e.window_days + 1 and "window" in e.reason
        if edge == "final_sale":
            assert not e.eligible and e.window_days is None


def test_window_boundary_is_inclusive(context):
    ep = _find(context, 0, lambda e: e.problem.goal.eligible)
    g, order, line = _target(ep)
    window = check_eligibility(ep.world, order, line).window_days
    order.delivered_at = ep.world.now - timedelta(days=window)
    assert check_eligibility(ep.world, order, line).eligible
    order.delivered_at = ep.world.now - timedelta(days=window + 1)
    e = check_eligibility(ep.world, order, line)
    assert not e.eligible and f"{window}-day return window ended" in e.reason
    out = call(ep, "return_initiate", {"order_id": g.order_id, "line_id": g.line_id, "reason": "defective",
                                           "method": "mail"})
    assert out.error and "cannot be returned or exchanged" in out.text and not [r for r in ep.world.state(OrderBook).returns if r.intent is not None]


def test_ineligible_target_wants_not_eligible(context):
    ep = _find(context, 12, lambda e: not e.problem.goal.eligible and e.problem.goal.replacement is None)
    g = ep.problem.goal
    call(ep, "order_get", {"order_id": g.order_id})
    call(ep, "report_return_outcome", {"order_id": g.order_id, "line_id": g.line_id, "outcome": "return_started"})
    res = ep.result()
    assert res.verdict.details["act"] == -1 and res.reward.task == pytest.approx(0.1)
    assert "not eligible" in res.verdict.explanation


def test_wrong_line_return_is_penalised_and_corrected(context):
    ep = _find(context, 4, lambda e: e.problem.goal.kind == "return" and e.problem.goal.replacement is None)
    g = ep.problem.goal
    other = next(o for o in ep.world.state(OrderBook).orders if o.order_id != g.order_id and o.status.value == "delivered"
                 and check_eligibility(ep.world, o, o.lines[0]).eligible)
    call(ep, "order_get", {"order_id": other.order_id})
    out = call(ep, "return_initiate", {"order_id": other.order_id, "line_id": other.lines[0].line_id,
                                           "reason": g.reason, "method": g.method})
    assert not out.error
    reply = say(ep, "I've started the return.")
    assert reply.act is UserAct.CORRECT and "not the item I meant" in reply.text
    call(ep, "report_return_outcome", {"order_id": other.order_id, "line_id": other.lines[0].line_id,
                                           "outcome": "return_started"})
    res = ep.result()
    assert res.verdict.details["identify"] == -1 and res.verdict.details["act"] == -1
    assert res.reward.task == pytest.approx(-0.8)


def test_wrong_reason_scores_zero_for_the_action(context):
    ep = _find(context, 2, lambda e: e.problem.goal.kind == "return" and e.problem.goal.eligible
               and e.problem.goal.replacement is None)
    g = ep.problem.goal
    reason = "changed_mind" if g.reason != "changed_mind" else "defective"
    call(ep, "order_get", {"order_id": g.order_id})
    call(ep, "return_initiate", {"order_id": g.order_id, "line_id": g.line_id, "reason": reason,
                                     "method": g.method})
    call(ep, "report_return_outcome", {"order_id": g.order_id, "line_id": g.line_id, "outcome": "return_started"})
    res = ep.result()
    assert res.verdict.details["act"] == 0 and res.reward.task == pytest.approx(0.55) and not res.reward.success
    assert f"reason {reason} (customer: {g.reason})" in res.verdict.explanation


@pytest.mark.parametrize("right_method", [True, False])
def test_a_return_with_the_wrong_method_is_objected_to_not_thanked(context, right_method):
    """The customer sees their returns page: the right item sent back another way than they asked is a
    mistake they name (in their own words), never "Great, thank you!", and it scores b = 0."""
    ep = _find(context, 2, lambda e: e.problem.goal.kind == "return" and e.problem.goal.eligible
               and e.problem.goal.replacement is None)
    g = ep.problem.goal
    method = g.method if right_method else next(m for m in ("pickup", "drop_off", "mail") if m != g.method)
    call(ep, "order_get", {"order_id": g.order_id})
    out = call(ep, "return_initiate", {"order_id": g.order_id, "line_id": g.line_id, "reason": g.reason,
                                           "method": method})
    assert not out.error, out.text
    reply = say(ep, "I've started the return for you.")
    if right_method:
        assert reply.act is UserAct.CONFIRM
        return
    assert reply.act is UserAct.CORRECT and not reply.excused and "thank" not in reply.text.lower()
    said = {"pickup": "pick", "drop_off": "drop", "mail": "mail"}  # their own method words (never noised)
    assert said[g.method] in reply.text.lower() and said[method] not in reply.text.lower()
    later = say(ep, "Is there anything else I can help with?")
    assert later.act is not UserAct.CONFIRM
    call(ep, "report_return_outcome", {"order_id": g.order_id, "line_id": g.line_id, "outcome": "return_started"})
    res = ep.result()
    assert res.verdict.details["act"] == 0 and not res.reward.success
    assert f"method {method} (customer: {g.method})" in res.verdict.explanation


def test_replacement_quality(context):
    ep = _find(context, 3, lambda e: e.problem.goal.replacement is not None and e.problem.goal.eligible)
    g = ep.problem.goal
    call(ep, "order_get", {"order_id": g.order_id})
    call(ep, "return_initiate", {"order_id": g.order_id, "line_id": g.line_id, "reason": g.reason,
                                     "method": g.method})
    call(ep, "report_return_outcome", {"order_id": g.order_id, "line_id": g.line_id, "outcome": "return_started",
                                           "replacement_product_id": g.product_id})  # the returned product itself
    res = ep.result()
    assert res.verdict.details["replacement"] == -1 and "it is the returned product" in res.verdict.explanation
    assert res.reward.task == pytest.approx(0.8)
    # Unsolicited replacement
    ep = _find(context, 3, lambda e: e.problem.goal.replacement is None and e.problem.goal.eligible
               and e.problem.goal.kind == "return")
    g = ep.problem.goal
    call(ep, "order_get", {"order_id": g.order_id})
    call(ep, "return_initiate", {"order_id": g.order_id, "line_id": g.line_id, "reason": g.reason,
                                     "method": g.method})
    call(ep, "report_return_outcome", {"order_id": g.order_id, "line_id": g.line_id, "outcome": "return_started",
                                           "replacement_product_id": g.product_id})
    assert ep.result().verdict.details["replacement"] == -1


def test_exchange_needs_the_wanted_variant(context):
    ep = _find(context, 6, lambda e: e.problem.goal.kind == "exchange" and e.problem.goal.eligible)
    g, order, line = _target(ep)
    call(ep, "order_get", {"order_id": g.order_id})
    call(ep, "catalog_get_variants", {"product_id": g.product_id})
    out = call(ep, "return_exchange", {"order_id": g.order_id, "line_id": g.line_id, "new_variant_id": line.variant_id,
                                           "reason": g.reason, "method": g.method})
    assert out.error and "already ordered" in out.text
    call(ep, "return_initiate", {"order_id": g.order_id, "line_id": g.line_id, "reason": g.reason,
                                     "method": g.method})
    call(ep, "report_return_outcome", {"order_id": g.order_id, "line_id": g.line_id, "outcome": "return_started"})
    res = ep.result()
    assert res.verdict.details["act"] == 0 and "a return instead of an exchange" in res.verdict.explanation


def test_tool_errors_are_readable(context):
    ep = episode(context, 14)  # B_tool = 8: room for every bad call in one turn
    g = ep.problem.goal
    before = list(ep.world.state(OrderBook).returns)  # returns made before the conversation (edge cases of any order)
    cases = [
        ("order_get", {"order_id": "ORD-000000"}, "No order with id 'ORD-000000'"),
        ("return_check_eligibility", {"order_id": g.order_id, "line_id": "ORD-000000-L1"}, "is not part of order"),
        ("return_initiate", {"order_id": g.order_id, "line_id": g.line_id, "reason": "meh", "method": "mail"},
         "Unknown return reason 'meh'; use one of: defective"),
        ("return_initiate", {"order_id": g.order_id, "line_id": g.line_id, "reason": "damaged", "method": "pigeon"},
         "Unknown return method 'pigeon'; use one of: pickup"),
        ("report_return_outcome", {"order_id": g.order_id, "line_id": g.line_id, "outcome": "done"},
         "Unknown outcome 'done'"),
    ]
    for name, args, message in cases:
        out = call(ep, name, args)
        assert out.error and message in out.text, out.text
    assert not ep.done and ep.world.state(OrderBook).returns == before


def test_already_returned_line_is_refused(context):
    ep = _find(context, 14, lambda e: e.problem.goal.edge == "already_returned")
    g = ep.problem.goal
    out = call(ep, "return_initiate", {"order_id": g.order_id, "line_id": g.line_id, "reason": g.reason,
                                           "method": g.method})
    assert out.error and "already has a return" in out.text


def test_slots_are_withheld_and_revealed_one_by_one(context):
    def hidden(d):
        return sum(len([s for s, t in episode(context, d, i).problem.user.disclosure().items() if not t])
                   for i in range(20))
    assert hidden(0) < hidden(9)
    ep = _find(context, 9, lambda e: not e.problem.user.disclosure()["reason"]
               and not e.problem.user.disclosure()["method"])
    reply = say(ep, "What is the reason for the return?")
    assert reply.act is UserAct.CLARIFY and reply.revealed == ("reason",)
    reply = say(ep, "How would you like to send it back: pickup, drop-off or mail?")
    assert reply.revealed == ("method",)


def test_same_seed_same_task_and_transcript(context):
    heuristic = get_policy("returns", "heuristic")
    a, b = run_policy(episode(context, 7, 1), heuristic), run_policy(episode(context, 7, 1), heuristic)
    assert a.messages == b.messages and a.result.reward == b.result.reward


def test_no_placeholder_reaches_the_user(context):
    heuristic = get_policy("returns", "heuristic")
    for d in (0, 5, 10, 15):
        for i in range(4):
            for m in run_policy(episode(context, d, i), heuristic).messages:
                if m.role == "user":
                    assert not re.search(r"[{}]|None\b", m.text), m.text


def test_group_products_are_distinct_rows_of_the_pool_sharing_the_brand_as_often_as_asked(context):
    """The lazy group draw: n distinct rows of the pool, the anchor first; with share 1 every
    pick shares the anchor's brand while one is left, with share 0 about as often as the pool does."""
    import random

    import numpy as np

    from ecom_bench.catalog.lookups import catalog_lookups
    from ecom_bench.domains.orders.history import _group_products

    catalog = context.catalog
    index = catalog_lookups(catalog)
    brand = index.brand_code
    leaf = max(index.leaf_rows, key=lambda lf: len(index.leaf_rows[lf]))
    pool = index.leaf(leaf)
    rng = random.Random(0)
    for n in (1, 4, 9, len(pool) + 3):
        for share in (0.0, 1.0):
            picks = _group_products(rng, catalog, pool, n, share)
            assert len(picks) == min(n, len(pool)) == len(set(picks)) and set(picks) <= set(pool.tolist())
            if share == 1.0:
                same = np.count_nonzero(brand[pool] == brand[picks[0]])
                assert sum(brand[r] == brand[picks[0]] for r in picks) == min(len(picks), same)
    small = pool[:5]
    assert sorted(_group_products(rng, catalog, small, 9, 0.5)) == sorted(small.tolist())
