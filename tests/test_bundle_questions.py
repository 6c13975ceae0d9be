"""E_BUNDLE's customer understands plain questions (padding: tests/test_exploit_soundness.py)."""

from __future__ import annotations


import pytest

from conftest import questions, say, withheld_slots
from ecom_bench.envs.bundle.goal import BUDGET_SLOT
from ecom_bench.episode import new_episode
from ecom_bench.users import UserAct
from ecom_bench.users.understanding import is_request

def episode(context, d, index=0):
    return new_episode("bundle", d, 0, index, context=context)


@pytest.mark.parametrize("intent", ["requirements", "anything_else", "budget"])
def test_any_plain_question_discloses_what_is_withheld(context, intent):
    indices = [i for i in range(40) if BUDGET_SLOT in withheld_slots(episode(context, 9, i))
               and len(withheld_slots(episode(context, 9, i))) >= 2][:3]
    assert indices
    for question in questions(intent):
        if not is_request(question):  # the shared reader's gap (users/understanding.py), not this env's
            continue
        for i in indices:
            ep = episode(context, 9, i)
            before = set(withheld_slots(ep))
            reply = say(ep, question)
            assert reply.act is UserAct.CLARIFY and reply.excused, (question, reply)
            assert reply.revealed and set(reply.revealed) <= before, (question, reply)
            if intent == "budget":
                assert BUDGET_SLOT in reply.revealed, (question, reply)
            if intent == "anything_else":  # a general question gets everything
                assert set(reply.revealed) == before, (question, reply)


def test_anything_else_when_nothing_is_withheld_is_charged(context):
    ep = next(e for e in (episode(context, 3, i) for i in range(40)) if not withheld_slots(e))
    reply = say(ep, "Is there anything else you need?")
    assert reply.act is UserAct.CONTINUE and not reply.excused
    assert "everything" in reply.text


def test_a_general_part_of_a_question_widens_it(context):
    ep = next(e for e in (episode(context, 9, i) for i in range(40))
              if BUDGET_SLOT in withheld_slots(e) and any(s.startswith("category:") for s in withheld_slots(e)))
    before = set(withheld_slots(ep))
    reply = say(ep, "What's your budget, and is there anything else you need?")
    assert set(reply.revealed) == before


