"""E_TRACK through the core: history generator, references, user, verifier, policies."""

from __future__ import annotations

import json
import re

import pytest
from conftest import call, say

from ecom_bench.agents.base import get_policy
from ecom_bench.difficulty import Difficulty
from ecom_bench.domains.orders.book import OrderBook
from ecom_bench.envs import get_env
from ecom_bench.envs.base import new_world
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.users import UserAct
from ecom_bench.domains.orders.records import OrderStatus
from ecom_bench.domains.orders.references import OrderReference, RefKind, matching_lines


def episode(context, d, index=0, seed=0):
    return new_episode("tracking", d, seed, index, context=context)


def _find(context, d, predicate, limit=200):
    for i in range(limit):
        ep = episode(context, d, i)
        if predicate(ep):
            return ep
    pytest.fail("no episode matched")


def test_oracle_solves_every_level(context):
    oracle = get_policy("tracking", "oracle")
    for d in range(16):
        for i in range(3):
            res = run_policy(episode(context, d, i), oracle).result
            assert res.reward.success and res.reward.task == 1.0, res.explanation()
            assert res.reward.hallucination == 0.0 and res.turns == 1


def test_random_rarely_succeeds_and_why(context):
    random_ = get_policy("tracking", "random")
    results = [run_policy(episode(context, d, i), random_).result for d in (3, 6, 9, 12) for i in range(15)]
    assert sum(r.reward.success for r in results) / len(results) <= 0.05
    wrong = next(r for r in results if not r.verdict.details["order_right"])
    assert "wrong (meant" in wrong.verdict.explanation and wrong.reward.task <= 0.0


def test_heuristic_resolves_descriptions_at_every_level(context):
    # Asks one plain question when the reference is vague and reads the answer (titles, brands, dates,
    # notes, variants, ordinals): every description is unique, so it stays good at d = 12.
    heuristic = get_policy("tracking", "heuristic")

    def rate(d):
        return sum(run_policy(episode(context, d, i), heuristic).result.reward.success for i in range(25)) / 25
    easy, hard = rate(0), rate(12)
    assert easy >= 0.9 and hard >= 0.8


def test_history_size_follows_h_orders_and_stays_long(context):
    for d in (0, 3, 6, 12):
        ep = episode(context, d)
        goal, world = ep.problem.goal, ep.world
        assert goal.n_recent == Difficulty.from_level(d).n_orders
        assert len(world.state(OrderBook).orders) >= 30  # background: keeps a random pick rare even when H_orders is 2
        assert len({o.order_id for o in world.state(OrderBook).orders}) == len(world.state(OrderBook).orders)
        target = next(o for o in world.state(OrderBook).orders if o.order_id == goal.order_id)
        leaf = world.product(target.lines[0].product_id).leaf_category
        same_leaf = [o for o in world.state(OrderBook).orders for ln in o.lines if world.product(ln.product_id).leaf_category == leaf]
        assert len(same_leaf) == goal.n_recent  # the confusable set is exactly H_orders(d)


def test_reference_always_identifies_the_target(context):
    kinds = set()
    for d in (2, 6, 10, 14):
        for i in range(10):
            ep = episode(context, d, i)
            g = ep.problem.goal
            ref = OrderReference(RefKind(g.reference["kind"]), g.reference["leaf"], g.reference["value"])
            kinds.add(ref.kind)
            assert [o.order_id for o, _ in matching_lines(ep.world.state(OrderBook).orders, ref, ep.world.catalog)] == [g.order_id]
    assert {RefKind.ORDER_ID, RefKind.TITLE, RefKind.DATE, RefKind.ORDINAL} <= kinds


def test_statuses_are_consistent_with_dates(context):
    for i in range(5):
        world = episode(context, 8, i).world
        now = world.now
        for o in world.state(OrderBook).orders:
            assert o.placed_at <= now
            if o.status is OrderStatus.DELIVERED:
                assert o.delivered_at is not None and o.placed_at < o.delivered_at <= now and o.eta is None
            else:
                assert o.delivered_at is None
            if o.status in (OrderStatus.CONFIRMED, OrderStatus.SHIPPED, OrderStatus.IN_TRANSIT):
                assert o.eta is not None and o.eta > now.date()
            assert (o.tracking_number is None) == (o.status in (OrderStatus.CONFIRMED, OrderStatus.CANCELLED))


