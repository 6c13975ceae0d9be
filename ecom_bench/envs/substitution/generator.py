"""E_SUB generator: the original p0 (set out of stock), a compatible substitute, its constraints.

p0 is a product with real variants; compatibility = p0's variant attribute and its own
value (connector, size, material, ...). A hidden substitute (same leaf, offering that
value, in stock in it) guarantees solvability: the m constraints are drawn from it like
E_PD's (budget, leaf, then brand / rating / ship days / other attributes), the budget
from the price of the variant the customer would buy (the compatible one, which may
cost more than the listing: `_ranking.price_paid`). So at least one product meets
every stated constraint as bought, and the verifier counts the same products.
p0 and a few same-leaf look-alikes are appended to the visit history.
"""

from __future__ import annotations

from dataclasses import replace

from ecom_bench._seeding import derive_seed, seeded_rng
from ecom_bench.catalog import draws
from ecom_bench.catalog.lookups import RowProducts, catalog_lookups
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs._ranking import (
    RANKED_LIST,
    Constraint,
    category_noun,
    constraints_from,
    ideal_ranking,
    in_stock_as_bought,
    constrained_persona,
    schedule_stock_outs,
    settle_stock_outs,
    variant_attribute,
)
from ecom_bench.envs.base import SubTask
from ecom_bench.envs.substitution.goal import SubstitutionGoal
from ecom_bench.envs.substitution.user import SubstitutionUser
from ecom_bench.users.base import Disclosure
from ecom_bench.world import VisitRecord, World

HISTORY_LOOKALIKES = 3


def build_substitution(world: World, seed: int, difficulty: Difficulty, intent: int = 0,
                      customer: type[SubstitutionUser] = SubstitutionUser) -> SubTask:
    d = difficulty.level
    rng = seeded_rng("substitution", seed, d, intent)
    catalog = world.catalog
    index = catalog_lookups(catalog)
    for _ in draws(catalog, "in-stock product with variants and an in-stock compatible alternative"):
        p0 = catalog.products[rng.randrange(len(catalog))]
        attribute = variant_attribute(p0)
        if attribute is None or not world.in_stock(p0) or p0.id in world.reserved_ids:
            continue
        compatibility = Constraint("attribute", p0.attributes[attribute], attribute=attribute)
        leaf_rows = index.leaf(p0.leaf_category)
        p0_row = catalog.index_of(p0.id)
        rows = leaf_rows[catalog.offering(attribute, compatibility.value)[leaf_rows] & (leaf_rows != p0_row)]
        candidates = RowProducts(catalog, rows[in_stock_as_bought(world, (compatibility,), rows)])
        if candidates:
            break
    assert attribute is not None  # the draw above stops on a product with a variant attribute
    substitute = rng.choice(candidates)
    category, constraints = constraints_from(substitute, rng, difficulty.n_constraints, difficulty,
                                             skip_attributes=(attribute,), pinned=(compatibility,))
    world.set_out_of_stock(p0.id)
    others = leaf_rows[leaf_rows != p0_row]  # the leaf but p0, in catalogue order
    # the draws of `rng.sample(<the leaf's products>, k)`, by position: sample copies a small
    # population whole (n <= 21), which made every product of a small leaf for three ids
    picks = rng.sample(range(len(others)), min(HISTORY_LOOKALIKES, len(leaf_rows) - 1))
    lookalikes = catalog.ids.take(others[picks]).to_pylist() if picks else []
    world.visit_history.extend(VisitRecord(pid, rng.randint(1, 30)) for pid in [p0.id, *lookalikes])

    search = {"query": f"{category_noun(p0)} {compatibility.value}", "max_price": constraints[0].value, "limit": 20}
    goal = SubstitutionGoal(original_id=p0.id, substitute_id=substitute.id, compatibility=compatibility,
                            category=category, constraints=constraints, k=difficulty.k_rec,
                            lam=min(0.8, max(0.4, 0.4 + 0.05 * d)), oracle_search=search)
    ideal = ideal_ranking(goal, world)
    ranked = [pid for pid, _ in ideal.ranked[:RANKED_LIST]]
    shortlist = [pid for pid in ideal.pool[:RANKED_LIST] if pid != substitute.id]
    doomed = schedule_stock_outs(world, rng, shortlist, difficulty.p_oos)
    doomed = settle_stock_outs(world, ranked, doomed, search, goal.k, difficulty)
    goal = replace(goal, ranked_ids=tuple(ranked), doomed_ids=tuple(doomed))
    disclosure = Disclosure()
    disclosure.add(category.slot, True)
    for c in (compatibility, *constraints):
        disclosure.add(c.slot, rng.random() >= difficulty.p_missing)
    user = customer(goal, catalog, difficulty, derive_seed("substitution-user", seed, d, intent), disclosure)
    persona = constrained_persona(derive_seed("substitution", seed, d, intent), goal.requirements)
    return SubTask(env="substitution", goal=goal, user=user, persona=persona, intent=intent)
