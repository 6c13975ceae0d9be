"""E_TRACK / E_RETURN customers: plain questions are understood, padding buys nothing,
ordinals read one way, and the target line's position is drawn."""

from __future__ import annotations

import itertools

import pytest

from conftest import questions, say
from ecom_bench.episode import new_episode
from ecom_bench.users import UserAct
from ecom_bench.domains.orders.book import find_order, OrderBook
from ecom_bench.domains.orders.references import ORDINALS, OrderReference, RefKind, matching_lines

#: Which slot each dev intent asks about (returns).
RETURNS_INTENTS = {"which_order": "order", "which_item": "item", "return_reason": "reason",
                   "return_method": "method", "exchange_variant": "variant"}


_FOUND: dict[frozenset[str], tuple[int, int]] = {}


def _returns_episode(context, slots: set[str]):  # noqa: ANN001
    """A fresh returns episode whose customer withholds at least `slots` (an "item" slot needs an
    order-id customer, rarer at high d)."""
    key = frozenset(slots)
    if key not in _FOUND:
        for d, i in itertools.product((12, 5, 3), range(150)):
            told = new_episode("returns", d, 0, i, context=context).problem.user.disclosure()
            if all(s in told and not told[s] for s in slots):
                _FOUND[key] = (d, i)
                break
        else:
            pytest.fail(f"no episode withholds {slots}")
    d, i = _FOUND[key]
    return new_episode("returns", d, 0, i, context=context)


@pytest.mark.parametrize("intent", sorted(RETURNS_INTENTS))
def test_returns_dev_paraphrases_disclose_their_slot_whatever_else_is_withheld(context, intent):
    slot = RETURNS_INTENTS[intent]
    others = ["order", "reason", "method"] if slot != "order" else ["reason", "method"]
    for other in others:
        if other == slot:
            continue
        for question in questions(intent):
            ep = _returns_episode(context, {slot, other})
            reply = say(ep, question)
            assert reply.act is UserAct.CLARIFY and slot in reply.revealed, (question, other, reply)


@pytest.mark.parametrize("intent", ["anything_else", "requirements", "which_order", "which_item"])
def test_any_plain_question_discloses_in_tracking(context, intent):
    eps = [new_episode("tracking", 12, 0, i, context=context) for i in range(40)]
    withheld = [i for i, ep in enumerate(eps) if not ep.problem.user.disclosure()["order"]]
    assert withheld
    for question in questions(intent):
        ep = new_episode("tracking", 12, 0, withheld[0], context=context)
        reply = say(ep, question)
        assert reply.act is UserAct.CLARIFY and reply.revealed == ("order",), (question, reply)


def test_b2_which_of_your_orders_and_which_item_are_answered(context):
    # returns d=9 seed 0 index 2 got "Yes, please go ahead." to both
    for question in ("Which of your drawer pull orders do you mean?", "Which item would you like to return?"):
        ep = new_episode("returns", 9, 0, 2, context=context)
        withheld = [s for s, t in ep.problem.user.disclosure().items() if not t]
        reply = say(ep, question)
        assert "go ahead" not in reply.text.lower()
        assert not withheld or (reply.act is UserAct.CLARIFY and reply.revealed)


def test_padding_questions_are_not_excused_once_nothing_is_withheld(context):
    ep = _returns_episode(context, {"reason"})
    first = say(ep, "Is there anything else I should know?")
    assert first.act is UserAct.CLARIFY and first.excused  # it had something to give
    assert not [s for s, t in ep.problem.user.disclosure().items() if not t]
    for question in ("Is there anything else I should know?", "Does that sound good?", "Shall I go ahead?"):
        reply = say(ep, question)
        assert reply.act is UserAct.CONTINUE and not reply.excused, reply


def test_asked_again_the_customer_adds_another_description(context):
    ep = next(e for i in range(100) if (e := new_episode("tracking", 9, 0, i, context=context))
              .problem.goal.reference["kind"] != "order_id" and e.problem.user.alternates)
    say(ep, "Which order do you mean?")
    again = say(ep, "Sorry, which order was it?")
    assert any(alt in again.text for alt in ep.problem.user.alternates) and again.act is UserAct.CONTINUE


def test_ordinals_name_their_end_and_resolve_uniquely(context):
    """Ordinals: "my second-oldest X order" counts from the oldest, "my second most recent" from the newest;
    each names exactly the target among all orders of the account."""
    seen = set()
    for env, d, i in itertools.product(("tracking", "returns"), (6, 9, 12, 15), range(30)):
        ep = new_episode(env, d, 0, i, context=context)
        g = ep.problem.goal
        if g.reference["kind"] != RefKind.ORDINAL.value:
            continue
        ref = OrderReference(RefKind.ORDINAL, g.reference["leaf"], g.reference["value"])
        seen.add(ref.value)
        assert [o.order_id for o, _ in matching_lines(ep.world.state(OrderBook).orders, ref, ep.world.catalog)] == [g.order_id]
        group = sorted((o for o in ep.world.state(OrderBook).orders if o.group_leaf == ref.leaf), key=lambda o: o.placed_at)
        assert group[ORDINALS[ref.value]].order_id == g.order_id
        words = {"oldest": "my oldest", "second_oldest": "second-oldest", "third_oldest": "third-oldest",
                 "latest": "my most recent", "second_latest": "second most recent",
                 "third_latest": "third most recent"}[ref.value]
        assert words in g.reference_text
    assert len(seen) >= 4


def test_b3_repro_reads_one_way(context):
    ep = new_episode("tracking", 6, 0, 2, context=context)
    text = ep.problem.goal.reference_text
    assert "I placed recently" not in text and not any(w in text for w in ("the first ", "the second ", "the third "))


def test_returns_target_line_position_is_drawn(context):
    """A2: the target line is not always L1 when its order has several lines."""
    positions = []
    for d, i in itertools.product((3, 6, 9, 12), range(25)):
        ep = new_episode("returns", d, 0, i, context=context)
        order = find_order(ep.world, ep.problem.goal.order_id)
        if len(order.lines) > 1:
            positions.append([ln.line_id for ln in order.lines].index(ep.problem.goal.line_id))
    assert len(positions) >= 20
    assert 0.2 <= positions.count(0) / len(positions) <= 0.8 and max(positions) >= 2
