"""Each of the 12 difficulty axes changes the behaviour it names (one test per axis).

Axes consumed by one env are tested through that env; the shared ones through the
episode, the user and the world's search.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from conftest import call, say
from ecom_bench.agents import get_policy
from ecom_bench.catalog.search import SearchFilters
from ecom_bench.difficulty import Difficulty
from ecom_bench.domains.orders.book import OrderBook
from ecom_bench.envs.cart.user import CartUser
from ecom_bench.envs.journey import journey_length
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.users import UserAct
from ecom_bench.users.messages import Disclosure


def episode(context, env, d, index=0, **kw):
    return new_episode(env, d, 0, index, context=context, **kw)


# --- 1. m: number of user constraints ---------------------------------------------------
def test_m_sets_the_number_of_discovery_constraints(context):
    counts = {d: [len(episode(context, "discovery", d, i).problem.goal.constraints) for i in range(6)]
              for d in (0, 6, 12)}
    assert all(c == 2 for c in counts[0])
    assert max(counts[6]) == 5 and min(counts[6]) >= 3
    assert sum(counts[12]) > sum(counts[6]) > sum(counts[0])


# --- 2. k_rec: recommendation list size --------------------------------------------------
def test_k_rec_bounds_the_recommendation_list(context):
    for d, k in ((0, 3), (6, 5), (12, 7)):
        ep = episode(context, "discovery", d)
        hits = json.loads(ep.toolkit.catalog_search(query="a", limit=20))["results"]
        ids = [h["product_id"] for h in hits][: k + 1]
        too_many = call(ep, "recommend_products", {"product_ids": ids})
        assert too_many.error and str(k) in too_many.text
        assert not call(ep, "recommend_products", {"product_ids": ids[:k]}).error


# --- 3. T_max: turn budget / user patience ------------------------------------------------
@pytest.mark.parametrize("d", [0, 6, 12])
def test_t_max_is_the_users_patience(context, d):
    ep = episode(context, "cart", d)
    turns = 0
    while not ep.done:
        say(ep, "Let me think about that.")
        turns += 1
    assert turns == Difficulty.from_level(d).max_turns == 4 + d // 2
    assert ep.user_messages[-1].act is UserAct.QUIT


# --- 4. p_missing: slots omitted from the opening ---------------------------------------
def test_p_missing_withholds_more_slots_as_d_rises(context):
    def hidden_share(d):
        told = [t for i in range(40) for t in episode(context, "cart", d, i).problem.user.disclosure().values()]
        return sum(not t for t in told) / max(len(told), 1)

    assert hidden_share(0) < 0.2 < 0.5 < hidden_share(9)


# --- 5. p_noise: typos and slang --------------------------------------------------------
def test_p_noise_garbles_the_opening_only_above_zero(context):
    problem = episode(context, "cart", 12).problem
    user = problem.user
    products = user.products

    def opening(level):
        return CartUser(problem.goal, products, Difficulty.from_level(level), user.seed,
                        Disclosure(dict(user.disclosure()))).opening().text

    clean, noisy = opening(0), opening(12)
    assert clean != noisy
    assert len(clean.split()) == len(noisy.split())  # words are garbled, never added or dropped


def test_noise_never_makes_a_digit():
    """'For the gel pens' noised to '4 the gel pens' read as a quantity (outside red team)."""
    import random

    from ecom_bench.users.noise import add_noise

    text = "For the pens, to my cart, thanks to you for this and for that. " * 20
    for seed in range(50):
        assert not re.search(r"\d", add_noise(text, 1.0, random.Random(seed)))


# --- 6. p_switch: context switches in the journey ----------------------------------------
def test_p_switch_makes_the_journey_user_switch_intent(context):
    def switches(d):
        return sum(sum(episode(context, "journey", d, i).problem.goal.switches) for i in range(30))

    assert switches(0) <= 3 and switches(12) >= 15
    assert journey_length(Difficulty.from_level(0)) == 2 and journey_length(Difficulty.from_level(12)) == 5


# --- 7. top_k: retrieval depth ----------------------------------------------------------
def test_top_k_bounds_how_far_the_query_reaches(context):
    budget = SearchFilters(max_price=30.0)
    easy, hard = episode(context, "cart", 0).world, episode(context, "cart", 18).world
    assert (easy.difficulty.top_k, hard.difficulty.top_k) == (200, 20)
    hard = replace(hard, difficulty=replace(hard.difficulty, eps_rank=0.0))  # isolate top_k from ε_rank
    # without filters, a query reaches its top_k best products, pages included
    assert (easy.search_page("kitchen", None, 20).total, hard.search_page("kitchen", None, 20).total) == (200, 20)
    # with filters, every match comes back at any depth; only those among the query's top_k come ranked by
    # relevance, so a vague query's first page holds fewer of the products its words describe
    e, h = easy.search_page("kitchen", budget, 20), hard.search_page("kitchen", budget, 20)
    assert e.total == h.total > 200 and e.ranked > 20 > h.ranked

    def kitchen(page):
        return sum("kitchen" in p.category_path.lower() for p in page.products)

    assert kitchen(e) > kitchen(h)


# --- 8. ε_rank: distractors in results ---------------------------------------------------
def test_eps_rank_injects_distractors(context):
    base = episode(context, "cart", 0).world
    engine_ids = [h.product.id for h in base.search_engine.search("usb-c charger", depth=200, limit=10)]
    assert [p.id for p in base.search("usb-c charger", None, 10)] == engine_ids
    hard = episode(context, "cart", 15).world
    hard = replace(hard, difficulty=replace(hard.difficulty, top_k=200))  # isolate ε_rank from top_k
    changed = sum([p.id for p in hard.search(q, None, 10)] != [h.product.id for h in hard.search_engine.search(
        q, depth=200, limit=10)] for q in ("usb-c charger", "yoga mat", "dog leash", "coffee maker", "notebook"))
    assert changed >= 3


# --- 9. p_oos: items going out of stock mid-dialogue --------------------------------------
def test_p_oos_schedules_stock_outs_that_fire(context):
    def scheduled(d):
        return sum(len(episode(context, "discovery", d, i).problem.world.stock_outs) for i in range(30))

    assert scheduled(0) == 0 and scheduled(12) > scheduled(3) > 0
    # and they fire: while the oracle works, the world drops the watched items to zero stock
    fired = 0
    for i in range(30):
        final = run_policy(episode(context, "discovery", 12, i), get_policy("discovery", "oracle")).result.final_state
        fired += sum(e["fired_at_turn"] is not None for e in final["stock_outs"])
    assert fired > 0


# --- 10. H_orders: order-history size -----------------------------------------------------
@pytest.mark.parametrize("env", ["tracking", "returns"])
def test_h_orders_sets_the_confusable_order_history(context, env):
    """H_orders(d) orders share the target's kind of product (the set a reference must be resolved
    against); older background orders of other kinds fill the rest of the account."""
    for d in (0, 6, 12):
        world = episode(context, env, d).world
        goal = episode(context, env, d).problem.goal
        target = next(o for o in world.state(OrderBook).orders if o.order_id == goal.order_id)
        leaf = world.product(target.lines[0].product_id).leaf_category if env == "tracking" else goal.leaf
        same_kind = [o for o in world.state(OrderBook).orders
                     if any(world.product(ln.product_id).leaf_category == leaf for ln in o.lines)]
        assert goal.n_recent == len(same_kind) == Difficulty.from_level(d).n_orders == 1 + d // 2


# --- 11. B_branch: policy clauses ---------------------------------------------------------
def test_b_branch_sets_the_policy_rule_clause_count(context):
    for d in (0, 3, 6, 9, 12, 15):
        goal = episode(context, "policy", d).problem.goal
        assert goal.n_clauses == 1 + d // 3


# --- 12. B_tool: tool calls per turn ------------------------------------------------------
@pytest.mark.parametrize("d", [0, 6])
def test_b_tool_refuses_calls_over_the_per_turn_budget(context, d):
    ep = episode(context, "cart", d)
    budget = Difficulty.from_level(d).tool_budget
    outcomes = [call(ep, "cart_view", {}) for _ in range(budget + 1)]
    assert not any(o.error for o in outcomes[:budget])
    assert outcomes[budget].error and "budget" in outcomes[budget].text
    say(ep, "One moment.")
    assert not call(ep, "cart_view", {}).error  # a new turn, a fresh budget
