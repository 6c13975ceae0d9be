"""E_POLICY's final answer as free text: read the answer (not the first number), echo it, refuse hedges.

A right answer is a success however it is worded ("With $382.09 as you told me, the policy
gives $24.46", "two weeks", "store credit, not a full refund"); an answer that offers several
("between $0 and $500", every outcome) is refused, never scored; and the reading depends on
the text and the question's public form only, so a refusal is no oracle.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest
from conftest import call

from ecom_bench.agents import get_policy
from ecom_bench.conversation import AgentAction, ToolCallRequest
from ecom_bench.domains.policy.rulebook import Rulebook
from ecom_bench.envs.policy.goal import PolicyGoal
from ecom_bench.envs.policy.agents import FINAL, PolicyOracle
from ecom_bench.episode import MAX_FAILED_FINALS_PER_TURN
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.domains.policy.rules import FAMILIES, SLOTS, PolicyQuestion, fmt_quantity
from ecom_bench.domains.policy.answers import AnswerRefused, read_policy_answer

HELD_OUT = Path(__file__).parent / "data" / "honest_policy_phrasings.json"
#: One family per kind of answer: the reading depends on the unit and the outcomes, not the topic.
FAMILY_OF_UNIT = {"$": "shipping_fee", "day": "return_window", "month": "warranty"}
#: A customer whose facts coincide with none of the figures below.
NEUTRAL = {key: slot.draw(random.Random(0)) for key, slot in SLOTS.items()}


def question(family: str, **facts: object) -> PolicyQuestion:
    return PolicyQuestion(family, {**NEUTRAL, **facts})


def read(text: str, q: PolicyQuestion | None) -> float | str | None:
    """The recorded value or outcome; None when refused."""
    try:
        answer = read_policy_answer(text, q)
    except AnswerRefused:
        return None
    return answer.option if answer.option is not None else answer.value


# ------------------------------------------------------------------ development phrasings
AMOUNTS = [  # (text, value) for a shipping-fee question whose customer's item costs $382.09
    ("$24.46", 24.46), ("24.46", 24.46), ("The shipping fee is $24.46.", 24.46),
    ("With $382.09 as you told me, the policy gives $24.46", 24.46),
    ("Based on your item price of $382.09, it comes to $24.46.", 24.46),
    ("$24.46 (from your item price of $382.09 and each clause of SHIP-1234)", 24.46),
    ("Per policy SHIP-1234, the answer is $24.46.", 24.46), ("24.46 dollars", 24.46),
    ("twenty-four dollars and forty-six cents", 24.46), ("$24 and 46 cents", 24.46), ("$24.46, not $382.09", 24.46),
    ("Answer: $24.46 (your item price: $382.09)", 24.46),
    ("Your item price is $382.09, so under SHIP-1234 the shipping fee works out to $24.46.", 24.46),
    ("Since your subtotal is under $50, the fee is $12.40", 12.40),
    ("At $0.80 per lb on 14.4 lb, plus the $12.99 base, the fee is $24.51", 24.51),
    ("12.99 + 0.80*14.4 = 24.51; minus 10% = 22.06", 22.06),
    ("Before the discount it's $27.18, so after 10% off it's $24.46", 24.46),
    ("The standard fee would be $30, but with your Gold membership it's $24.46", 24.46),
    ("The answer is $24.46: that's the $15.00 base plus $9.46 for weight.", 24.46),
    ("You will pay $24.46 for shipping on your $382.09 order.", 24.46), ("**$24.46**", 24.46),
    ("You could get $24.46 back on your $382.09 item.", 24.46),
    ("It's free.", 0.0), ("There is no shipping fee.", 0.0), ("The fee is $24.46. Feel free to ask more.", 24.46),
    ("$5, I mean $24.46", 24.46), ("The fee is $24.46 and the base is $12.99", 24.46),
    ("The policy starts from $12.99 plus $0.80 per lb, and after the clauses the fee is $24.46.", 24.46),
    ("Adding $2 gives $24.457, which rounds to $24.46.", 24.46), ("First the base is $10.00; after all the clauses it is $24.46.", 24.46),
    ("US$24.46", 24.46), ("24.46$", 24.46), ("USD 24.46", 24.46), ("about $24.46", 24.46), ("$1,234.50", 1234.5),
]
DAYS = [("14 days", 14), ("2 weeks", 14), ("two weeks", 14), ("fourteen days", 14), ("a 14-day window", 14),
        ("You have up to 30 days to return it.", 30), ("within 30 days", 30), ("thirty-one days", 31), ("a week", 7),
        ("2 weeks and 3 days", 17), ("14 days (two weeks)", 14), ("30", 30),
        ("Adding 3 days gives 11.77 days, which rounds to 12 days.", 12),
        ("Before rounding it is 11.77 days; rounded, the window is 12 days.", 12),
        ("It was delivered 12 days ago, so you have 30 days.", 30)]
MONTHS = [("18 months", 18), ("a year and a half", 18), ("one and a half years", 18), ("1 year and 6 months", 18),
          ("2 years", 24), ("a year", 12), ("24-month warranty", 24), ("half a year", 6),
          ("You've had it for 14 months, so you get 24 months of coverage", 24),
          ("The running total is 43.44 months, which rounds to 43 months: your coverage is 43 months.", 43)]
OUTCOME_ANSWERS = [  # (family, text, outcome)
    ("return_resolution", "Store Credit.", "store credit"),
    ("return_resolution", "You'll get store credit, not a full refund.", "store credit"),
    ("return_resolution", "Since you paid by store credit, the policy gives full refund.", "full refund"),
    ("return_resolution", "It isn't eligible.", "not eligible"),
    ("return_resolution", "The item is ineligible for return", "not eligible"),
    ("return_resolution", "That's not eligible for a refund, but you can do an exchange only.", "exchange only"),
    ("shipping_service", "It goes by ground shipping", "ground"),
    ("shipping_service", "2-day air", "two-day air"), ("shipping_service", "two day air", "two-day air"),
    ("shipping_service", "Not ground but two-day air", "two-day air"),
    ("shipping_service", "white glove delivery", "white-glove delivery"),
    ("warranty_service", "It will be mail in repair.", "mail-in repair"),
    ("warranty_service", "It's not covered", "not covered"), ("warranty_service", "refund", "refund"),
]
REFUSED = [  # (family, text): a hedge, a range, a bound, another kind of answer, or none
    ("shipping_fee", "between 0 and 32.38"), ("shipping_fee", "between $0 and $500"), ("shipping_fee", "$20 or $25"),
    ("shipping_fee", "$20-$25"), ("shipping_fee", "Roughly $20-25."), ("shipping_fee", "Up to $50."),
    ("shipping_fee", "$24.46 or less"), ("shipping_fee", "$10, $20, $30"), ("shipping_fee", "0 / 10 / 20 / 30"),
("shipping_fee", "not $20"),
    ("shipping_fee", "15%"), ("shipping_fee", "14 days"), ("shipping_fee", "store credit"),
    ("shipping_fee", "$14.99 for standard or $24.99 for expedited."),
    ("shipping_fee", "Free shipping if your subtotal is over $50; otherwise $5.99."),
    ("shipping_fee", "Base: $12.99\nWeight: 14.4 lb x $0.80 = $11.52\nSubtotal: $24.51\nShipping fee: $22.06"),
    ("return_window", "3 months"), ("return_window", "five to nine days"), ("return_window", "5-9 days"),
    ("return_window", "Probably 30 days, maybe 45."), ("return_window", "at least 30 days"),
    ("delivery_time", "It would ship ground or two-day air."), ("warranty", "730 days"),
    ("return_resolution", "not full refund"), ("return_resolution", "either full refund or store credit"),
    ("return_resolution", "You could get store credit or an exchange."), ("return_resolution", "a refund"),
    ("return_resolution", "12"), ("return_resolution", "Mail-in repair, or possibly on-site repair"),
    ("shipping_service", "ground / two-day air"), ("shipping_service", "not ground"),
    ("shipping_service", "Ground, overnight air, freight, two-day air"), ("warranty_service", "a repair"),
    ("shipping_fee", "no idea"), ("shipping_fee", "$24.46, but $5 for Gold members"),
    ("shipping_fee", "$5 (or $24.46 if you pay by card)"),
]


@pytest.mark.parametrize(("text", "value"), AMOUNTS)
def test_amounts_are_read_whatever_figure_comes_first(text, value):
    assert read(text, question("shipping_fee", item_price=382.09)) == pytest.approx(value)


@pytest.mark.parametrize(("text", "value"), DAYS + MONTHS)
def test_days_and_months_in_any_unit_or_words(text, value):
    family = "return_window" if (text, value) in DAYS else "warranty"
    assert read(text, question(family, days_since_delivery=12, item_age=14)) == pytest.approx(value)


@pytest.mark.parametrize(("family", "text", "outcome"), OUTCOME_ANSWERS)
def test_outcomes_named_in_a_sentence_with_negations_set_aside(family, text, outcome):
    assert read(text, question(family, payment="store credit")) == outcome


@pytest.mark.parametrize(("family", "text"), REFUSED)
def test_hedges_ranges_bounds_and_other_kinds_are_refused(family, text):
    assert read(text, question(family)) is None


def test_without_a_known_question_any_kind_is_read():
    """A final answer given while no policy request is active (a journey's other request)."""
    assert read("$12.50", None) == 12.5 and read("14 days", None) == 14 and read("store credit", None) == "store credit"
    assert read("It's two-day air.", None) == "two-day air" and read("no idea", None) is None


# ------------------------------------------------------------------ the held-out phrasings
def _held_out() -> dict:
    if not HELD_OUT.exists():
        pytest.skip("no held-out phrasings file")
    return json.loads(HELD_OUT.read_text())


def _family_of(outcome: str) -> str:
    return next(f.key for f in FAMILIES.values() if outcome in f.outcomes)


def test_held_out_answers_are_read_and_held_out_hedges_refused():
    """Phrasings written by someone who never saw the reader: every numeric and categorical answer reads
    as its value or outcome; every ambiguous one is refused whatever the question asks for."""
    data = _held_out()
    wrong = [e for e in data["numeric_answers"]
             if read(e["text"], question(FAMILY_OF_UNIT[e["unit"]])) != pytest.approx(e["value"])]
    wrong += [e for e in data["choice_answers"] if read(e["text"], question(_family_of(e["outcome"]))) != e["outcome"]]
    for e in data["ambiguous_answers"]:
        read_as = {f: read(e["text"], question(f)) for f in FAMILIES} | {None: read(e["text"], None)}
        wrong += [(e, f, v) for f, v in read_as.items() if v is not None]
    assert not wrong, wrong[:5]


# ------------------------------------------------------------------ through the tool, in episodes
def _forms(goal: dict) -> list[str]:
    """Ten ways a capable agent words a right answer (the oracle's), citing the customer's amount."""
    fam = FAMILIES[goal["family"]]
    if goal["kind"] == "choice":
        o = goal["answer"]
        other = next(x for x in fam.outcomes if x != o)
        return [f"{fam.sets.capitalize()} is {o}.", f"Since you paid by {goal['situation']['payment']}, the policy "
                f"gives {o}.", f"You'll get {o}.", f"{o} (per {goal['rule_id']})", f"Per policy {goal['rule_id']}, "
                f"the answer is {o}.", o.upper(), f"{o}, not {other}", f"Answer: {o}",
                f"Under {goal['rule_id']} the first clause that holds gives {o}.", f"It's {o}."]
    key = fam.amount_slot
    label, x = SLOTS[key].label, SLOTS[key].fmt(goal["situation"][key])
    a = fmt_quantity(goal["unit"], float(goal["answer"]))
    n = float(goal["answer"])
    worded = f"{n:.2f} dollars" if goal["unit"] == "$" else (f"{int(n) // 7} weeks" if goal["unit"] == "day"
                                                             and n % 7 == 0 else f"{a} in total")
    return [f"{fam.sets.capitalize()} is {a}.", f"With {x} as you told me, the policy gives {a}.",
            f"Based on your {label} of {x}, it comes to {a}.", f"{a} (from your {label} of {x})",
            f"Per policy {goal['rule_id']}, the answer is {a}.", worded, f"{a}, not {x}",
            f"Answer: {a} (your {label}: {x})", f"Your {label} is {x}, so {fam.sets} works out to {a}.",
            f"For your {label} of {x} you get {a}."]


@dataclasses.dataclass
class Reworded:
    """The oracle, answering in sentence form `form` of `_forms`."""

    form: int
    name: str = "reworded-oracle"
    reads_hidden_goal: bool = True

    def act(self, messages, hidden, status):  # noqa: ANN001, ANN201
        action = PolicyOracle().act(messages, hidden, status)
        call = action.tool_calls[0]
        if call.name != FINAL:
            return action
        answer = _forms(hidden["goal"])[self.form]
        return AgentAction(tool_calls=(ToolCallRequest(FINAL, {"answer": answer}, id=call.id),))


@pytest.mark.parametrize("d", [3, 6, 9, 12])
def test_reworded_right_answers_succeed_as_often_as_the_plain_oracle(context, d):
    oracle = get_policy("policy", "oracle")
    for i in range(10):
        plain = run_policy(new_episode("policy", d, 0, i, context=context), oracle).result.reward.success
        for form in range(10):
            run = run_policy(new_episode("policy", d, 0, i, context=context), Reworded(form))
            assert run.result.reward.success == plain, (form, _forms(run.result.hidden["goal"])[form],
                                                        run.result.explanation())


def _episode(context, kind: str, d: int = 6, start: int = 0):  # noqa: ANN001, ANN202
    for i in range(start, start + 80):
        ep = new_episode("policy", d, 0, i, context=context)
        if ep.problem.goal.kind == kind:
            return ep
    raise AssertionError(f"no {kind} question")


def test_the_tool_says_what_it_recorded(context):
    ep = _episode(context, "number")
    goal: PolicyGoal = ep.problem.goal
    out = call(ep, "answer_policy_question", {"answer": f"It comes to {goal.answer_text()}, I checked."})
    assert not out.error and out.text == f"Recorded: {goal.answer_text()} as {FAMILIES[goal.family].sets}."
    ep = _episode(context, "choice")
    goal = ep.problem.goal
    out = call(ep, "answer_policy_question", {"answer": f"You will get {goal.answer}."})
    assert out.text == f"Recorded: {goal.answer} as {FAMILIES[goal.family].sets}." and ep.result().reward.success


def test_a_refused_answer_leaves_room_to_answer_again(context):
    ep = _episode(context, "number")
    goal: PolicyGoal = ep.problem.goal
    call(ep, "policy_search", {"query": f"{goal.title} {goal.rule_id}"})
    for _ in range(MAX_FAILED_FINALS_PER_TURN):
        decoy = fmt_quantity(goal.unit, 2 * float(goal.answer))
        out = call(ep, "answer_policy_question", {"answer": f"Either {goal.answer_text()} or {decoy}"})
        assert out.error and out.text.startswith("Not recorded:") and not ep.done and not ep.world.answers
    out = call(ep, "answer_policy_question", {"answer": goal.answer_text()})
    assert not out.error and ep.done and ep.result().reward.success


def test_a_refusal_says_nothing_about_which_candidate_is_right(context):
    """The same text gets the same reply from two questions of one family, whether one of its candidates
    is the right answer there or not (the reading never sees the answer)."""
    assert {f.name for f in dataclasses.fields(PolicyQuestion)} == {"family", "situation"}
    first = _episode(context, "number")
    family = first.problem.goal.family
    second = next(ep for i in range(200) if (ep := new_episode("policy", 6, 0, i, context=context)).problem.goal.family
                  == family and ep.problem.goal.answer != first.problem.goal.answer)
    texts = [f"{first.problem.goal.answer_text()} or {second.problem.goal.answer_text()}",
             f"between {first.problem.goal.answer_text()} and {second.problem.goal.answer_text()}"]
    for text in texts:
        replies = [call(ep, "answer_policy_question", {"answer": text}) for ep in (first, second)]
        assert all(r.error for r in replies) and replies[0].text == replies[1].text


def test_listing_every_outcome_or_a_covering_range_never_scores(context):
    for i in range(40):
        ep = new_episode("policy", 6, 0, i, context=context)
        goal: PolicyGoal = ep.problem.goal
        if goal.kind == "choice":
            text = ", ".join(FAMILIES[goal.family].outcomes)
        else:
            text = f"between {fmt_quantity(goal.unit, 0)} and {fmt_quantity(goal.unit, 10 * float(goal.answer))}"
        out = call(ep, "answer_policy_question", {"answer": text})
        assert out.error and not ep.world.answers, (text, out.text)


def test_a_journey_reads_each_policy_answer_against_its_own_question(context):
    """Each policy request of a journey registers its question under its intent; the journey's oracle,
    answering each in turn, passes every one."""
    for i in range(60):
        ep = new_episode("journey", 12, 0, i, context=context)
        policy = [t for t in ep.problem.goal.tasks if t.env == "policy"]
        if policy:
            break
    else:
        pytest.fail("no journey with a policy request")
    questions = ep.world.state(Rulebook).questions
    assert all(questions[t.intent].family == t.goal.family for t in policy)
    assert set(questions) == {t.intent for t in policy}
    result = run_policy(ep, get_policy("journey", "oracle")).result
    assert result.reward.success, result.explanation()
