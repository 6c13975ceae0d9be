"""What the outside red team found, held to the bar after the fixes it prompted.

* bundle_blind: never reads the request; the customer's review of a bogus proposal read out
  every missing category and the budget (77% of d = 3 episodes). Now the review names only
  kinds of problem and costs patience.
* returns_probe: a false "not eligible" drew the delivery age and the return window, which
  located the line (50% at d = 3), and a free "that's a pity" CONFIRM when it was true.
  Now the customer answers such a claim the same way whether it is true or not.
* An honest agent that tells the customer an item cannot be returned crashed the customer
  (a leftover call to a removed method): it must get a reply.
* oos_oracle (second red team): what sells out mid-dialogue is drawn from the products that
  fit the request best, so searching twice and filtering on what vanished is a side channel.
  It stayed at 0 of 40 per d (few products qualify at high d); held to the bar here.
* bundle_template (third red team): submits the public template of the project named in the
  opening. When the task's category count equalled the template's size, the hidden list was
  the template (10 of 60 at d = 12 on the test catalogue). Now a task never requires all of a
  template or all but one; also held to the bar when guessing the template minus two.
* returns_plain (fourth red team, fairness): "Which item would you like to return, and why?"
  got only the reason from a customer who had described the item (the "item" cue named a slot
  only order-number customers have); a confirmation about a look-alike ("is it the X you want
  to send back?") got "Yes, please go ahead". Now "which item" asks for the description, and
  a request that asks nothing withheld gets the customer's own description restated.
* cart_blind (fifth red team): never reads the request; names every viewed product in one
  question or proposal and keeps the ones the customer answered, corrected or called "any is
  fine" for (47% at d = 3). Now a message naming several products the customer never asked for
  is a mess, objected to as a whole.
* cart_word_ask (sixth) and cart_proposals (seventh red team): a pile of name words, then one word
  per viewed product and free objections to proposed variants, told wanted items and their variants
  apart (up to 80%). Now those replies need the item's name in full, a rejected proposal costs
  patience, and the blind agents do no better than asking plainly what is needed.
"""

from __future__ import annotations

import pytest

from conftest import examples, long_run, say
from ecom_bench.domains.orders.book import OrderBook
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from red_team.bundle_blind import BundleBlind
from red_team.cart_blind import Blind as CartBlind
from red_team.cart_proposals import play as cart_proposals, play_baseline as cart_plain_question
from red_team.cart_word_ask import Agent as CartWordAsk, Generic as CartGeneric
from red_team.bundle_template import BundleTemplate, guessing
from red_team.oos_oracle import OOSOracle
from red_team.returns_plain import OneAsk, PlainWording
from red_team.returns_probe import ReturnsProbe

pytestmark = pytest.mark.reliability

CASES = [pytest.param("bundle", BundleBlind, id="bundle_blind"),
         pytest.param("returns", ReturnsProbe, id="returns_probe"),
         pytest.param("bundle", BundleTemplate, id="bundle_template"),
         pytest.param("bundle", guessing(2), id="bundle_template-minus-two"),
         pytest.param("discovery", lambda: OOSOracle("discovery"), id="oos_oracle-discovery"),
         pytest.param("substitution", lambda: OOSOracle("substitution"), id="oos_oracle-substitution")]


@pytest.mark.parametrize(("env", "policy_cls"), CASES)
def test_red_team_strategy_stays_under_the_bar(context, env, policy_cls):
    for d in ((3, 6, 9, 12) if long_run() else (3, 12)):
        n = examples(25)
        wins = sum(run_policy(new_episode(env, d, 0, i, context=context), policy_cls()).result.reward.success
                   for i in range(n))
        assert wins <= max(1, 0.05 * n), f"{policy_cls} on {env} at d={d}: {wins} of {n}"


@pytest.mark.parametrize("d", [3, 6, 9])
def test_telling_the_customer_an_item_is_not_returnable_gets_the_same_reply_either_way(context, d):
    replies = {}
    for i in range(8):
        episode = new_episode("returns", d, 0, i, context=context)
        reply = say(episode, "I checked the store rule: this item can't be returned, "
                                      "the return window has closed.")
        assert reply is not None and reply.text and not reply.excused
        replies.setdefault(episode.problem.goal.eligible, set()).add(reply.act)
        assert "days ago" not in reply.text and "window is" not in reply.text
    assert len({act for acts in replies.values() for act in acts}) == 1


@pytest.mark.parametrize("d", [6, 12])
def test_asking_which_item_in_plain_words_is_not_penalised(context, d):
    n = examples(25)
    wins = {cls.name: sum(run_policy(new_episode("returns", d, 0, i, context=context), cls()).result.reward.success
                          for i in range(n)) for cls in (OneAsk, PlainWording)}
    assert wins["plain_wording"] >= wins["one_ask"] - max(1, 0.08 * n), wins


@pytest.mark.parametrize("d", [6, 9])
def test_a_confirmation_about_any_line_gets_the_customers_own_description(context, d):
    """Asked "is it the <product> you want to send back?" once nothing is withheld, the customer
    restates what they mean, the same way for the right line and a look-alike: no "yes" to the
    wrong one, and no yes/no oracle."""
    checked = 0
    for i in range(12):
        episode = new_episode("returns", d, 0, i, context=context)
        goal, world = episode.problem.goal, episode.world
        user = episode.problem.user
        for slot in list(user.withheld()):
            user._disclosure.reveal(slot)
        target = world.product(goal.product_id)
        other = next((world.product(ln.product_id) for o in world.state(OrderBook).orders for ln in o.lines
                      if ln.line_id != goal.line_id and (p := world.product(ln.product_id)) is not None
                      and p.leaf_category == target.leaf_category), None)
        if other is None:
            continue
        acts = set()
        for product in (target, other):
            reply = say(episode, f"Just to confirm before I start anything: is it the {product.title} "
                                          "you want to send back?")
            assert reply is not None and not reply.text.lower().startswith("yes"), reply.text
            said = reply.text.lower()
            assert (user.script.item if user.direct else user.full_reference).lower() in said, reply.text
            acts.add(reply.act)
        assert len(acts) == 1
        checked += 1
    assert checked >= 6


def _cart_wins(context, d: int, n: int, play) -> int:
    wins = 0
    for i in range(n):
        episode = new_episode("cart", d, 0, i, context=context)
        play(episode)
        wins += episode.result().reward.success
    return wins


def test_naming_every_viewed_product_or_their_words_to_the_cart_customer_gains_nothing(context):
    """The blind cart agents (fifth and sixth red teams) never read the request. What remains to them
    is the customer answering a plain question ("which variant and how many for the items on your
    list?") with the withheld details, each naming its item: an agent asking exactly that is the
    baseline, and naming every viewed product, or a pile of their name words, must add nothing."""
    for d in ((3, 6, 9, 12) if long_run() else (3, 9)):
        n = examples(25)
        baseline = _cart_wins(context, d, n, lambda e: CartGeneric(e).play())
        words = _cart_wins(context, d, n, lambda e: CartWordAsk(e).play())
        blind = _cart_wins(context, d, n, lambda e: CartBlind(e).run())
        proposals = _cart_wins(context, d, n, cart_proposals)
        plain = _cart_wins(context, d, n, cart_plain_question)
        assert words <= max(1, 0.05 * n), f"word-list agent at d={d}: {words} of {n}"
        for name, wins in (("cart_blind", blind), ("cart_proposals", proposals)):
            assert wins <= max(baseline, plain) + max(1, 0.05 * n), f"{name} at d={d}: {wins} of {n} " \
                f"(asking plainly: {baseline}, {plain})"
