"""catalog_search's filters are complete: an agent that trusts them finds every qualifying product.

`FilterTrusting` is the agent a capable model would be if it took the tool description
at its word: one search for the kind of product the customer named, with every filter
its constraints map to (category, brand, budget, rating, shipping, features), and then whatever
the result says (the next page, while there is one). It types no feature words into the
query and runs no second search with other words. Its checks of features and stock, and
its recommendation, are the honest heuristic's.

`BlindFilteredSearch` is the strategy complete filters must not reward: the same category
search with no constraint read, and its first in-stock results recommended.

The full measurement (20k catalogue, 40 episodes per d on held-out seeds, against the
heuristic) is `python tests/test_search_filters_complete.py`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np

import pytest

from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, ToolCallRequest
from ecom_bench.agents.base import get_policy
from ecom_bench.conversation import tool_results
from ecom_bench.catalog.search import SearchFilters
from ecom_bench.world.state import in_stock_mask
from ecom_bench.envs._ranking import requested_k, satisfaction_matrix
from ecom_bench.envs.discovery.agents import RankingHeuristic, Wants
from ecom_bench.envs.substitution.agents import SubstitutionHeuristic


def filtered_search(wants: Wants, category: str | None) -> dict[str, Any]:
    """The search FilterTrusting makes: the product kind, filtered by every stated constraint."""
    args: dict[str, Any] = {"query": wants.subject, "limit": 20}
    if category:
        args["category"] = category
    for key, value in (("max_price", wants.budget), ("min_rating", wants.min_rating),
                       ("max_ship_days", wants.max_days), ("brand", wants.brand)):
        if value is not None:
            args[key] = value
    if wants.attrs:
        args["features"] = [value for _, value in wants.attrs]
    return args


class TrustsFilters:
    """Makes a scripted E_PD / E_SUB heuristic trust the filters: one filtered search
    (`filtered_search`), done as its results say: the category the customer named, or the
    first of `similar_categories` when it names none (none: no category); then every page,
    following `next_offset` to the end. A product that search returned is taken to be of the
    category asked for (the heuristic's own test reads the customer's noun in the category name)."""

    name = "filter_trusting"
    use_category = True

    def next_search(self, wants: Wants, messages: list[Message], searches: set[str], n_ok: int,
                    any_graded: bool) -> dict[str, Any] | None:
        done = [(call.arguments, result.json() or {}) for call, result in tool_results(messages)
                if call.name == "catalog_search" and not result.error]
        category = wants.subject if self.use_category else None
        for arguments, result in done:
            if arguments.get("category") == category and "similar_categories" in result:
                category = next(iter(result["similar_categories"]), None)
        args = filtered_search(wants, category)
        if json.dumps(args, sort_keys=True) not in searches:
            return args
        pages = [result for arguments, result in done if {k: v for k, v in arguments.items() if k != "offset"} == args]
        after = pages[-1].get("next_offset") if pages else None
        if after is not None and json.dumps({**args, "offset": after}, sort_keys=True) not in searches:
            return {**args, "offset": after}
        return None

    def _check(self, wants: Wants, d: dict[str, Any]) -> tuple[int, int]:
        return super()._check(replace(wants, subject=""), d)  # type: ignore[misc]


class FilterTrusting(TrustsFilters, RankingHeuristic):
    """E_PD's heuristic, trusting the filters."""


class FilterTrustingSubstitute(TrustsFilters, SubstitutionHeuristic):
    """E_SUB's heuristic (searches around the original's name, never recommends it), trusting the filters."""


def filter_trusting(env: str) -> RankingHeuristic:
    return FilterTrustingSubstitute() if env == "substitution" else FilterTrusting()


def qualifying_ids(episode: Any) -> set[str]:
    """The in-stock products meeting every requirement of the episode's goal (and its gate)."""
    world, goal = episode.problem.world, episode.problem.goal
    catalog = world.catalog
    ok = np.all(satisfaction_matrix(catalog, goal.requirements) == 1.0, axis=1)
    rows = np.flatnonzero(ok)
    rows = rows[in_stock_mask(world, rows) & goal.gate.mask(catalog, rows)]
    return {catalog.id_at(int(r)) for r in rows}


def searched_ids(messages: list[Message]) -> set[str]:
    """Every product id any catalog_search of the conversation returned."""
    return {row["product_id"] for call, result in tool_results(messages)
            if call.name == "catalog_search" and not result.error
            for row in (result.json() or {}).get("results", [])}


class BlindFilteredSearch:
    """Searches the kind of product the customer named, filtered to its category (or the first
    similar one), never asks and reads no constraint, and recommends the first k in-stock results."""

    name = "blind_filtered_search"
    reads_hidden_goal = False

    def __init__(self, env: str) -> None:
        self.reader = filter_trusting(env)

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        opening = next(m.text for m in messages if m.role == "user")
        wants = Wants(subject=self.reader.subject(opening), k=requested_k(opening))
        searches = {json.dumps(c.arguments, sort_keys=True) for c, _ in tool_results(messages)}
        args = self.reader.next_search(wants, messages, searches, 0, False)
        if args is not None and status.calls_left > 0:
            return AgentAction(tool_calls=(ToolCallRequest("catalog_search", args, id=f"s{len(messages)}"),))
        shown = [row for call, result in tool_results(messages) if call.name == "catalog_search"
                 for row in (result.json() or {}).get("results", []) if row.get("in_stock")]
        picks = [row["product_id"] for row in shown if not self.reader.excluded(wants, row)]
        ids = list(dict.fromkeys(picks))[: wants.k]
        return AgentAction(tool_calls=(ToolCallRequest("recommend_products", {"product_ids": ids}, id="r"),))


