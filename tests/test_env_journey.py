"""E_JOURNEY: chained requests over one world, answered one at a time, with context switches."""

from __future__ import annotations

import pytest
from conftest import call, say

from ecom_bench.agents import get_policy
from ecom_bench.difficulty import Difficulty
from ecom_bench.domains.orders.book import OrderBook
from ecom_bench.envs import get_env
from ecom_bench.envs.journey import journey_length, journey_members
from ecom_bench.envs.journey.goal import request_opening
from ecom_bench.envs.journey.agents import classify_request
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.users import UserAct


def episode(context, d, index=0, **kw):
    return new_episode("journey", d, 0, index, context=context, **kw)


def find(context, d, predicate, limit=60):
    for i in range(limit):
        ep = episode(context, d, i)
        if predicate(ep):
            return ep
    raise AssertionError("no such journey in the first episodes")


def test_length_and_distinct_atomic_envs(context):
    for d, n in ((0, 2), (4, 3), (8, 4), (12, 5), (20, 5)):
        goal = episode(context, d).problem.goal
        envs = [t.env for t in goal.tasks]
        assert len(envs) == n == journey_length(Difficulty.from_level(d))
        assert len(set(envs)) == n and set(envs) <= set(journey_members())
        assert [t.intent for t in goal.tasks] == list(range(n))
    # patience is T_max per request
    ep = episode(context, 8)
    assert ep.difficulty.max_turns == Difficulty.from_level(8).max_turns * 4


def test_requests_share_one_world(context):
    ep = find(context, 12, lambda e: {"tracking", "returns"} <= {t.env for t in e.problem.goal.tasks})
    world = ep.world
    ids = [o.order_id for o in world.state(OrderBook).orders]
    assert len(ids) == len(set(ids))  # two envs' order histories in one world, no id collisions
    result = run_policy(ep, get_policy("journey", "oracle")).result
    assert result.reward.success, result.explanation()


def test_user_moves_on_only_after_the_active_request_is_answered(context):
    ep = find(context, 0, lambda e: not any(e.problem.goal.switches))
    ep.strict = False  # the probe below sends a schema-failing call on purpose
    goal = ep.problem.goal
    first, second = goal.tasks
    assert ep.world.intent == 0
    # the other request's final tool is recorded but does not move the user on
    other_final = get_env(second.env).final_tool
    if other_final != get_env(first.env).final_tool:
        call(ep, other_final, {})  # may error on its arguments: either way nothing advances
        assert ep.world.intent == 0 and not ep.done
    run = run_policy(ep, get_policy("journey", "oracle"))
    kinds = [request_opening(m.text)[0] for m in run.messages if m.role == "user" and request_opening(m.text)]
    assert kinds == ["first", "next"]
    assert run.result.reward.success and run.result.end_reason == "answered"
    assert [a.intent for a in ep.world.answers if a.tool != other_final or a.intent == 1][-1] == 1


def test_context_switch_interrupts_and_resumes(context):
    ep = find(context, 12, lambda e: e.problem.goal.switches[0])
    goal = ep.problem.goal
    reply = say(ep, "Sure, let me look into that. Could you tell me a bit more?")
    assert request_opening(reply.text)[0] == "switch"
    assert goal.openings[1] in reply.text and ep.world.intent == 1
    assert reply.act is UserAct.CLARIFY and reply.excused  # the customer switched: its turn, not the agent's


def test_oracle_handles_switches(context):
    wins, switched = 0, 0
    for i in range(12):
        ep = episode(context, 12, i)
        run = run_policy(ep, get_policy("journey", "heuristic"))
        switched += any(m.role == "user" and (request_opening(m.text) or ("",))[0] == "switch" for m in run.messages)
        oracle = run_policy(episode(context, 12, i), get_policy("journey", "oracle")).result
        wins += oracle.reward.success
    assert wins == 12 and switched >= 3


def test_score_is_the_mean_and_success_needs_every_request(context):
    ep = episode(context, 4, 1)
    run = run_policy(ep, get_policy("journey", "heuristic"))
    details = run.result.verdict.details["subtasks"]
    assert run.result.verdict.task == pytest.approx(sum(s["task"] for s in details) / len(details))
    assert run.result.verdict.success == all(s["success"] for s in details)
    explanation = run.result.verdict.explanation
    for k, s in enumerate(details, 1):
        assert f"{k}. {s['env']}:" in explanation


def test_unanswered_requests_fail_their_part(context):
    ep = episode(context, 0)
    oracle = get_policy("journey", "oracle")
    hidden = ep.problem.hidden_state()
    while ep.world.intent == 0:  # play the first request only, then stop
        ep.step(oracle.act(ep.messages, hidden, ep.status()))
    ep.abort("test: stopped after the first request")
    result = ep.result()
    sub = result.verdict.details["subtasks"]
    assert sub[0]["success"] and sub[1]["task"] == -1.0 and not sub[1]["success"]
    assert not result.reward.success and not result.reward.hard_fail  # one answer was given
    assert result.verdict.task == pytest.approx((sub[0]["task"] - 1.0) / 2)


def test_stock_outs_belong_to_their_request(context):
    for i in range(30):
        world = episode(context, 12, i).world
        assert all(e.intent is not None for e in world.stock_outs)
        world.intent = 99  # no request active: nothing may fire
        world.seen_ids.update(e.watch for e in world.stock_outs)
        world.referenced_ids.extend(e.watch for e in world.stock_outs)
        assert world.fire_stock_outs(1) == []


def test_a_later_substitution_never_takes_an_earlier_requests_product(context):
    """E_SUB's generator sets its original out of stock; in a journey that must not be a product an
    earlier request relies on (a bundle's only in-stock pitcher made d=10^6, #0 unsolvable)."""
    from ecom_bench.envs.journey import _product_rows_in

    checked = 0
    for d in (8, 12, 15, 10**6):
        for i in range(12):
            problem = episode(context, d, i).problem
            tasks = problem.goal.tasks
            for k, t in enumerate(tasks):
                if t.env == "substitution" and k > 0:
                    earlier = set().union(*(_product_rows_in(u.goal.to_dict(), problem.world.catalog) for u in tasks[:k]))
                    assert t.goal.original_id not in earlier
                    checked += 1
    assert checked >= 5
    result = run_policy(new_episode("journey", 10**6, 0, 0, context=context), get_policy("journey", "oracle"))
    assert result.result.reward.success, result.result.explanation()


def test_honest_policies_tell_requests_apart_from_the_words(context):
    wrong = total = 0
    for env in journey_members():
        for d in (0, 6, 12):
            for i in range(6):
                total += 1
                wrong += classify_request(new_episode(env, d, 0, i, context=context).opening, journey_members()) != env
    assert wrong / total < 0.1


def test_random_and_heuristic_floors(context):
    def rate(policy, d):
        return sum(run_policy(episode(context, d, i), get_policy("journey", policy)).result.reward.success
                   for i in range(10)) / 10

    assert rate("random", 3) == 0.0
    assert rate("heuristic", 0) > rate("heuristic", 12)
