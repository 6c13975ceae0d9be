"""The E_POLICY customer understands plain questions, and a plain-spoken agent does as well as one
that copies the policy's labels.

* A question about a fact in plain words ("What do the items in your order add up to?") discloses
  that fact when it is withheld, and restates it when it was told; never only a different one.
* Every part of a compound question is answered, or the customer says it could not place a part
  and gives the rest of its situation: no part vanishes.
* A CLARIFY (excused) reply always disclosed something new; a question about something else,
  or a check-in once nothing is withheld, is a charged CONTINUE with a natural reply.
* The heuristic agent asking in plain English (`plain_policy_agent`) succeeds as often as the
  same agent asking with the document's labels.

Development phrasings are `policy_dev_phrasings`; `tests/data/honest_policy_phrasings.json`
was written by someone who never saw the customer's code and is held out (checked, never tuned on).
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterable
from pathlib import Path

import pytest

from ecom_bench.agents import get_policy
from ecom_bench.envs import get_env
from ecom_bench.envs.policy.goal import PolicyGoal
from ecom_bench.envs.policy.questions import RIVALS, read_question
from ecom_bench.envs.policy.phrases import PHRASES as POLICY_PHRASES
from ecom_bench.envs.policy.user import PolicyUser
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.users import Disclosure, UserAct, UserMessage
from ecom_bench.domains.policy.rules import SLOTS
from plain_policy_agent import PlainJourneyHeuristic, PlainPolicyHeuristic
from policy_dev_phrasings import CHECK_INS, COMPOUND, GENERAL, QUESTIONS, UNRELATED

HELD_OUT = Path(__file__).parent / "data" / "honest_policy_phrasings.json"


@pytest.fixture(scope="module")
def goal(context) -> PolicyGoal:
    """A policy goal: its situation holds every fact the customer can be asked about."""
    return new_episode("policy", 6, 0, 0, context=context).problem.goal


def customer(goal: PolicyGoal, withheld: Iterable[str]) -> PolicyUser:
    """The goal's customer, holding back exactly `withheld` (noise-free, so values read back verbatim)."""
    from ecom_bench.difficulty import Difficulty

    return PolicyUser(goal, Difficulty.from_level(0), 7, Disclosure({k: False for k in withheld}))


def ask(user: PolicyUser, question: str) -> UserMessage:
    return user.reply(question, None, last_turn=False)  # type: ignore[arg-type]  # the world is not read


def value(goal: PolicyGoal, key: str) -> str:
    return SLOTS[key].fmt(goal.situation[key])


def rivals(key: str) -> set[str]:
    """The facts asked for in words most like `key`'s (`questions.RIVALS`), itself excluded."""
    return set().union(*(g for g in RIVALS if key in g)) - {key}


# ------------------------------------------------------------------ one fact
@pytest.mark.parametrize("key", list(SLOTS))
def test_a_plain_question_discloses_the_fact_it_asks_for(goal, key):
    """Withheld together with every fact asked in similar words, the asked fact is the one disclosed."""
    for question in QUESTIONS[key]:
        user = customer(goal, {key} | rivals(key))
        reply = ask(user, question)
        assert key in reply.revealed, f"{question!r} did not disclose {key}: {reply.text!r}"
        assert reply.act is UserAct.CLARIFY and reply.excused and value(goal, key) in reply.text


def test_specific_questions_narrow_the_answer(goal):
    """Asked one fact, the customer gives that fact, not everything it holds back (dev phrasings)."""
    exact = total = 0
    for key, texts in QUESTIONS.items():
        for question in texts:
            reply = ask(customer(goal, {key} | rivals(key)), question)
            exact += reply.revealed == (key,)
            total += 1
    assert exact >= 0.95 * total, f"only {exact}/{total} disclosed exactly the fact asked for"


