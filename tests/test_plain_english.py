"""A careful agent that asks in plain English is understood.

The questions come from `tests/data/questions_heldout.json`, written by someone who never
saw the customers' code, so they test understanding, not our keywords. Every customer
is asked each question once, at the start of episodes where something is withheld:

* a *generic* question (requirements, "anything else?"; for tracking, which order)
  discloses at least 95% of the withheld slots (in fact all: the rule is "a request
  naming no withheld slot gets everything", `Customer.to_disclose`);
* *any* question, specific ones included, is never stonewalled: while something is
  withheld the reply discloses something, and it is never a charged "go ahead";
* once nothing is withheld, padding ("Is there anything else I can help you with?")
  is not excused: the turn is charged (`UserMessage.excused`).
"""

from __future__ import annotations

import copy

import pytest

from conftest import questions
from ecom_bench.episode import new_episode
from ecom_bench.users import Disclosure

pytestmark = pytest.mark.reliability

#: Per env: the intents that ask in general (must disclose everything withheld) and the specific ones.
INTENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "discovery": (("requirements", "anything_else"), ("budget", "brand", "rating", "shipping")),
    "substitution": (("requirements", "anything_else"), ("budget", "brand", "rating", "shipping")),
    "returns": (("anything_else",), ("which_order", "which_item", "return_reason", "return_method",
                                      "exchange_variant")),
    "tracking": (("which_order", "anything_else"), ()),
    "cart": (("anything_else",), ("cart_variant", "cart_quantity")),
    "bundle": (("requirements", "anything_else"), ("budget",)),
    "policy": (("anything_else",), ("policy_facts",)),  # policy_facts mixes general and specific
}
DIFFICULTIES = (6, 12)
#: Episodes per (env, d) that withhold something (the first ones of the dataset).
EPISODES = 4


def fresh_user(user):  # noqa: ANN001, ANN201
    """The episode's customer before any reply: a copy with its own disclosure record."""
    clone = copy.copy(user)
    clone._disclosure = Disclosure(dict(user._disclosure.told))
    return clone


def withholding_episodes(context, env: str, d: int):  # noqa: ANN001, ANN201
    found, i = [], 0
    while len(found) < EPISODES and i < 60:
        episode = new_episode(env, d, 0, i, context=context)
        if episode.problem.user.disclosure() and not all(episode.problem.user.disclosure().values()):
            found.append(episode)
        i += 1
    assert found, f"no {env} episode at d={d} withholds anything"
    return found


@pytest.mark.parametrize("env", list(INTENTS))
@pytest.mark.parametrize("d", DIFFICULTIES)
def test_plain_questions_disclose_what_is_withheld(context, env, d):
    generic, specific = INTENTS[env]
    disclosed = withheld = 0
    for episode in withholding_episodes(context, env, d):
        hidden = [s for s, told in episode.problem.user.disclosure().items() if not told]
        for intent in generic + specific:
            for question in questions(intent, heldout=True):
                user = fresh_user(episode.problem.user)
                reply = user.reply(question, episode.world, last_turn=False)
                assert reply.revealed, f"{env} d={d}: {question!r} disclosed nothing: {reply.text!r}"
                assert reply.excused, f"{env}: a disclosing reply must not be charged: {reply.act}"
                if intent in generic:
                    disclosed += sum(1 for s in hidden if user.disclosure()[s])
                    withheld += len(hidden)
    assert disclosed >= 0.95 * withheld, f"{env} d={d}: generic questions disclosed {disclosed}/{withheld}"


@pytest.mark.parametrize("env", list(INTENTS))
def test_padding_is_charged_once_nothing_is_withheld(context, env):
    """Asked everything first, the customer has nothing more: "anything else?" is a charged turn."""
    for i in range(3):
        episode = new_episode(env, 6, 0, i, context=context)
        user = fresh_user(episode.problem.user)
        user.reply("Could you tell me everything I need to know about what you want?", episode.world,
                   last_turn=False)
        assert all(user.disclosure().values())
        for question in questions("anything_else", heldout=True)[:8]:
            reply = user.reply(question, episode.world, last_turn=False)
            assert not reply.excused, f"{env}: padding {question!r} was excused: {reply.text!r} ({reply.act})"
