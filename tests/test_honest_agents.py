"""Correct work succeeds however a capable agent words it.

`tests/honest/` holds agents written from the README, the tool descriptions and the transcripts
only, without sight of the customer's or the verifiers' code: they word questions and answers
their own way (plain English, compound questions, worked answers, check-ins), trust the tools'
descriptions and take the customer literally. Held-out seeds; every failure left is the agent's
own mistake (listed below), so any further one is a customer or verifier that scores correct work
as failure.
"""

from __future__ import annotations

import json

import pytest
from conftest import call

from ecom_bench.conversation import AgentAction, ToolCallRequest
from ecom_bench.domains.orders.book import OrderBook
from ecom_bench.episode import new_episode
from tests.honest.common import run_agent
from tests.honest.run_honest import AGENTS, agent_class

SEED = 7300
DIFFICULTIES = (1, 4, 7, 10, 13)
PER_CELL = 8
#: The agents' own mistakes on these seeds (their transcripts show it): cart d1 #5 adds 3 of a
#: variant with 2 in stock after "any flavor is fine", d13 #4 reads "add 2 my cart one RC car" as
#: two cars; returns d7 #3 takes the PaperMate chair for the PaperPro Ultra the customer named,
#: d13 #6 reports an exchange it never started; substitution d1 #7 and d4 #7 leave out products
#: their own filtered searches returned (d1: it repeats one search until its turns run out).
AGENT_MISTAKES = {"cart": {"cart-d1-s7300-0005", "cart-d13-s7300-0004"},
                  "returns": {"returns-d7-s7300-0003", "returns-d13-s7300-0006"},
                  "substitution": {"substitution-d1-s7300-0007", "substitution-d4-s7300-0007"}}


@pytest.mark.parametrize("env", sorted(AGENTS))
def test_honest_agent_succeeds_on_held_out_seeds(context, env):
    failed = {}
    for d in DIFFICULTIES:
        for index in range(PER_CELL):
            session = run_agent(agent_class(env), env, d, SEED, index, context=context)
            line = session.result_line()
            if not line["success"]:
                failed[line["id"]] = session.final_info.get("explanation", "")
    assert set(failed) <= AGENT_MISTAKES.get(env, set()), failed


def _ask(env: str, d: int, seed: int, index: int, text: str, *calls: ToolCallRequest, context=None) -> str:
    ep = new_episode(env, d, seed, index, context=context)
    if calls:
        ep.step(AgentAction(tool_calls=calls))
    return " ".join(m.text for m in ep.step(AgentAction(text=text)).observation)


def test_a_question_naming_the_order_found_is_answered(context):
    """A customer who described the order never saw its id: a question that names the id the
    agent found is answered as the same question without it (the same reply for any id)."""
    index = next(i for i in range(40) if not new_episode("returns", 0, 5000, i, context=context).problem.user.direct)
    ep = new_episode("returns", 0, 5000, index, context=context)
    mine = ep.problem.user.target_order_id
    other = next(o.order_id for o in ep.world.state(OrderBook).orders if o.order_id != mine)
    plain = _ask("returns", 0, 5000, index, "What went wrong with it?", context=context)
    for order_id in (mine, other):
        asked = f"I found the item in order {order_id}. What went wrong with it?"
        assert _ask("returns", 0, 5000, index, asked, context=context) == plain
    assert "order number" not in plain


@pytest.mark.parametrize("question", ["Could you tell me the quantities and variants you need for each item?",
                                      "How many of each item would you like, and which variant of each?"])
def test_cart_quantities_in_the_plural_are_answered(context, question):
    ep = new_episode("cart", 9, 5000, 0, context=context)
    wanted = [t for t in ep.problem.goal.targets if t.quantity > 1]
    assert wanted, "this task withholds quantities"
    reply = " ".join(m.text for m in ep.step(AgentAction(text=question)).observation)
    for t in wanted:
        assert f"I need {t.quantity} of" in reply


@pytest.mark.parametrize("check_in,approves", [("Does that sound good to you?", True),
                                               ("Shall I go ahead with my recommendations?", True),
                                               ("Is there anything else you need?", False)])
def test_discovery_check_ins_get_the_answer_they_ask_for(context, check_in, approves):
    ep = new_episode("discovery", 0, 5000, 21, context=context)
    while ep.problem.user.withheld():
        ep.step(AgentAction(text="Could you tell me everything else that matters to you?"))
    reply = " ".join(m.text for m in ep.step(AgentAction(text=check_in)).observation)
    assert reply.startswith("Yes.") is approves and ("everything I need" in reply or "that's all" in reply) is not approves


def test_a_worked_policy_answer_records_its_result(context):
    """The last result of a line of working is the answer, not the first amount."""
    ep = new_episode("policy", 0, 5000, 2, context=context)
    call = ToolCallRequest("answer_policy_question",
                           {"answer": "First the base is $10.00; after all the rule's clauses it is $13.57."}, id="1")
    echo = ep.step(AgentAction(tool_calls=(call,))).observation[-1].text
    assert echo.startswith("Recorded: $13.57")


