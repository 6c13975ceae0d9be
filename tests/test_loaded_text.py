"""A loaded Amazon-style catalogue reads well.

`tests/data/amazon_sample.jsonl` is 50 hand-written products in the Amazon Reviews 2023
metadata schema over ten real category names. On it: variants never contradict what a
product's details state, the customers' messages make no agreement errors on those
category names ("a mice", "find a jeans", "1 days", "2 mouse"), discovery never asks for
more picks than qualify, and every env the catalogue supports is solved by its oracle.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ecom_bench.agents.base import get_policy
from ecom_bench.catalog.embedders import get_embedder
from ecom_bench.catalog.loaders import load_catalog
from ecom_bench.catalog.naming import counted, noun_from, product_noun
from ecom_bench.catalog.search import SearchEngine
from ecom_bench.envs._ranking import requested_k
from ecom_bench.envs.context import EnvContext
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy

DATA = Path(__file__).parent / "data" / "amazon_sample.jsonl"
#: The sample's leaf categories and how a shopper says one, "a/an/some ...", two of them.
CATEGORIES = {
    "Mice": ("mouse", "a mouse", "2 mice"),
    "Skillets": ("skillet", "a skillet", "2 skillets"),
    "Headphones": ("headphones", "a pair of headphones", "2 pairs of headphones"),
    "Running Shoes": ("running shoes", "a pair of running shoes", "2 pairs of running shoes"),
    "Coffee Makers": ("coffee maker", "a coffee maker", "2 coffee makers"),
    "Kitchen Knives": ("kitchen knife", "a kitchen knife", "2 kitchen knives"),
    "Batteries": ("battery", "a battery", "2 batteries"),
    "Jeans": ("jeans", "a pair of jeans", "2 pairs of jeans"),
    "Dresses": ("dress", "a dress", "2 dresses"),
    "Sunglasses": ("sunglasses", "a pair of sunglasses", "2 pairs of sunglasses"),
}
#: Envs the 50-product sample supports (bundle's projects name the synthetic taxonomy's leaves).
SUPPORTED = ("cart", "discovery", "substitution", "returns", "tracking", "policy")
LEVELS = (2, 8)
EPISODES = 3


@pytest.fixture(scope="module")
def loaded(tmp_path_factory) -> EnvContext:
    catalog = load_catalog(DATA, cache_dir=tmp_path_factory.mktemp("hf-datasets"))
    return EnvContext(catalog, SearchEngine(catalog, get_embedder("wordllama")))


def _snake(key: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", key.lower()).strip("_")


def _stated() -> dict[str, dict[str, tuple[str, ...]]]:
    """Per product id, each detail's allowed values as the raw file states them."""
    out = {}
    for line in DATA.read_text().splitlines():
        row = json.loads(line)
        details = json.loads(row["details"])
        out[row["parent_asin"]] = {_snake(k): tuple(v) if isinstance(v, list) else (str(v),)
                                   for k, v in details.items()}
    return out


def test_sample_covers_the_category_names(loaded):
    assert len(loaded.catalog) == 50
    assert sorted(loaded.catalog.by_leaf_category) == sorted(CATEGORIES)


@pytest.mark.parametrize("name", sorted(CATEGORIES))
def test_category_nouns_inflect_and_agree(name):
    one, a, two = CATEGORIES[name]
    noun = noun_from(name)
    assert (noun.one, noun.a(), noun.count(2)) == (one, a, two)
    assert noun.be == ("are" if noun.kind == "pair" else "is")


def test_counts_and_articles():
    assert [counted(1, "day"), counted(2, "day"), counted(4.5, "star")] == ["1 day", "2 days", "4.5 stars"]
    assert noun_from("Air Fryers").a() == "an air fryer"
    assert noun_from("USB Cables").a("new") == "a new USB cable"
    assert noun_from("Cookware").a() == "some cookware"
    assert requested_k("Please recommend your top pick.") == 1
    assert requested_k("Send me your top 4 options.") == 4