# -------------------------------------------------------------------- tests
ENVS = ("discovery", "substitution")


def _episode(context: Any, env: str, d: int, i: int, seed: int = 1000) -> Any:
    from ecom_bench.episode import new_episode

    return new_episode(env, d, seed, i, context=context)


@pytest.mark.parametrize("env", ENVS)
@pytest.mark.parametrize("d", (3, 9))
def test_an_agent_that_trusts_the_filters_finds_every_qualifying_product(context, env, d):
    from ecom_bench.runner import run_policy

    wins = 0
    for i in range(8):
        ep = _episode(context, env, d, i)
        qualifying = qualifying_ids(ep)
        run = run_policy(ep, filter_trusting(env))
        assert qualifying <= searched_ids(run.messages), f"{env} d={d} episode {i}: a filtered search hid some"
        wins += run.result.reward.success
    assert wins >= 6


@pytest.mark.parametrize("env", ENVS)
def test_a_filtered_search_that_reads_no_constraint_still_fails(context, env):
    from ecom_bench.runner import run_policy

    runs = [run_policy(_episode(context, env, d, i), BlindFilteredSearch(env))
            for d in (3, 6, 9, 12) for i in range(10)]
    assert all(any(c.name == "catalog_search" for c, _ in tool_results(r.messages)) for r in runs)
    assert sum(r.result.reward.success for r in runs) <= 2  # 5% of 40


def _search(world: Any, **arguments: Any) -> dict[str, Any]:
    from ecom_bench.envs import get_env

    return json.loads(get_env("cart").toolkit_class()(world).catalog_search(**arguments))


def test_pages_reach_every_filter_match_past_the_depth(context):
    world = _episode(context, "cart", 15, 0).problem.world  # top_k 50, distractors on every page
    product = context.catalog.products[7]
    filters = {"category": product.leaf_category, "max_price": float(product.price) * 1.5}
    expected = {context.catalog.id_at(int(r)) for r in world.search_engine.matching_rows(SearchFilters(**filters))}
    seen: set[str] = set()
    offset, pages = 0, 0
    while offset is not None:
        page = _search(world, query="gift", limit=5, offset=offset, **filters)
        assert page["total"] == len(expected) and page["note"]
        seen |= {row["product_id"] for row in page["results"]}
        offset, pages = page.get("next_offset"), pages + 1
    assert expected <= seen and pages >= len(expected) / 5
    assert "next_offset" not in page and "last page" in page["note"]


def test_a_category_the_catalogue_lacks_gets_names_like_it(context):
    world = _episode(context, "cart", 0, 0).problem.world
    product = next(p for p in context.catalog.products if p.leaf_category.endswith("ers") and " " in p.leaf_category)
    leaf = product.leaf_category
    # a shopper's singular ("wall charger") works as the category's plural does
    assert _search(world, query="x", category=leaf.lower()[:-1])["total"] == _search(
        world, query="x", category=leaf)["total"] > 0
    page = _search(world, query="x", category=f"deluxe {leaf} kit")
    assert page["total"] == 0 and leaf in page["similar_categories"] and "similar_categories" in page["note"]
    assert "similar_categories" not in _search(world, query="x", category=leaf, max_price=0.01)


def test_features_filter_finds_products_by_any_attribute_or_variant(context):
    world = _episode(context, "cart", 0, 0).problem.world
    product = next(p for p in context.catalog.products if len(p.variants) > 1)
    value = product.variants[-1].value
    results = []
    offset = 0
    while offset is not None:
        page = _search(world, query=product.title, category=product.leaf_category, features=[value.upper()],
                       limit=20, offset=offset)
        results += page["results"]
        offset = page.get("next_offset")
    assert product.id in {row["product_id"] for row in results}
    # look-alikes placed in the results (ε_rank) pass the filter too
    hard = _episode(context, "cart", 15, 0).problem.world
    results = _search(hard, query=product.leaf_category, category=product.leaf_category, features=[value],
                      limit=20)["results"]
    for row in results:
        p = context.catalog[row["product_id"]]
        offered = {v.casefold() for v in p.attributes.values()} | {v.value.casefold() for v in p.variants}
        assert value.casefold() in offered


def test_bad_paging_arguments_are_tool_errors(context):
    from ecom_bench.world._tooling import ToolError

    with pytest.raises(ToolError, match="offset"):
        _search(_episode(context, "cart", 0, 0).problem.world, query="mug", offset=-1)
    page = _search(_episode(context, "cart", 0, 0).problem.world, query="mug", max_price=20, offset=10**6)
    assert page["results"] == [] and page["total"] > 0 and "next_offset" not in page


# ------------------------------------------------------------- the full measurement
def _measure(n: int = 40, levels: tuple[int, ...] = (3, 6, 9, 12)) -> None:
    from ecom_bench.envs.context import CatalogSpec, load_context
    from ecom_bench.runner import run_policy

    context = load_context(CatalogSpec(size=20_000))
    for env in ENVS:
        for d in levels:
            row = []
            for name, make in (("heuristic", lambda env=env: get_policy(env, "heuristic")),
                               ("filter_trusting", lambda env=env: filter_trusting(env))):
                wins = missed = 0
                for i in range(n):
                    ep = _episode(context, env, d, i)
                    qualifying = qualifying_ids(ep)
                    run = run_policy(ep, make())
                    wins += run.result.reward.success
                    missed += bool(qualifying - searched_ids(run.messages))
                row.append(f"{name} {wins / n:.3f} (missed a qualifying product: {missed}/{n})")
            print(f"{env:12s} d={d:2d}  " + "  ".join(row), flush=True)


if __name__ == "__main__":
    _measure()