def test_p_missing_withholds_the_reference_and_asking_reveals_it(context):
    def hidden(d):
        return sum(not episode(context, d, i).problem.user.disclosure()["order"] for i in range(30))
    assert hidden(0) <= 6 < hidden(12)
    ep = _find(context, 12, lambda e: not e.problem.user.disclosure()["order"]
               and e.problem.goal.reference["kind"] != "order_id")
    g = ep.problem.goal
    assert g.reference_text not in ep.opening
    reply = say(ep, "Which order do you mean?")
    assert reply.act is UserAct.CLARIFY and reply.revealed == ("order",)
    assert ep.problem.user.disclosure()["order"]


def test_a_customer_who_gave_the_id_corrects_a_wrong_one_and_loses_patience(context):
    ep = _find(context, 4, lambda e: e.problem.goal.reference["kind"] == "order_id")
    g = ep.problem.goal
    others = [o.order_id for o in ep.world.state(OrderBook).orders if o.order_id != g.order_id]
    reply = say(ep, f"Your order {others[0]} is on its way.")
    assert reply.act is UserAct.CORRECT and g.order_id in reply.text and "not my order" in reply.text
    reply = say(ep, f"Is it {others[1]}?")  # a question is no mistake: they repeat their id
    assert reply.act is not UserAct.CORRECT and g.order_id in reply.text and not reply.ends_episode
    reply = say(ep, f"Your order {others[2]} was delivered.")  # the second mistake
    assert reply.act is UserAct.QUIT and reply.ends_episode


def test_a_customer_who_described_the_order_cannot_tell_ids_apart(context):
    """"Is it A, B or C?" is no oracle: the reply is the same whether or not the target is named."""
    def ep_():
        return _find(context, 6, lambda e: e.problem.goal.reference["kind"] != "order_id")
    g = ep_().problem.goal
    group = [o.order_id for o in ep_().world.state(OrderBook).orders if o.group_leaf == g.reference["leaf"]]
    wrong = [oid for oid in group if oid != g.order_id]
    replies = []
    for named in (wrong[:2] + [g.order_id], wrong[:3], [g.order_id], wrong[:1]):
        ep = ep_()
        question = say(ep, "Is it " + " or ".join(named) + "?")
        ep = ep_()
        statement = say(ep, f"Your order {named[0]} has shipped.")
        replies.append((question.text, question.act, statement.text, statement.act))
    assert len(set(replies)) == 1, replies
    assert g.order_id not in replies[0][0] and g.reference_text in replies[0][0]


@pytest.mark.parametrize("order_right,status_right,r_task", [(True, True, 1.0), (True, False, 0.0),
                                                            (False, True, 0.0), (False, False, -1.0)])
def test_verifier_scores_each_half(context, order_right, status_right, r_task):
    ep = episode(context, 5)
    g = ep.problem.goal
    other = next(o for o in ep.world.state(OrderBook).orders if o.order_id != g.order_id)
    wrong_status = next(s.value for s in OrderStatus if s.value != g.status)
    call(ep, "order_list", {})
    out = call(ep, "report_order_status", {"order_id": g.order_id if order_right else other.order_id,
                                               "status": g.status if status_right else wrong_status})
    assert not out.error and "recorded" in out.text and "right" not in out.text
    res = ep.result()
    assert res.reward.task == r_task and res.reward.success == (r_task == 1.0)
    if not status_right:
        assert f"wrong (is {g.status})" in res.verdict.explanation


def test_tool_errors_are_readable(context):
    ep = episode(context, 3)
    out = call(ep, "order_get", {"order_id": "ORD-000000"})
    assert out.error and "No order with id 'ORD-000000'" in out.text and "order_list" in out.text
    out = call(ep, "report_order_status", {"order_id": ep.problem.goal.order_id, "status": "lost"})
    assert out.error and "Unknown order status 'lost'" in out.text and "in_transit" in out.text
    assert not ep.done
    data = json.loads(call(ep, "order_get", {"order_id": ep.problem.goal.order_id.lower()}).text)
    assert data["order_id"] == ep.problem.goal.order_id  # ids in any case