@pytest.mark.parametrize("key", list(SLOTS))
def test_a_fact_already_told_is_restated_not_swapped_for_another(goal, key):
    """Nothing withheld: the fact asked for is said (again), the turn is charged, and no other amount
    stands in for it ("how much does the order come to" is never answered with the item's price)."""
    user = customer(goal, ())
    for question in QUESTIONS[key]:
        reply = ask(user, question)
        assert value(goal, key) in reply.text, (question, reply.text)
        assert reply.act is UserAct.CONTINUE and not reply.excused and not reply.revealed
    assert ask(user, QUESTIONS[key][0]).text.startswith("As I said")


def test_a_question_about_a_told_fact_answers_it_first_then_offers_what_is_held_back(goal):
    user = customer(goal, {"item_price"})
    reply = ask(user, "How much does the order come to?")
    assert reply.text.startswith(f"My order subtotal is {value(goal, 'subtotal')}")
    assert reply.revealed == ("item_price",) and reply.act is UserAct.CLARIFY


def test_the_document_labels_still_name_exactly_their_facts():
    """The label-copying heuristic's question ("What is your X, Y and Z?") reads as exactly X, Y, Z."""
    rng = random.Random(0)
    for _ in range(300):
        keys = rng.sample(list(SLOTS), rng.randint(1, 6))
        labels = [SLOTS[k].label for k in keys]
        listed = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
        reading = read_question(f"To apply the policy I need a few details. What is your {listed}?")
        assert set(reading.slots) == set(keys) and not reading.unmapped, (keys, reading)


# ------------------------------------------------------------ several parts
@pytest.mark.parametrize(("question", "facts"), COMPOUND)
def test_every_part_of_a_compound_question_is_answered(goal, question, facts):
    user = customer(goal, set(facts) | set(itertools.chain.from_iterable(rivals(k) for k in facts)))
    reply = ask(user, question)
    assert set(facts) <= set(reply.revealed), (question, reply.text)
    for key in facts:
        assert value(goal, key) in reply.text


def test_a_part_the_customer_cannot_place_is_not_dropped(goal):
    """ "... and what is it?" after another question: which fact is unclear, so the customer says so
    and gives the rest of what it holds back, on top of what it understood."""
    held = {"competitor_type", "price_gap", "tier"}
    reply = ask(customer(goal, held), "Who has the lower price and what is it?")
    assert set(reply.revealed) == held
    assert any(lead in reply.text for lead in POLICY_PHRASES["not_sure"])


# --------------------------------------------------------- general, check-ins
def test_a_general_question_discloses_everything_held_back(goal):
    held = {"weight", "tier", "season"}
    for question in GENERAL:
        reply = ask(customer(goal, held), question)
        assert set(reply.revealed) == held and reply.act is UserAct.CLARIFY, (question, reply.text)


def test_a_check_in_gets_a_natural_reply(goal):
    """While something is held back it is offered; once nothing is, the customer waits for the answer,
    or thanks the agent for one it proposed, and the turn is charged."""
    for question in CHECK_INS:
        reply = ask(customer(goal, {"tier"}), question)
        assert reply.revealed == ("tier",) and reply.act is UserAct.CLARIFY, question
        user = customer(goal, ())
        waiting = ask(user, question)
        assert waiting.text in POLICY_PHRASES["still_waiting"] and not waiting.excused, (question, waiting.text)
        ask(user, "Under the policy the fee is $12.40.")
        thanked = ask(user, question)
        assert thanked.text in POLICY_PHRASES["thanks"] and not thanked.excused, (question, thanked.text)


def test_a_question_about_something_else_is_no_clarification(goal):
    for question in UNRELATED:
        reading = read_question(question)
        if reading.slots:
            continue  # the customer took it for a question about its situation: answered as one
        reply = ask(customer(goal, {"tier"}), question)
        assert reply.act is UserAct.CONTINUE and not reply.excused and not reply.revealed, (question, reply)


