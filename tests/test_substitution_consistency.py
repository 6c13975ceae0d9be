"""E_SUB (and E_PD) tasks agree with what the customer says.

A product that must be bought in one variant (E_SUB: the original's connector, size,
flavour ...; any attribute the customer names) costs that variant's price, which the
catalogue sets apart from the listing (`catalog.variants`: -10%..+15%). Each test
reads the customer's stated constraints and the catalogue with its own plain loop (not
the ranking code), so it checks the generator, verifier, customer and tools against the
request as said:

* every generated task has a product that meets every stated constraint bought in the
  required variant (its price, its stock), and the verifier's right answers are exactly
  those products, so an agent that takes the customer literally can always succeed;
* asked about a product whose required variant is over budget, the customer says so;
* the tools show each variant's price and find a product by it.
"""

from __future__ import annotations

import json

import pytest

from conftest import call
from ecom_bench.conversation import AgentAction
from ecom_bench.catalog import Product
from ecom_bench.catalog.catalog import fold
from ecom_bench.envs._ranking import POOL_SIZE, Constraint, bought_variant, ideal_ranking, in_stock_for, purchase_pins
from ecom_bench.episode import new_episode
from ecom_bench.users import UserAct

#: Episodes per difficulty in the default suite (`--long`: the 400-per-d sweep below).
PER_D = 20
SWEEP_PER_D = 400


def stated(goal) -> list[Constraint]:
    """Everything the customer can say: E_SUB's compatibility, the leaf, the m constraints."""
    extra = [goal.compatibility] if hasattr(goal, "compatibility") else []
    return [*extra, *goal.requirements]


def buyable_price(p: Product, wants: list[Constraint], world) -> float | None:
    """What the customer pays for `p` bought as they asked, or None if it cannot be bought so now.

    Stated attribute values that `p` sells as variants choose the variant (its price, its
    stock); a value `p` has as its own attribute holds for the product as listed.
    """
    attrs = [c for c in wants if c.kind == "attribute"]
    variant = None
    for c in attrs:
        along = [v for v in p.variants if v.attribute == c.attribute]
        match = [v for v in along if fold(v.value) == fold(c.value)]
        if match:
            variant = variant or match[0]
        elif fold(p.attributes.get(c.attribute, "")) != fold(c.value):
            return None  # does not offer the value at all
    if variant is None:
        return p.price if world.in_stock(p) else None
    return variant.price if world.stock_of(p, variant) > 0 else None


def meets_everything(p: Product, goal, world) -> bool:
    if p.id == getattr(goal, "original_id", None):
        return False
    price = buyable_price(p, stated(goal), world)
    if price is None:
        return False
    checks = {"price": lambda c: price <= c.value, "rating": lambda c: p.rating >= c.value,
              "ship": lambda c: p.ship_days <= c.value, "brand": lambda c: fold(p.brand) == fold(c.value),
              "category": lambda c: p.leaf_category == c.value, "attribute": lambda c: True}
    for c in stated(goal):
        if not checks[c.kind](c):
            return False
    return True


def qualifying(goal, world) -> set[str]:
    leaf = goal.category.value
    return {p.id for p in world.catalog.products if p.leaf_category == leaf and meets_everything(p, goal, world)}


def check_task(context, env: str, d: int, i: int) -> None:
    ep = new_episode(env, d, 0, i, context=context)
    goal, world = ep.problem.goal, ep.world
    right = qualifying(goal, world)
    assert right, f"{env} d={d} #{i}: no product meets every stated constraint as bought: {stated(goal)}"
    if env == "substitution":
        assert goal.substitute_id in right
    ranked = {pid for pid, _ in ideal_ranking(goal, world).ranked}
    if len(right) < POOL_SIZE:
        assert ranked == right, f"{env} d={d} #{i}: verifier {sorted(ranked ^ right)} disagree with the request"


@pytest.mark.parametrize("env", ["substitution", "discovery"])
@pytest.mark.parametrize("d", [0, 3, 6, 9, 12, 15])
def test_every_task_is_solvable_as_stated(context, env, d):
    for i in range(PER_D):
        check_task(context, env, d, i)


@pytest.mark.slow
@pytest.mark.parametrize("d", range(16))
def test_every_task_is_solvable_as_stated_sweep(context, d):
    for i in range(SWEEP_PER_D):
        check_task(context, "substitution", d, i)


def _priced_apart(context, d: int):
    """An E_SUB episode, and an in-stock product of its leaf meeting every stated constraint at its
    listed price, whose compatible variant costs more than the budget."""
    for i in range(200):
        ep = new_episode("substitution", d, 0, i, context=context)
        goal, world = ep.problem.goal, ep.world
        budget = goal.constraints[0].value
        for p in world.catalog.products:
            if p.leaf_category != goal.category.value or p.id == goal.original_id or not world.in_stock(p):
                continue
            price = buyable_price(p, stated(goal), world)
            listed_ok = all(c.kind == "price" or c.satisfaction(p) == 1.0 for c in goal.requirements)
            if price is not None and p.price <= budget < price and listed_ok:
                return ep, p
    raise AssertionError("no episode with a product whose compatible variant alone is over budget")


