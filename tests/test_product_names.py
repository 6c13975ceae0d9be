"""Customers name products as people do, on any catalogue, and know them when the agent names them.

`tests/data/amazon_small_nocomma.jsonl` is 24 hand-written products in the Amazon Reviews 2023
metadata schema whose titles have no separator at all ("Lodge 10.25 Inch Cast Iron
Pre-Seasoned Skillet Black"), over ten categories, with same-brand look-alikes whose titles
begin alike (two Lodge 10.25-inch skillets, two washes of Levi's 505 jeans). On it: names end
at a natural boundary, say which look-alike is meant, read grammatically ("a pair of ...
Jeans"), and the cart customer never objects to the product it asked for when the agent
calls it by its full title.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from ecom_bench.agents.base import get_policy
from ecom_bench.catalog.embedders import get_embedder
from ecom_bench.catalog.loaders import load_catalog
from ecom_bench.catalog.naming import (
    NameIndex,
    a_named,
    agreement,
    catalogue_name,
    distinct_name,
    name_forms,
    noun_from,
    product_noun,
    short_name,
)
from ecom_bench.catalog.search import SearchEngine
from ecom_bench.envs.cart.phrases import PHRASES as CART_PHRASES
from ecom_bench.envs.context import EnvContext
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.users import UserAct

DATA = Path(__file__).parent / "data" / "amazon_small_nocomma.jsonl"
OBJECTIONS = CART_PHRASES["unasked"] + CART_PHRASES["mess"]


@pytest.fixture(scope="module")
def nocomma(tmp_path_factory) -> EnvContext:
    catalog = load_catalog(DATA, cache_dir=tmp_path_factory.mktemp("hf-datasets"))
    return EnvContext(catalog, SearchEngine(catalog, get_embedder("wordllama")))


def _objects(text: str) -> bool:
    """Whether a customer message is its objection to things it never asked for (typos and all)."""
    return any(difflib.SequenceMatcher(None, text, o).ratio() >= 0.85 for o in OBJECTIONS)


def _product(context: EnvContext, title_start: str):
    return next(p for p in context.catalog if p.title.startswith(title_start))


# ------------------------------------------------------------------ names
@pytest.mark.parametrize("title_start, name", [
    ("Lodge 10.25 Inch Cast Iron Pre-Seasoned Skillet Black", "Lodge 10.25 Inch Cast Iron Pre-Seasoned Skillet"),
    ("Sony WH-1000XM4", "Sony WH-1000XM4 Wireless Premium Noise Canceling Overhead Headphones"),
    ("Sony WH-CH520", "Sony WH-CH520 Wireless Headphones"),
    ("Logitech M510", "Logitech M510 Wireless Computer Mouse"),
    ("Duracell Coppertop AA", "Duracell Coppertop AA Batteries"),
    ("Mr. Coffee", "Mr. Coffee 12-Cup Programmable Coffee Maker"),
    ("Cuisinart", "Cuisinart DCC-3200P1 Perfectemp Coffee Maker"),
    ("Wrangler", "Wrangler Authentics Men's Classic 5-Pocket Regular Fit Cotton Jean"),
    ("Brooks", "Brooks Men's Ghost 15 Neutral Running Shoe"),
    ("Hydro Flask", "Hydro Flask Wide Mouth Bottle"),
])
def test_a_title_without_separators_is_cut_at_its_head_noun_or_a_detail_word(nocomma, title_start, name):
    assert short_name(_product(nocomma, title_start)) == name


def test_every_name_is_a_title_prefix_that_ends_on_a_word_of_the_name(nocomma):
    for p in nocomma.catalog:
        forms = name_forms(p)
        assert forms[0] == short_name(p) and forms[-1] == p.title
        for form in forms:
            assert p.title.startswith(form), (form, p.title)
            assert form.split()[-1].lower() not in {"with", "for", "and", "of", "the", "a"}, form
        assert [len(f) for f in forms] == sorted({len(f) for f in forms})  # shortest first, no repeats


def test_synthetic_names_are_the_marketplace_head(context):
    for p in list(context.catalog)[:2000]:
        assert short_name(p) == p.title.split(",")[0].strip()


def test_look_alikes_are_told_apart_by_the_shortest_longer_name(nocomma):
    black = _product(nocomma, "Lodge 10.25 Inch Cast Iron Pre-Seasoned Skillet Black")
    red = _product(nocomma, "Lodge 10.25 Inch Cast Iron Pre-Seasoned Skillet with")
    dark = _product(nocomma, "Levi's Men's 505 Regular Fit Jeans Dark")
    rinse = _product(nocomma, "Levi's Men's 505 Regular Fit Jeans Rinse")
    assert short_name(black) == short_name(red) and short_name(dark) == short_name(rinse)
    assert distinct_name(black, [red.title]) == black.title
    assert distinct_name(dark, [rinse.title]) == "Levi's Men's 505 Regular Fit Jeans Dark Stonewash"
    assert distinct_name(rinse, [dark.title, black.title]) == "Levi's Men's 505 Regular Fit Jeans Rinse"
    assert distinct_name(dark, [black.title]) == short_name(dark)  # nothing alike in view: the short name
    assert distinct_name(dark, [dark.title]) == dark.title  # the same title cannot be told apart
    mouse = _product(nocomma, "Logitech M510")
    assert catalogue_name(nocomma.catalog, mouse) == short_name(mouse)
    assert catalogue_name(nocomma.catalog, rinse) == "Levi's Men's 505 Regular Fit Jeans Rinse"


def test_a_phrase_names_the_product_it_names_longest(nocomma):
    black = _product(nocomma, "Lodge 10.25 Inch Cast Iron Pre-Seasoned Skillet Black")
    red = _product(nocomma, "Lodge 10.25 Inch Cast Iron Pre-Seasoned Skillet with")
    index = NameIndex.of([black, red])

    def named(text: str) -> list[set[str]]:
        return [set(m.ids) for m in index.mentions(text)]

    assert named(f"I've added 1 x {black.title} to your cart.") == [{black.id}]
    assert named(f"Shall I add the {red.title}?") == [{red.id}]
    assert named("the lodge 10.25 inch cast iron pre-seasoned skillets") == [{black.id, red.id}]  # shared
    assert named("a skillet from Lodge") == []
    assert named(f"{black.title} and {red.title}") == [{black.id}, {red.id}]


# ------------------------------------------------------------------ grammar
def test_articles_and_verbs_agree_with_the_name():
    jeans, batteries, mice = noun_from("Jeans"), noun_from("Batteries"), noun_from("Mice")
    assert a_named("Levi's Men's 505 Regular Fit Jeans Rinse", jeans) == "a pair of Levi's Men's 505 Regular Fit Jeans Rinse"
    assert a_named("Levi's 505 Jeans", jeans, one=True) == "one pair of Levi's 505 Jeans"
    assert a_named("Duracell Coppertop AA Batteries", batteries) == "a pack of Duracell Coppertop AA Batteries"
    assert a_named("Energizer AA Battery", batteries) == "an Energizer AA Battery"
    assert a_named("Owala FreeSip Water Bottle", noun_from("Water Bottles")) == "an Owala FreeSip Water Bottle"
    assert a_named("Logitech M185 Wireless Mouse", mice, one=True) == "one Logitech M185 Wireless Mouse"
    assert agreement("Levi's 505 Jeans", jeans)["is"] == "are"
    assert agreement("Duracell AA Batteries", batteries)["isnt"] == "aren't"
    assert agreement("Logitech M185 Wireless Mouse", mice) == {"is": "is", "isnt": "isn't", "its": "it's", "s": "s",
                                                               "one": "one"}


def _article_before_plural(context: EnvContext, text: str, goal) -> list[str]:  # noqa: ANN001
    """Each wanted item the opening names with "a", "an" or "one" straight before a plural name."""
    bad = []
    for t in goal.targets:
        noun = product_noun(context.catalog.get(t.product_id))
        if agreement(t.short_name, noun)["is"] == "are" and re.search(rf"\b(?:a|an|one) {re.escape(t.short_name)}", text):
            bad.append(t.short_name)
    return bad


@pytest.mark.parametrize("catalogue", ["synthetic", "nocomma"])
def test_no_article_before_a_plural_name_in_cart_openings(context, nocomma, catalogue):
    ctx = context if catalogue == "synthetic" else nocomma
    plural = 0
    for i in range(100):
        ep = new_episode("cart", 6, 0, i, context=ctx)
        assert not _article_before_plural(ctx, ep.opening, ep.problem.goal), ep.opening
        plural += sum(agreement(t.short_name, product_noun(ctx.catalog.get(t.product_id)))["is"] == "are"
                      for t in ep.problem.goal.targets)
    assert plural >= 10  # the check saw plural names ("... Jeans", "... Crew Socks")


# ------------------------------------------------------------------ the cart customer
def test_cart_items_are_named_apart_from_the_viewed_look_alikes(nocomma):
    told_apart = 0
    for i in range(40):
        ep = new_episode("cart", 6, 0, i, context=nocomma)
        viewed = [nocomma.catalog.get(r.product_id) for r in ep.world.visit_history]
        for t in ep.problem.goal.targets:
            others = [p for p in viewed if p.id != t.product_id]
            assert not any(t.short_name.lower() in p.title.lower() for p in others), (t.short_name, others)
            assert t.short_name in ep.opening
            told_apart += t.short_name != short_name(nocomma.catalog.get(t.product_id))
    assert told_apart >= 3  # look-alikes were in view and the names said which one


def test_the_customer_knows_its_item_by_any_of_its_names(nocomma):
    """Called by its full title, its shorter name or a longer cut, a wanted item draws no objection;
    a viewed look-alike's title still does."""
    checked = 0
    for i in range(40):
        ep = new_episode("cart", 6, 0, i, context=nocomma)
        goal = ep.problem.goal
        viewed = [nocomma.catalog.get(r.product_id) for r in ep.world.visit_history]
        wanted = {t.product_id for t in goal.targets}
        rivals = [(t, o) for t in goal.targets for o in viewed
                  if o.id not in wanted and short_name(o) == short_name(nocomma.catalog.get(t.product_id))]
        if not rivals:
            continue
        t, other = rivals[0]
        for form in (*name_forms(nocomma.catalog.get(t.product_id)), t.short_name):
            reply = ep.problem.user.reply(f"Shall I add the {form} to your cart?", ep.world, last_turn=False)
            assert not _objects(reply.text) and reply.act is not UserAct.CORRECT, (form, reply.text)
        reply = ep.problem.user.reply(f"Shall I add the {other.title} to your cart?", ep.world, last_turn=False)
        assert _objects(reply.text) and reply.act is UserAct.CORRECT, reply.text
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("d", [2, 6])
def test_cart_heuristic_is_not_refused_its_own_items_on_a_real_catalogue(context, nocomma, d):
    """The honest baseline does as well on the no-separator catalogue as on the synthetic one,
    and no customer there objects to anything the agent named."""
    heuristic = get_policy("cart", "heuristic")
    rates = {}
    for name, ctx in (("synthetic", context), ("nocomma", nocomma)):
        wins = 0
        for i in range(20):
            run = run_policy(new_episode("cart", d, 0, i, context=ctx), heuristic)
            wins += run.result.reward.success
            if name == "nocomma":
                said = [m.text for m in run.messages if m.role == "user"]
                assert not any(_objects(s) for s in said), said
        rates[name] = wins / 20
    assert rates["nocomma"] >= rates["synthetic"] - 0.05, rates


def test_substitution_names_the_original_apart_from_its_look_alikes(nocomma):
    seen = 0
    for i in range(30):
        ep = new_episode("substitution", 2, 0, i, context=nocomma)
        original = nocomma.catalog.get(ep.problem.goal.original_id)
        name = catalogue_name(nocomma.catalog, original)
        assert name in ep.opening
        rivals = [p for p in nocomma.catalog if p.id != original.id and p.leaf_category == original.leaf_category]
        assert not any(name.lower() in p.title.lower() for p in rivals)
        seen += name != short_name(original)
    assert seen >= 1