# ------------------------------------------------------------------ held out
def _held_out() -> dict:
    if not HELD_OUT.exists():
        pytest.skip("tests/data/honest_policy_phrasings.json is not there")
    return json.loads(HELD_OUT.read_text())


def test_held_out_questions_disclose_the_fact_they_ask_for(goal):
    """Every question of the writer's discloses the fact it asks for (withheld with its rivals):
    never nothing, never only a different fact."""
    for key, texts in _held_out()["questions"].items():
        for question in texts:
            reply = ask(customer(goal, {key} | rivals(key)), question)
            assert key in reply.revealed, f"{key}: {question!r} -> {reply.text!r}"


def test_held_out_compound_questions_answer_every_part(goal):
    for case in _held_out()["compound"]:
        facts = set(case["facts"])
        reply = ask(customer(goal, facts), case["text"])
        assert facts <= set(reply.revealed), (case["text"], reply.text)


def test_held_out_general_questions_and_check_ins(goal):
    """General questions and check-ins offer what is held back; once nothing is, a check-in gets
    "waiting for the policy" before an answer and thanks after one, and is charged."""
    data = _held_out()
    held = {"weight", "tier", "season"}
    for question in data["general"] + data["check_ins"]:
        assert set(ask(customer(goal, held), question).revealed) == held, question
    for question in data["check_ins"]:
        user = customer(goal, ())
        waiting = ask(user, question)
        ask(user, "The fee comes to $12.40 under the policy.")
        thanked = ask(user, question)
        assert waiting.text in POLICY_PHRASES["still_waiting"] and thanked.text in POLICY_PHRASES["thanks"], (question, waiting.text, thanked.text)
        assert not waiting.excused and not thanked.excused


# --------------------------------------------------------------- the agents
def _success(agent, env: str, d: int, n: int, context) -> float:  # noqa: ANN001
    return sum(run_policy(new_episode(env, d, 1000, i, context=context), agent).result.reward.success
               for i in range(n)) / n


@pytest.mark.parametrize("d", [6, 12])
def test_the_plain_spoken_heuristic_does_as_well_as_the_label_copying_one(context, d):
    slot_words = _success(get_policy("policy", "heuristic"), "policy", d, 40, context)
    plain = _success(PlainPolicyHeuristic(), "policy", d, 40, context)
    assert plain >= slot_words - 0.05, f"d={d}: plain {plain:.3f} vs slot words {slot_words:.3f}"


@pytest.mark.slow
@pytest.mark.parametrize("d", [3, 9])
def test_the_plain_spoken_journey_heuristic_does_as_well_on_its_policy_requests(context, d):
    def policy_success(agent) -> float:  # noqa: ANN001
        done = []
        for i in itertools.count():
            episode = new_episode("journey", d, 1000, i, context=context)
            if "policy" in [t.env for t in episode.problem.goal.tasks]:
                subtasks = run_policy(episode, agent).result.verdict.details["subtasks"]
                done.append(all(s["success"] for s in subtasks if s["env"] == "policy"))
            if len(done) == 20:
                return sum(done) / len(done)
        raise AssertionError("unreachable")

    slot_words, plain = policy_success(get_policy("journey", "heuristic")), policy_success(PlainJourneyHeuristic(get_env("journey").chained))
    assert plain >= slot_words - 0.05, f"d={d}: plain {plain:.3f} vs slot words {slot_words:.3f}"


@pytest.mark.parametrize("question,slots", [
    ("Could you let me know which department the item is from and the size class of the item?",
     {"category", "size_class"}),
    ("Could you tell me the size class and the department of the item?", {"category", "size_class"}),
    ("Can you tell me how much lower the competitor price is, when you made the purchase (which sale or season) "
     "and the days since purchase?", {"price_gap", "season", "days_since_purchase"}),
])
def test_facts_named_in_one_breath_are_all_asked(question, slots):
    """A fact named by its own words is asked even beside a rival named by its label (outside red team)."""
    assert slots <= set(read_question(question).slots)
