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

from ecom_bench.conversation import ToolCallRequest
from ecom_bench.episode import AgentAction
from ecom_bench.runner import make_episode
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
    ep = make_episode(env, d, seed, index, context=context)
    if calls:
        ep.step(AgentAction(tool_calls=calls))
    return " ".join(m.text for m in ep.step(AgentAction(text=text)).observation)


def test_a_question_naming_the_order_found_is_answered(context):
    """A customer who described the order never saw its id: a question that names the id the
    agent found is answered as the same question without it (the same reply for any id)."""
    index = next(i for i in range(40) if not make_episode("returns", 0, 5000, i, context=context).problem.user.direct)
    ep = make_episode("returns", 0, 5000, index, context=context)
    mine = ep.problem.user.target_order_id
    other = next(o.order_id for o in ep.world.orders if o.order_id != mine)
    plain = _ask("returns", 0, 5000, index, "What went wrong with it?", context=context)
    for order_id in (mine, other):
        asked = f"I found the item in order {order_id}. What went wrong with it?"
        assert _ask("returns", 0, 5000, index, asked, context=context) == plain
    assert "order number" not in plain


@pytest.mark.parametrize("question", ["Could you tell me the quantities and variants you need for each item?",
                                      "How many of each item would you like, and which variant of each?"])
def test_cart_quantities_in_the_plural_are_answered(context, question):
    ep = make_episode("cart", 9, 5000, 0, context=context)
    wanted = [t for t in ep.problem.goal.targets if t.quantity > 1]
    assert wanted, "this task withholds quantities"
    reply = " ".join(m.text for m in ep.step(AgentAction(text=question)).observation)
    for t in wanted:
        assert f"I need {t.quantity} of" in reply


@pytest.mark.parametrize("check_in,approves", [("Does that sound good to you?", True),
                                               ("Shall I go ahead with my recommendations?", True),
                                               ("Is there anything else you need?", False)])
def test_discovery_check_ins_get_the_answer_they_ask_for(context, check_in, approves):
    ep = make_episode("discovery", 0, 5000, 21, context=context)
    while ep.problem.user.withheld():
        ep.step(AgentAction(text="Could you tell me everything else that matters to you?"))
    reply = " ".join(m.text for m in ep.step(AgentAction(text=check_in)).observation)
    assert reply.startswith("Yes.") is approves and ("everything I need" in reply or "that's all" in reply) is not approves


def test_a_worked_policy_answer_records_its_result(context):
    """The last result of a line of working is the answer, not the first amount."""
    ep = make_episode("policy", 0, 5000, 2, context=context)
    call = ToolCallRequest("answer_policy_question",
                           {"answer": "First the base is $10.00; after all the rule's clauses it is $13.57."}, id="1")
    echo = ep.step(AgentAction(tool_calls=(call,))).observation[-1].text
    assert echo.startswith("Recorded: $13.57")
