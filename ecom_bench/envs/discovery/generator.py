"""E_PD generator: a hidden in-stock target, m constraints it meets, the persona, p_oos stock-outs.

Every draw comes from `seeded_rng("discovery", seed, d, intent)`. The category is always
stated (it is what the customer shops for); every other constraint is withheld from
the opening with probability p_missing(d) and revealed when the agent asks. The target
is redrawn until its budget binds (prices a third of its category out, `budget_binds`).
"""

from __future__ import annotations

from dataclasses import replace

from ecom_bench._seeding import derive_seed, seeded_rng
from ecom_bench.catalog import draws
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs._ranking import (
    RANKED_LIST,
    budget_binds,
    category_noun,
    constrained_persona,
    constraints_from,
    ideal_ranking,
    schedule_stock_outs,
    settle_stock_outs,
)
from ecom_bench.envs.base import SubTask
from ecom_bench.envs.discovery.goal import DiscoveryGoal
from ecom_bench.envs.discovery.user import DiscoveryUser
from ecom_bench.users.messages import Disclosure
from ecom_bench.world import World

#: In-stock targets drawn at most until one's budget binds (`budget_binds`); a
#: catalogue where none does (tiny or flat-priced) keeps the last draw.
MAX_TARGET_DRAWS = 200


def build_discovery(world: World, seed: int, difficulty: Difficulty, intent: int = 0,
                   customer: type[DiscoveryUser] = DiscoveryUser) -> SubTask:
    d = difficulty.level
    rng = seeded_rng("discovery", seed, d, intent)
    catalog = world.catalog
    tried = 0
    for _ in draws(catalog, "in-stock product to shop for"):
        target = catalog.products[rng.randrange(len(catalog))]
        if not world.in_stock(target):
            continue
        tried += 1
        category, constraints = constraints_from(target, rng, difficulty.n_constraints, difficulty)
        if budget_binds(catalog, category.value, constraints[0].value) or tried >= MAX_TARGET_DRAWS:
            break
    weights = constrained_persona(derive_seed("discovery", seed, d, intent), (category, *constraints))
    search = {"query": category_noun(target), "max_price": constraints[0].value, "limit": 20}
    goal = DiscoveryGoal(target_id=target.id, target_brand=target.brand, category=category,
                         constraints=constraints, k=difficulty.k_rec, alpha=4 + d // 4, weights=weights,
                         oracle_search=search)
    ideal = ideal_ranking(goal, world)
    ranked = [pid for pid, _ in ideal.ranked[:RANKED_LIST]]
    candidates = [pid for pid in ideal.pool[:RANKED_LIST] if pid != target.id]
    doomed = schedule_stock_outs(world, rng, candidates, difficulty.p_oos)
    doomed = settle_stock_outs(world, ranked, doomed, search, goal.k, difficulty)
    goal = replace(goal, ranked_ids=tuple(ranked), doomed_ids=tuple(doomed))
    disclosure = Disclosure()
    disclosure.add(category.slot, True)
    for c in constraints:
        disclosure.add(c.slot, rng.random() >= difficulty.p_missing)
    user = customer(goal, catalog, difficulty, derive_seed("discovery-user", seed, d, intent), disclosure)
    return SubTask(env="discovery", goal=goal, user=user, persona=weights, intent=intent)