def test_variants_never_contradict_the_details(loaded):
    """A stated detail is fixed; a listed one is offered only in the listed values."""
    stated = _stated()
    multi = 0
    for p in loaded.catalog:
        values = {v.attribute: set() for v in p.variants}
        for v in p.variants:
            values[v.attribute].add(v.value)
            if v.attribute in stated[p.id]:
                assert v.value in stated[p.id][v.attribute], (p.title, v)
            else:
                assert (v.attribute, v.value) == ("option", "Standard"), (p.title, v)
        for attr, offered in values.items():
            if attr in stated[p.id] and len(stated[p.id][attr]) > 1:
                assert offered == set(stated[p.id][attr])  # every listed value, none other
        multi += len(p.variants) > 1
    assert multi >= 20  # the listed sizes, colours and pack sizes did become variants
    mouse = next(p for p in loaded.catalog if p.title.startswith("Logitech M185"))
    assert [(v.attribute, v.value) for v in mouse.variants] == [("color", "Black")]
    pan = next(p for p in loaded.catalog if p.title.startswith("Stainless Steel Fry Pan"))
    assert {v.value for v in pan.variants} <= {"Stainless Steel", "Silver", "12 Inch"}


def _agreement_errors(text: str) -> list[str]:
    """Agreement errors on the sample's category nouns and on counted days/stars/picks."""
    bad = [r"\b1 (days|stars|picks|options)\b", r"\b(?:[02-9]|\d\d+) day\b", r"\btop 1 (picks|options)\b"]
    for name, (one, _, _) in CATEGORIES.items():
        noun = noun_from(name)
        if noun.kind == "count":
            bad += [rf"\b(?:a|an|one|1) (?:new |replacement )?{re.escape(noun.many)}\b", rf"\b(?:[02-9]|\d\d+) {re.escape(one)}\b"]
        else:  # pair nouns: never "a jeans", always "are"
            bad += [rf"\b(?:a|an|one|1) (?:new )?{re.escape(one)}\b", rf"\b{re.escape(one)}(?: i ordered)? is\b"]
    low = text.lower()
    return [m.group(0) for pattern in bad for m in re.finditer(pattern, low)]


def test_the_checker_catches_the_reported_errors():
    for text in ("I need a new mice.", "Can you find a skillets?", "It ships within 1 days.", "Add 2 mouse.",
                 "Help me find a jeans.", "the jeans I ordered is late", "your top 1 picks"):
        assert _agreement_errors(text), text
    assert not _agreement_errors("I need a new mouse, a pair of jeans and 2 mice within 1 day or 3 days.")


@pytest.mark.parametrize("env", SUPPORTED)
def test_messages_read_well_and_the_oracle_solves_every_env(loaded, env):
    stated = _stated()
    for d in LEVELS:
        for index in range(EPISODES):
            for agent in ("oracle", "heuristic"):
                episode = new_episode(env, d, 0, index, context=loaded)
                run = run_policy(episode, get_policy(env, agent))
                said = [m.text for m in run.messages if m.role == "user"]
                for text in said:
                    assert not _agreement_errors(text), (env, d, index, text)
                goal = episode.problem.goal
                if env == "cart":  # every wanted variant is one the product's details allow
                    for t in goal.targets:
                        p = loaded.catalog.get(t.product_id)
                        allowed = stated[p.id].get(t.variant_attribute, ("Standard",))
                        assert t.variant_value in allowed, (p.title, t)
                if env in ("discovery", "substitution"):
                    assert requested_k(said[0]) == goal.k
                    if env == "discovery":  # the kind is named as a shopper says it ("a pair of jeans")
                        assert product_noun(loaded.catalog.get(goal.reference_id)).one in said[0].lower()
                if agent == "oracle":
                    assert run.result.reward.success, (env, d, index, run.result.explanation)


def test_journey_on_the_sample(loaded):
    """Journeys whose requests the sample supports are solved; one needing bundle says why it can't be."""
    solved = 0
    for d in (1, 4):
        for index in range(2):
            episode = new_episode("journey", d, 0, index, context=loaded)
            run = run_policy(episode, get_policy("journey", "oracle"))
            assert run.result.reward.success, run.result.explanation
            assert not any(_agreement_errors(m.text) for m in run.messages if m.role == "user")
            solved += 1
    assert solved == 4
    with pytest.raises(ValueError, match="bundle project"):
        new_episode("bundle", 4, 0, 0, context=loaded)