def test_the_customer_answers_a_budget_question_truthfully(context):
    ep, p = _priced_apart(context, 6)
    goal = ep.problem.goal
    price = buyable_price(p, stated(goal), ep.world)
    ep.step(AgentAction(text=f"{p.id} in {goal.compatibility.value} costs ${price:.2f}, over your "
                             f"${goal.constraints[0].value:g} budget. Is that OK?"))
    reply = ep.user_messages[-1]
    assert "over my budget" in reply.text and reply.act is UserAct.CORRECT, reply.text
    # a product right in every way, as bought, is confirmed
    ok = new_episode("substitution", 6, 0, 0, context=context)
    right = sorted(qualifying(ok.problem.goal, ok.world))[0]
    ok.step(AgentAction(text=f"Would {right} work for you?"))
    assert ok.user_messages[-1].act is UserAct.CONFIRM, ok.user_messages[-1].text


def test_a_pick_over_budget_in_its_required_variant_is_not_a_right_answer(context):
    ep, p = _priced_apart(context, 6)
    goal = ep.problem.goal
    assert p.id not in {pid for pid, _ in ideal_ranking(goal, ep.world).ranked}
    assert any(c.kind == "price" and c.satisfaction(p) < 1.0 for c in goal.requirements)


def test_tools_show_variant_prices_and_search_prices_what_is_bought(context):
    """The price filter prices the product as bought: its listing, or with `features` naming a
    variant, that variant (as the substitution verifier prices a pinned variant and the
    discovery verifier a plain recommendation)."""
    ep = new_episode("substitution", 3, 0, 0, context=context)
    p = next(q for q in context.catalog.products if ep.world.in_stock(q) and min(v.price for v in q.variants) < q.price)
    cheap = min(p.variants, key=lambda v: v.price)
    dear = max(p.variants, key=lambda v: v.price)
    shown = json.loads(call(ep, "catalog_get_product", {"product_id": p.id}).text)
    assert shown["variant_prices"] == {v.id: v.price for v in p.variants}

    def hit(**filters):  # a fresh episode per search: the per-turn tool budget is 2 at d=3
        ep = new_episode("substitution", 3, 0, 0, context=context)
        found = json.loads(call(ep, "catalog_search", {"query": p.title, "limit": 20, **filters}).text)
        return next((r for r in found["results"] if r["product_id"] == p.id), None)

    found = hit(max_price=cheap.price, features=[cheap.value.upper()])
    assert found is not None, "the variant the shopper names is within max_price"
    assert found["price"] > cheap.price and found["variant_prices"][cheap.id] == cheap.price
    assert hit(max_price=cheap.price) is None, "bought as listed, it costs more than max_price"
    assert hit(max_price=p.price) is not None
    if dear.price > p.price:
        assert hit(max_price=p.price, features=[dear.value]) is None


def test_budget_constraint_prices_the_pinned_variant(context):
    p = next(q for q in context.catalog.products if len({v.price for v in q.variants}) == 3)
    for v in p.variants:
        pin = Constraint("attribute", v.value.upper(), attribute=v.attribute)  # matched as shoppers spell it
        assert Constraint("price", v.price, pins=(pin,)).satisfaction(p) == 1.0
        assert Constraint("price", v.price - 0.01, pins=(pin,)).satisfaction(p) < 1.0
        assert Constraint("price", v.price, pins=(pin,)).to_dict()["pins"] == [pin.to_dict()]
    assert Constraint("price", p.price).satisfaction(p) == 1.0  # nothing pinned: the listing


def test_a_product_whose_required_variant_sold_out_is_out_of_stock_for_the_customer(context):
    """Catalogues with their own variants can sell out one of them: the customer needs theirs."""
    ep = new_episode("substitution", 6, 0, 0, context=context)
    goal, world = ep.problem.goal, ep.world
    pick = next(pid for pid, _ in ideal_ranking(goal, world).ranked if pid not in goal.doomed_ids)
    p = world.product(pick)
    variant = bought_variant(p, purchase_pins(goal))
    assert variant is not None  # the compatible value is one of its variants
    world.stock[variant.id] = 0
    assert world.in_stock(p) and not in_stock_for(goal, world, p)
    assert pick not in {pid for pid, _ in ideal_ranking(goal, world).ranked}
    assert pick not in qualifying(goal, world)
    shown = json.loads(call(ep, "catalog_get_product", {"product_id": pick}).text)
    assert shown["in_stock"] and shown["sold_out_variants"] == [variant.id]
    ep.step(AgentAction(text=f"How about {pick}?"))
    assert "out of stock" in ep.user_messages[-1].text