# ------------------------------------------------------------------ found by outside red teams
def _told_constraint(context, env: str, kind: str):
    """An episode (and its constraint of `kind`) whose customer stated that constraint and holds nothing back."""
    for index in range(60):
        ep = new_episode(env, 0, 9400, index, context=context)
        user = ep.problem.user
        if user.withheld():
            continue
        c = next((c for c in user.stated_constraints() if c.kind == kind and user.told(c.slot)), None)
        if c is not None:
            return ep, c
    raise AssertionError(f"no {env} episode states a {kind} constraint")


@pytest.mark.parametrize("env", ["discovery", "substitution"])
def test_asked_to_relax_a_requirement_the_customer_says_it_again(context, env):
    """'Is it okay if it ships in 30 days?' drew 'Yes. Please go ahead' 221/221: an agent that
    took the yes at its word then failed the requirement the customer had stated."""
    ep, c = _told_constraint(context, env, "ship")
    for question in ("Only one option meets everything. Is it okay if it ships in 30 days?",
                     "Just to confirm, how fast does it need to ship?"):
        reply = " ".join(m.text for m in ep.step(AgentAction(text=question)).observation)
        assert not reply.lower().startswith(("yes", "no")), reply
        assert f"{int(c.value)} day" in reply, reply


def test_a_valid_but_short_proposal_is_not_waved_through(context):
    """The customer asked for up to k picks: 'That works for me. Go ahead' to one valid pick led the
    agent to recommend fewer than qualified."""
    from ecom_bench.envs._ranking import ideal_ranking

    for index in range(40):
        ep = new_episode("discovery", 6, 9400, index, context=context)
        ranked = [pid for pid, _ in ideal_ranking(ep.problem.goal, ep.world).ranked]
        if ep.problem.goal.k > 1 and len(ranked) >= ep.problem.goal.k:
            break
    ep.step(AgentAction(tool_calls=(ToolCallRequest("catalog_get_product", {"product_id": ranked[0]}, id="1"),)))
    while ep.problem.user.withheld():
        ep.step(AgentAction(text="Could you tell me everything else that matters to you?"))
    reply = " ".join(m.text for m in ep.step(AgentAction(text=f"How about {ranked[0]}?")).observation)
    assert f"up to {ep.problem.goal.k} picks" in reply, reply


def test_the_bundle_customer_reviews_products_named_by_title(context):
    """A proposal naming products as a person does (no ids) was read as no proposal: 'Is anything
    missing?' got 'That's everything on my list.' for a list missing four of six items."""
    ep = new_episode("bundle", 0, 9312, 0, context=context)  # d = 0: no typos in the reply
    goal = ep.problem.goal
    first = goal.items[0].category
    found = json.loads(call(ep, "catalog_search", {"query": first, "category": first}).text)["results"]
    title = found[0]["title"].split(",")[0]
    reply = " ".join(m.text for m in ep.step(AgentAction(text=f"Here's my proposal: {title}. Is anything missing?"))
                     .observation)
    assert "not everything I need" in reply, reply


def test_similar_categories_read_plurals_of_any_spelling(context):
    from ecom_bench.catalog.naming import noun_from

    assert noun_from("Hoodies").one == "hoodie" and noun_from("Batteries").one == "battery"
    ep = new_episode("bundle", 0, 9304, 0, context=context)
    out = json.loads(call(ep, "catalog_search", {"query": "hoodie", "category": "pullover hoodie"}).text)
    assert "Hoodies" in out.get("similar_categories", []) or out["results"], out


def test_order_listing_names_each_items_category(context):
    """A title need not say what the product is ('Hydro Flask Wide Mouth Bottle'); the customer
    names its order by kind ('the water bottle I ordered')."""
    ep = new_episode("tracking", 6, 0, 0, context=context)
    rows = json.loads(call(ep, "order_list", {}).text)["orders"]
    assert all(len(r["categories"]) == len(r["items"]) and all(r["categories"]) for r in rows)


def test_a_returns_confirmation_gets_a_go_ahead_without_repeats(context):
    """'..., by mail. Shall I go ahead?' drew a restatement with a sentence twice and no go-ahead."""
    index = next(i for i in range(40) if new_episode("returns", 0, 9600, i, context=context).problem.goal.kind
                 == "exchange")
    ep = new_episode("returns", 0, 9600, index, context=context)
    for _ in range(3):
        if not ep.problem.user.withheld():
            break
        ep.step(AgentAction(text="Could you tell me which order it is, why you're sending it back, how you'd "
                                 "like to send it and what you'd like instead?"))
    value = ep.problem.goal.new_variant_value
    reply = " ".join(m.text for m in ep.step(AgentAction(
        text=f"I'll exchange it for the {value} one by mail. Shall I go ahead?")).observation)
    assert reply.endswith("Please go ahead."), reply
    sentences = [s for s in reply.split(". ") if s]
    assert len(sentences) == len(set(sentences)), reply
