"""E_CART generator: targets, variants, quantities, visit history, persona, user.

All draws come from one RNG seeded by (env, seed, d), so the same (seed, d) gives
the same task in any process. Targets are in-stock products from distinct leaf
categories (so "the charger" is never ambiguous between two targets), and every
target's wanted variant has stock for the wanted quantity: each task is solvable.
"""

from __future__ import annotations

import random
from dataclasses import replace

from ecom_bench._seeding import derive_seed, seeded_rng
from ecom_bench.catalog import Catalog, draws
from ecom_bench.catalog.naming import distinct_name, short_name
from ecom_bench.difficulty import Difficulty, sigmoid
from ecom_bench.envs.base import EnvAxis
from ecom_bench.envs.base import SubTask
from ecom_bench.envs.cart.goal import CartGoal, CartTarget
from ecom_bench.envs.cart.user import CartUser
from ecom_bench.users.base import Disclosure
from ecom_bench.users.persona import sample_persona
from ecom_bench.world import VisitRecord, World

MAX_QUANTITY = 4
#: Browsed categories without a target, per target category (at least MIN_DECOY_GROUPS).
DECOY_GROUPS_PER_TARGET = 2
MIN_DECOY_GROUPS = 4


def _visit_history(world: World, rng: random.Random, targets: list[CartTarget]) -> list[str]:
    """The targets, max(3, 2n) same-category look-alikes (docs/design.md §Per-environment verifiers),
    and as many browsed categories again that hold no target, shuffled.

    Why the decoy categories: with look-alikes only, every category of the history held
    exactly one target, so "one visited product per category" found the cart without
    reading the request. Each decoy group mirrors a target group (one product plus its
    share of look-alikes), so the groups cannot be told apart by structure.
    """
    catalog = world.catalog
    target_ids = {t.product_id for t in targets}
    target_leaves = [catalog[t.product_id].leaf_category for t in targets]
    n_decoys = max(MIN_DECOY_GROUPS, DECOY_GROUPS_PER_TARGET * len(targets))
    free = sorted(set(catalog.by_leaf_category) - set(target_leaves))
    decoy_leaves = rng.sample(free, min(n_decoys, len(free)))
    leaves = target_leaves + decoy_leaves
    chosen = set(target_ids)
    groups: dict[str, list[str]] = {leaf: [] for leaf in leaves}
    for t, leaf in zip(targets, target_leaves, strict=True):
        groups[leaf].append(t.product_id)
    for leaf in decoy_leaves:  # the decoy group's own "target": any product of its category
        groups[leaf].append(catalog.id_at(rng.choice(catalog.by_leaf_category[leaf])))
        chosen.update(groups[leaf])
    per_group = max(3, 2 * len(targets)) / len(targets)  # look-alikes per group, as for the targets
    want = {leaf: int(per_group) + (1 if rng.random() < per_group - int(per_group) else 0) for leaf in leaves}
    for leaf in leaves:
        pool = catalog.by_leaf_category[leaf]
        for _ in range(50 * want[leaf]):
            if len(groups[leaf]) > want[leaf]:
                break
            cand = catalog.id_at(rng.choice(pool))
            if cand not in chosen:
                chosen.add(cand)
                groups[leaf].append(cand)
    history = sorted(pid for group in groups.values() for pid in group)
    rng.shuffle(history)
    return history


def _told_apart(catalog: Catalog, targets: list[CartTarget], history: list[str]) -> tuple[CartTarget, ...]:
    """The targets, each named so that no other viewed product's title holds its name: beside
    "Levi's Men's 505 Regular Fit Jeans Rinse" the customer asks for the "... Jeans Dark
    Stonewash", not the "Levi's Men's 505 Regular Fit Jeans" both titles begin with."""
    titles = {pid: catalog.title_at(row) for pid in history if (row := catalog.index_of(pid)) is not None}

    def name(t: CartTarget) -> str:
        others = [title for pid, title in titles.items() if pid != t.product_id]
        return distinct_name(catalog[t.product_id], others)

    return tuple(replace(t, short_name=name(t)) for t in targets)


#: E_CART's own difficulty axes.
CART_ITEMS = EnvAxis("cart_items", "products the customer wants in the cart", "min(5, 1 + ⌊d/3⌋)",
                     lambda d: min(5, 1 + d // 3))
P_VARIANT = EnvAxis("p_variant", "chance that an item's exact variant matters", "σ((d − 2)/1.5)",
                    lambda d: sigmoid((d - 2) / 1.5))
P_QUANTITY = EnvAxis("p_quantity", "chance that an item is wanted more than once", "min(0.5, 0.1·d)",
                     lambda d: min(0.5, 0.1 * d))
CART_AXES = (CART_ITEMS, P_VARIANT, P_QUANTITY)


def build_cart(world: World, seed: int, difficulty: Difficulty, intent: int = 0,
              customer: type[CartUser] = CartUser) -> SubTask:
    rng = seeded_rng("cart", seed, difficulty.level)
    catalog = world.catalog
    n_items = min(CART_ITEMS.at(difficulty), len(catalog.by_leaf_category))
    targets: list[CartTarget] = []
    used_leaves: set[str] = set()
    disclosure = Disclosure()
    for _ in draws(catalog, f"{n_items} in-stock products of different categories"):
        if len(targets) == n_items:
            break
        p = catalog.products[rng.randrange(len(catalog))]
        if p.leaf_category in used_leaves or not world.in_stock(p):
            continue
        in_stock = [v for v in p.variants if world.stock_of(p, v) >= 1]
        if not in_stock:
            continue
        variant = rng.choice(in_stock)
        required = len(p.variants) > 1 and rng.random() < P_VARIANT.at(difficulty)
        quantity = rng.randint(2, MAX_QUANTITY) if rng.random() < P_QUANTITY.at(difficulty) else 1
        quantity = min(quantity, world.stock_of(p, variant))
        used_leaves.add(p.leaf_category)
        t = CartTarget(product_id=p.id, short_name=short_name(p), variant_id=variant.id,
                       variant_attribute=variant.attribute, variant_value=variant.value,
                       variant_required=required, quantity=quantity)
        targets.append(t)
        if required:
            disclosure.add(t.variant_slot, rng.random() >= difficulty.p_missing)
        if quantity > 1:
            disclosure.add(t.quantity_slot, rng.random() >= difficulty.p_missing)
    history = _visit_history(world, rng, targets)
    world.visit_history.extend(VisitRecord(pid, rng.randint(0, 14)) for pid in history)
    goal = CartGoal(_told_apart(catalog, targets, history))

    products = {t.product_id: catalog[t.product_id] for t in goal.targets}
    user = customer(goal, products, difficulty, derive_seed("cart-user", seed, difficulty.level), disclosure)
    return SubTask(env="cart", goal=goal, user=user, intent=intent,
                   persona=sample_persona(derive_seed("cart", seed, difficulty.level)))
