"""E_BUNDLE through the core (no Inspect): projects, generator, user, verifier, tool, policies."""

from __future__ import annotations

import random
import re

import pytest
from conftest import call, say

from ecom_bench.agents.base import get_policy
from ecom_bench.catalog.taxonomy import LEAF_BY_NAME
from ecom_bench.envs.bundle.generator import bundle_size, constraint_count
from ecom_bench.envs.bundle.goal import BundleGoal, item_name
from ecom_bench.envs.bundle.projects import PROJECTS, compose
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.users import UserAct
from ecom_bench.world.tools.bundle import MAX_BUNDLE_ITEMS


def episode(context, d, index=0, seed=0, strict=True):
    return new_episode("bundle", d, seed, index, context=context, strict=strict)


def submit(ep, ids):
    return call(ep, "submit_bundle", {"product_ids": list(ids)})


def show(ep, ids):
    """Make ids legitimately retrieved (as a tool would) without spending the turn's budget."""
    ep.world.seen_ids.update(ids)


def cheapest_other(ep, category, exclude=()):
    goal: BundleGoal = ep.problem.goal
    pool = [ep.world.catalog.products[i] for i in ep.world.catalog.by_leaf_category[category]]
    ok = [p for p in pool if ep.world.in_stock(p) and p.id not in exclude and p.id not in goal.stock_out_ids
          and all(c.satisfied(p) for c in goal.constraints)]
    return min(ok, key=lambda p: p.price)


def _find_index(context, d, predicate, limit=200):
    for i in range(limit):
        if predicate(episode(context, d, i)):
            return i
    pytest.fail("no episode matched")


def _find(context, d, predicate, limit=200):
    return episode(context, d, _find_index(context, d, predicate, limit))


# ------------------------------------------------------------------ projects
def test_every_project_category_is_a_catalogue_leaf(context):
    for p in PROJECTS:
        assert all(c in LEAF_BY_NAME for c in p.categories), p.name
        assert all(c in context.catalog.by_leaf_category for c in p.categories), p.name


def test_compose_reaches_n_or_raises_clearly():
    for n in (3, 6, 10, 12):
        projects, required = compose(n, random.Random(n), lambda c: True)
        assert len(required) == len(set(required)) == n
        assert set(required) <= {c for p in projects for c in p.categories}
    with pytest.raises(ValueError, match="in-stock products"):
        compose(3, random.Random(0), lambda c: False)
    with pytest.raises(ValueError, match="needs 12"):
        compose(12, random.Random(0), lambda c: c in PROJECTS[0].categories)


# ------------------------------------------------------------------ policies
@pytest.mark.parametrize("d", range(16))
def test_oracle_solves_every_task_within_the_budgets(context, d):
    oracle = get_policy("bundle", "oracle")
    for i in range(3):
        run = run_policy(episode(context, d, i), oracle)
        r = run.result
        assert r.reward.task == 1.0 and r.reward.success, r.explanation()
        assert r.reward.hallucination == 0.0 and r.end_reason == "answered"
        assert r.turns <= 3  # ⌈n/B_tool⌉ turns, within T_max


def test_random_rarely_succeeds_and_is_penalised_for_coverage(context):
    rnd = get_policy("bundle", "random")
    runs = [run_policy(episode(context, d, i), rnd).result for d in (3, 6, 9, 12) for i in range(15)]
    assert sum(r.reward.success for r in runs) / len(runs) <= 0.05
    answered = [r for r in runs if r.end_reason == "answered"]
    assert len(answered) >= 50
    assert sum(r.verdict.details["recall"] for r in answered) / len(answered) < 0.3
    assert all(r.reward.hallucination == 0.0 for r in answered)  # random, but only retrieved ids


def test_heuristic_is_honest_and_degrades_with_difficulty(context):
    heuristic = get_policy("bundle", "heuristic")
    assert heuristic.reads_hidden_goal is False

    def success(d):
        runs = [run_policy(episode(context, d, i), heuristic).result for i in range(20)]
        return sum(r.reward.success for r in runs) / len(runs)
    easy, hard = success(0), success(12)
    assert easy >= 0.8 and hard < easy