def test_same_seed_same_task_and_transcript(context):
    heuristic = get_policy("tracking", "heuristic")
    a, b = run_policy(episode(context, 9, 2), heuristic), run_policy(episode(context, 9, 2), heuristic)
    assert a.messages == b.messages and a.result.reward == b.result.reward
    assert episode(context, 9, 3).opening != episode(context, 9, 2).opening


def test_no_placeholder_reaches_the_user(context):
    heuristic = get_policy("tracking", "heuristic")
    for d in (0, 5, 10, 15):
        for i in range(5):
            for m in run_policy(episode(context, d, i), heuristic).messages:
                if m.role == "user":
                    assert not re.search(r"[{}]|None\b", m.text), m.text


def test_two_builds_in_one_world_keep_ids_and_references_unique(context):
    # E_JOURNEY builds several envs into one world: every earlier reference must stay unique.
    d = Difficulty.from_level(8)
    world = new_world(context, "journey", 1, d)
    first = get_env("tracking").build(world, 11, d, intent=0)
    second = get_env("returns").build(world, 12, d, intent=1)
    third = get_env("tracking").build(world, 13, d, intent=2)
    assert len({o.order_id for o in world.state(OrderBook).orders}) == len(world.state(OrderBook).orders)
    for task in (first, third):
        g = task.goal
        ref = OrderReference(RefKind(g.reference["kind"]), g.reference["leaf"], g.reference["value"])
        assert [o.order_id for o, _ in matching_lines(world.state(OrderBook).orders, ref, world.catalog)] == [g.order_id]
    assert second.goal.order_id not in (first.goal.order_id, third.goal.order_id)


def test_tracking_digits_are_the_digit_loop_draw_for_draw():
    """`random_digits` batches the Mersenne-Twister words: same digits, same RNG state after."""
    import random

    from ecom_bench.domains.orders.history import random_digits

    for seed in range(200):
        fast, slow = random.Random(seed), random.Random(seed)
        for n in (0, 1, 10, 12, 16, 18, 40):
            assert random_digits(fast, n) == "".join(str(slow.randrange(10)) for _ in range(n))
        assert fast.getstate() == slow.getstate()


def test_references_match_the_plain_definition(context):
    """`matching_lines` / `unique_references` read only the reference's leaf's lines: the same
    answers as checking every line of the account with `OrderReference.matches`."""
    from ecom_bench.domains.orders.references import ORDINALS, references_for, unique_references

    for d in (0, 6, 12):
        for i in range(4):
            world = episode(context, d, i).world
            cat = world.catalog
            for order in world.state(OrderBook).orders[::7]:
                for line in order.lines:
                    unique = []
                    for ref in references_for(world.state(OrderBook).orders, order, line, cat):
                        if ref.kind is RefKind.ORDINAL:
                            of_leaf = sorted(((o, ln) for o in world.state(OrderBook).orders for ln in o.lines
                                              if cat.get(ln.product_id).leaf_category == ref.leaf),
                                             key=lambda h: h[0].placed_at)
                            plain = [of_leaf[ORDINALS[ref.value]]] if len(of_leaf) >= 2 else []
                        else:
                            plain = [(o, ln) for o in world.state(OrderBook).orders for ln in o.lines if ref.matches(o, ln, cat)]
                        hits = matching_lines(world.state(OrderBook).orders, ref, cat)
                        assert [(o.order_id, ln.line_id) for o, ln in hits] == \
                            [(o.order_id, ln.line_id) for o, ln in plain]
                        if ref.kind is RefKind.ORDER_ID or [(o.order_id, ln.line_id) for o, ln in plain] == \
                                [(order.order_id, line.line_id)]:
                            unique.append(ref)
                    assert unique_references(world.state(OrderBook).orders, order, line, cat) == unique
