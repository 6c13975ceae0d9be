"""E_BUNDLE generator: project(s), required categories, stock-outs, budget, disclosure, user.

All draws come from `seeded_rng("bundle", seed, d)`. Per required category the
generator picks a feasible choice, the cheapest in-stock product meeting the bundle's
requirements (the oracle's), so every task is solvable; the budget, when there is one,
is set above the sum of those choices:

    budget = ⌈Σ_c mean(price of the 3 cheapest qualifying products of c) · slack(d)⌉,
    slack(d) = 1 + 0.5·e^(−d/6)     (1.36 at d=2, 1.18 at d=6, 1.07 at d=12)

so it stays feasible (mean of the 3 cheapest ≥ the cheapest) and tightens with d.
Constraints: ⌊(m−2)/2⌋ bundle-wide requirements, at most 2 (none below d=4, one at
d=4..7, two from d=8), drawn from "rated at least r stars" (r ∈ 4.0/4.3/4.5) and
"arrives within s days" (s ∈ 2..5), each value drawn among those that leave every
required category at least two in-stock products meeting all requirements.
p_oos: each category with at least two in-stock products has, with probability
p_oos(d), its cheapest product scheduled to sell out at the end of the turn in which
the agent is first shown it (the product a naive shopper would pick); the oracle's
choice and the budget are then taken from the remaining products.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from functools import cache
from statistics import fmean

from ecom_bench._seeding import derive_seed, seeded_rng
import numpy as np

from ecom_bench.catalog import Catalog
from ecom_bench.catalog.lookups import catalog_lookups, rows_of
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.base import EnvAxis, SubTask
from ecom_bench.envs.bundle.goal import BUDGET_SLOT, BundleConstraint, BundleGoal, BundleItem
from ecom_bench.envs.bundle.projects import compose
from ecom_bench.envs.bundle.user import BundleUser
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World
from ecom_bench.world.state import StockOut, changed_rows, in_stock_mask

MAX_CATEGORIES = 12
P_BUDGET = 0.6  # docs/design.md: a budget for d >= 2 with probability 0.6
BUDGET_MIN_LEVEL = 2
BUDGET_REFERENCE_K = 3
MAX_CONSTRAINTS = 2
CONSTRAINT_VALUES: dict[str, tuple[float, ...]] = {"min_rating": (4.0, 4.3, 4.5),
                                                   "max_ship_days": (2, 3, 4, 5)}


#: E_BUNDLE's own difficulty axes (docs/design.md).
BUNDLE_SIZE = EnvAxis("bundle_size", "product categories the project needs", "min(12, 3 + ⌊d/2⌋)",
                      lambda d: min(MAX_CATEGORIES, 3 + d // 2))
BUDGET_SLACK = EnvAxis("budget_slack",
                       f"budget over the cheapest complete list (set from d = {BUDGET_MIN_LEVEL} "
                       f"with probability {P_BUDGET})",
                       "1 + 0.5·exp(−d/6)", lambda d: 1.0 + 0.5 * math.exp(-d / 6))
BUNDLE_AXES = (BUNDLE_SIZE, BUDGET_SLACK)


def bundle_size(level: int) -> int:
    return int(BUNDLE_SIZE.at(level))


def budget_slack(level: int) -> float:
    return float(BUDGET_SLACK.at(level))


def constraint_count(difficulty: Difficulty) -> int:
    return min(MAX_CONSTRAINTS, max(0, (difficulty.n_constraints - 2) // 2))


def _qualifying(catalog: Catalog, rows: np.ndarray, constraints: Sequence[BundleConstraint]) -> np.ndarray:
    """Which of `rows` meet every one of `constraints` (`BundleConstraint.satisfied`, on columns)."""
    ok = np.ones(len(rows), dtype=bool)
    for c in constraints:
        ok &= c.mask(catalog, rows)
    return ok


def draw_constraints(count: int, rng: random.Random, catalog: Catalog,
                          pools: list[np.ndarray]) -> list[BundleConstraint]:
    """Up to `count` requirements that leave every pool (catalogue rows) at least two qualifying products."""
    chosen: list[BundleConstraint] = []
    kinds = sorted(CONSTRAINT_VALUES)
    rng.shuffle(kinds)
    for kind in kinds[:count]:
        feasible = [c for c in (BundleConstraint(kind, v) for v in CONSTRAINT_VALUES[kind])
                    if all(int(np.count_nonzero(_qualifying(catalog, pool, (c, *chosen)))) >= 2 for pool in pools)]
        if feasible:
            chosen.append(rng.choice(feasible))
    return chosen


def build_bundle(world: World, seed: int, difficulty: Difficulty, intent: int = 0,
                customer: type[BundleUser] = BundleUser) -> SubTask:
    rng = seeded_rng("bundle", seed, difficulty.level)
    catalog = world.catalog
    index = catalog_lookups(catalog)
    # Products another task of this world already schedules to sell out are never a choice.
    doomed = rows_of(catalog, {i for event in world.stock_outs for i in event.item_ids})

    @cache  # the world's stock does not change while the task is built
    def stocked(category: str) -> np.ndarray:
        """The category's in-stock choices as rows, cheapest first (ties by id)."""
        rows = index.leaf_by_price(category)
        return rows[in_stock_mask(world, rows) & ~np.isin(rows, doomed)]

    # Episode stock changes and scheduled stock-outs touch few products: a category with more
    # products in stock in the catalogue than that has a choice left without looking.
    touched = len(changed_rows(world)) + len(doomed)

    def available(category: str) -> bool:
        return index.leaf_in_stock.get(category, 0) > touched or len(stocked(category)) > 0

    projects, required = compose(bundle_size(difficulty.level), rng, available)
    constraints = draw_constraints(constraint_count(difficulty), rng, catalog, [stocked(c) for c in required])
    items: list[BundleItem] = []
    stock_out_ids: list[str] = []
    reference = 0.0
    for category in required:
        rows = stocked(category)
        pool = [catalog.products[i] for i in rows[_qualifying(catalog, rows, constraints)][:BUDGET_REFERENCE_K + 1]]
        if len(pool) >= 2 and rng.random() < difficulty.p_oos:
            cheapest = pool.pop(0)
            world.stock_outs.append(StockOut(watch=cheapest.id, item_ids=(cheapest.id,), on="seen"))
            stock_out_ids.append(cheapest.id)
        items.append(BundleItem(category, pool[0].id, pool[0].price))
        reference += fmean(p.price for p in pool[:BUDGET_REFERENCE_K])
    budget = None
    if difficulty.level >= BUDGET_MIN_LEVEL and rng.random() < P_BUDGET:
        budget = float(math.ceil(reference * budget_slack(difficulty.level)))

    disclosure = Disclosure()
    told = [rng.random() >= difficulty.p_missing for _ in items]
    if not any(told):
        told[0] = True  # the opening always names at least one item
    for item, is_told in zip(items, told, strict=True):
        disclosure.add(item.slot, is_told)
    if budget is not None:
        disclosure.add(BUDGET_SLOT, rng.random() >= difficulty.p_missing)
    for c in constraints:
        disclosure.add(c.slot, rng.random() >= difficulty.p_missing)

    goal = BundleGoal(tuple(p.name for p in projects), tuple(items), budget, tuple(constraints),
                      tuple(stock_out_ids))
    user_seed = derive_seed("bundle-user", seed, difficulty.level)
    user = customer(goal, projects, difficulty, user_seed, disclosure)
    return SubTask(env="bundle", goal=goal, user=user, intent=intent)