# ------------------------------------------------------------------ generator and axes
def test_goal_follows_the_axes(context):
    for d in (0, 3, 6, 9, 12, 15, 20):
        goal: BundleGoal = episode(context, d).problem.goal
        assert len(goal.required) == bundle_size(d) == min(12, 3 + d // 2)
        assert len(goal.constraints) == constraint_count(episode(context, d).difficulty)
    counts = [constraint_count(episode(context, d).difficulty) for d in (0, 3, 4, 7, 8, 14)]
    assert counts == [0, 0, 1, 1, 2, 2]


def test_choices_are_feasible_and_budget_appears_from_d2(context):
    budgets = {0: 0, 1: 0}
    for d in (0, 1, 2, 6, 12):
        for i in range(20):
            ep = episode(context, d, i)
            goal: BundleGoal = ep.problem.goal
            for item in goal.items:
                p = ep.world.product(item.product_id)
                assert p.leaf_category == item.category and ep.world.in_stock(p)
                assert all(c.satisfied(p) for c in goal.constraints)
                assert item.product_id not in goal.stock_out_ids
            if goal.budget is not None:
                assert sum(i.price for i in goal.items) <= goal.budget
                budgets[d] = budgets.get(d, 0) + 1
    assert budgets[0] == budgets[1] == 0
    assert 24 <= budgets[2] + budgets[6] + budgets[12] <= 48  # p = 0.6 over 60 tasks


def test_p_missing_withholds_slots_and_the_opening_signals_them(context):
    def hidden_share(d):
        slots = [t for i in range(20) for t in episode(context, d, i).problem.user.disclosure().values()]
        return 1 - sum(slots) / len(slots)
    assert hidden_share(0) < 0.2 < 0.5 < hidden_share(9)
    ep = _find(context, 9, lambda e: not all(e.problem.user.disclosure().values()))
    told = ep.problem.user.disclosure()
    opening = ep.opening.lower()
    for item in ep.problem.goal.items:
        assert (item_name(item.category).lower() in opening) == told[item.slot]
    if not all(told[i.slot] for i in ep.problem.goal.items):
        assert re.search(r"other things|more i need|not everything", opening)


def test_p_oos_schedules_stock_outs_and_the_user_announces_them(context):
    assert all(not episode(context, 0, i).world.stock_outs for i in range(10))
    ep = _find(context, 12, lambda e: bool(e.problem.goal.stock_out_ids))
    doomed = ep.problem.goal.stock_out_ids[0]
    assert ep.world.in_stock(ep.world.product(doomed))
    show(ep, [doomed])
    reply = say(ep, "Let me check a few options.")
    assert not ep.world.in_stock(ep.world.product(doomed))
    assert doomed in reply.text and "sold out" in reply.text


def test_noise_only_from_p_noise_and_never_in_item_names(context):
    assert all(not re.search(r"\b(pls|u|thx|&)\b", episode(context, 0, i).opening) for i in range(5))
    noisy = 0
    for i in range(10):
        ep = episode(context, 15, i)
        told = ep.problem.user.disclosure()
        for item in ep.problem.goal.items:
            if told[item.slot]:
                assert item_name(item.category) in ep.opening
        clean = ep.problem.user.__class__(ep.problem.goal, ep.problem.user.projects,
                                          ep.difficulty.__class__.from_level(0), ep.problem.user.seed,
                                          ep.problem.user._disclosure).opening().text
        noisy += clean != ep.opening
    assert noisy >= 5


def test_same_seed_same_task_and_transcript(context):
    a = run_policy(episode(context, 9, 3), get_policy("bundle", "heuristic"))
    b = run_policy(episode(context, 9, 3), get_policy("bundle", "heuristic"))
    assert a.messages == b.messages and a.result.reward == b.result.reward
    assert episode(context, 9, 4).opening != episode(context, 9, 3).opening


def test_no_placeholder_ever_reaches_the_user(context):
    heuristic = get_policy("bundle", "heuristic")
    for d in (0, 5, 10, 15):
        for i in range(4):
            for m in run_policy(episode(context, d, i), heuristic).messages:
                if m.role == "user":
                    assert not re.search(r"[{}]|None\b", m.text), m.text


# ------------------------------------------------------------------ user
def test_asking_reveals_withheld_items_budget_and_requirements(context):
    ep = _find(context, 9, lambda e: sum(not t for t in e.problem.user.disclosure().values()) >= 2
               and e.problem.goal.budget is not None)
    reply = say(ep, "What else do you need for this?")
    assert reply.act is UserAct.CLARIFY and all(ep.problem.user.disclosure().values())
    for item in ep.problem.goal.items:
        assert item_name(item.category).lower() in (ep.opening + reply.text).lower()
    assert f"${ep.problem.goal.budget:.0f}" in reply.text


def test_asking_about_one_category(context):
    ep = _find(context, 9, lambda e: any(not e.problem.user.disclosure()[i.slot]
                                         for i in e.problem.goal.items))
    item = next(i for i in ep.problem.goal.items if not ep.problem.user.disclosure()[i.slot])
    other = next(c for c in LEAF_BY_NAME if c not in ep.problem.goal.required)
    reply = say(ep, f"Do you need a {item_name(item.category)}? And a {item_name(other)}?")
    assert reply.act is UserAct.CLARIFY and item.slot in reply.revealed
    assert ep.problem.user.disclosure()[item.slot] and "don't need" in reply.text


def test_user_reviews_a_proposed_list(context):
    ep = _find(context, 6, lambda e: e.problem.goal.budget is not None and not e.problem.goal.stock_out_ids)
    goal: BundleGoal = ep.problem.goal
    ids = [i.product_id for i in goal.items]
    reply = say(ep, "How about " + ", ".join(ids[1:]) + "?")
    # the kind of problem, never the answer: which item is missing is not read out
    assert reply.act is UserAct.CORRECT and not reply.revealed
    assert item_name(goal.items[0].category) not in reply.text
    reply = say(ep, "Then: " + ", ".join(ids) + ". OK?")
    assert reply.act is UserAct.CONFIRM and "submit" in reply.text


# ------------------------------------------------------------------ verifier
def verdict_of(context, d, index, ids, setup=None):
    """Submit `ids` (shown first) in a fresh copy of episode (d, index) and return the verdict."""
    ep = episode(context, d, index)
    if setup:
        setup(ep)
    show(ep, ids)
    assert not submit(ep, ids).error
    return ep.env.verify(ep.problem.task, ep.problem.world)


def test_wrong_answers_get_the_expected_task_score(context):
    d = 3
    index = _find_index(context, d, lambda e: e.problem.goal.budget is None
                        and not e.problem.goal.stock_out_ids)
    ep = episode(context, d, index)
    goal: BundleGoal = ep.problem.goal
    n = len(goal.items)
    ids = [i.product_id for i in goal.items]
    extra = cheapest_other(ep, next(c for c in LEAF_BY_NAME if c not in goal.required))
    dup = cheapest_other(ep, goal.items[0].category, exclude=ids)
    # one missing: P = 1, R = (n-1)/n
    v = verdict_of(context, d, index, ids[1:])
    f1 = 2 * (n - 1) / n / (1 + (n - 1) / n)
    assert v.task == pytest.approx(2 * f1 - 1) and not v.success
    assert f"missing {goal.items[0].category}" in v.explanation
    # one extra + one duplicate: P = n/(n+2), R = 1
    v = verdict_of(context, d, index, ids + [extra.id, dup.id])
    p = n / (n + 2)
    assert v.task == pytest.approx(2 * (2 * p / (p + 1)) - 1)
    assert f"extra {extra.id}" in v.explanation and f"duplicate {dup.id}" in v.explanation
    # a sold-out product covers nothing and still counts as submitted: P = R = (n-1)/n
    v = verdict_of(context, d, index, ids, setup=lambda e: e.world.set_out_of_stock(ids[0]))
    assert not v.success and f"{ids[0]} ({goal.items[0].category}) is out of stock" in v.explanation
    assert v.task == pytest.approx(2 * (n - 1) / n - 1)
    v = verdict_of(context, d, index, ids)
    assert v.task == 1.0 and v.success and "Bundle correct" in v.explanation


def test_over_budget_and_broken_requirements_count(context):
    index = _find_index(context, 8, lambda e: e.problem.goal.budget is not None
                        and len(e.problem.goal.constraints) == 2)
    ep = episode(context, 8, index)
    goal: BundleGoal = ep.problem.goal
    ids = [i.product_id for i in goal.items]
    # over budget: the priciest qualifying product of the first category instead of the cheapest
    cat = goal.items[0].category
    pool = [ep.world.catalog.products[i] for i in ep.world.catalog.by_leaf_category[cat]]
    pricey = max((p for p in pool if ep.world.in_stock(p) and all(c.satisfied(p) for c in goal.constraints)),
                 key=lambda p: p.price)
    swapped = [pricey.id] + ids[1:]
    over = max(0.0, sum(ep.world.product(i).price for i in swapped) / goal.budget - 1)
    v = verdict_of(context, 8, index, swapped)
    assert v.task == pytest.approx(max(-1.0, 1 - over)) and v.success is (over == 0)
    assert v.details["over_budget"] == pytest.approx(over)
    # a product that breaks a requirement does not cover its category
    rule = goal.constraints[0]
    cat = goal.items[1].category
    pool = [ep.world.catalog.products[i] for i in ep.world.catalog.by_leaf_category[cat]]
    bad = next(p for p in pool if not rule.satisfied(p) and ep.world.in_stock(p))
    v = verdict_of(context, 8, index, [ids[0], bad.id] + ids[2:])
    assert f"{bad.id} breaks" in v.explanation and cat in v.details["missing"] and not v.success


def test_no_answer_is_a_hard_fail(context):
    ep = episode(context, 0)
    for _ in range(ep.difficulty.max_turns):
        say(ep, "Hello?")
    res = ep.result()
    assert res.reward.total == -1.0 and res.reward.hard_fail and res.user_acts[-1] == "quit"
    assert "No bundle was submitted" in res.verdict.explanation


# ------------------------------------------------------------------ tool
def test_submit_bundle_errors_are_readable(context):
    ep = episode(context, 3)
    ids = [i.product_id for i in ep.problem.goal.items]
    out = submit(ep, [])
    assert out.error and "product_ids is empty" in out.text
    out = submit(ep, [ids[0], ids[0]])
    assert out.error and f"Product {ids[0]} is listed twice" in out.text
    out = submit(ep, [ids[0], "P9999999"])
    assert out.error and "No product with id 'P9999999'" in out.text
    assert not ep.done
    say(ep, "Let me check those again.")  # a fourth refused answer in one turn would end the chat
    out = submit(ep, [f"P{i:07d}" for i in range(1, MAX_BUNDLE_ITEMS + 2)])
    assert out.error and f"at most {MAX_BUNDLE_ITEMS} products" in out.text
    assert not ep.done and not ep.world.answers
    res = ep.result()
    assert res.invented_ids == []  # a refused answer acts on nothing: its ids are not charged


def test_confirmation_is_neutral(context):
    ep = episode(context, 3)
    ids = [i.product_id for i in ep.problem.goal.items]
    wrong = submit(episode(context, 3), ids[1:])
    right = submit(ep, ids)
    for out in (wrong, right):
        assert not out.error and '"submitted": true' in out.text
        assert not re.search(r"correct|wrong|missing|success", out.text, re.I)
    assert ep.done


def test_tool_call_script_budget_and_ask_user(context):
    ep = episode(context, 0)  # B_tool = 1
    cat = ep.problem.goal.items[0].category
    assert not call(ep, "catalog_search", {"query": item_name(cat), "category": cat}).error
    refused = call(ep, "catalog_get_product", {"product_id": ep.problem.goal.items[0].product_id})
    assert refused.error and "budget of 1 tool call(s) per turn" in refused.text
    reply = call(ep, "ask_user", {"question": "Anything else you need?"})
    assert not reply.error and ep.turns == 1
