"""E_TRACK generator: an account history, one target order, and how the customer names it.

The target is a recent order of a leaf category no other order of the world uses; its
H_orders(d) − 1 look-alikes are recent orders of other products of that same leaf,
placed within a few days of it; ~30 background orders (a few recent ones of other
categories, the rest old) make the account realistic and keep a random pick rare.
"""

from __future__ import annotations

from ecom_bench._seeding import derive_seed, seeded_rng
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.base import SubTask
from ecom_bench.envs.tracking.goal import TrackingGoal
from ecom_bench.envs.tracking.references import DATE_STYLES, choose_reference, p_indirect, p_similar, phrase_reference
from ecom_bench.envs.tracking.user import TrackingUser
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World
from ecom_bench.world.orders import (
    STATUS_AGE_DAYS,
    OrderReference,
    OrderStatus,
    RefKind,
    build_order_history,
    free_leaves,
    product_noun,
)

#: Target status weights (orders in motion are what customers ask about most).
STATUS_WEIGHTS = {OrderStatus.CONFIRMED: 1.0, OrderStatus.SHIPPED: 1.0, OrderStatus.IN_TRANSIT: 1.5,
                  OrderStatus.DELIVERED: 1.5, OrderStatus.CANCELLED: 1.0}
MAX_TARGET_AGE_DAYS = 20
#: Customers ask about an order once it has had a day to move. An order placed today is
#: usually the account's newest, so "report the newest order" would pass often: with
#: same-day targets it was right 3.6% of d=3 episodes, 16% of those with a confirmed target.
MIN_TARGET_AGE_DAYS = 1


def build_tracking(world: World, seed: int, difficulty: Difficulty, intent: int = 0) -> SubTask:
    rng = seeded_rng("tracking", seed, difficulty.level)
    catalog = world.catalog
    leaf = rng.choice(free_leaves(world, catalog))
    product = catalog.products[rng.choice(catalog.by_leaf_category[leaf])]
    status = rng.choices(list(STATUS_WEIGHTS), list(STATUS_WEIGHTS.values()))[0]
    lo, hi = STATUS_AGE_DAYS[status]
    age = rng.randint(max(lo, MIN_TARGET_AGE_DAYS), min(hi, MAX_TARGET_AGE_DAYS))
    history = build_order_history(world, rng, product, n_recent=difficulty.n_orders, target_status=status,
                                  target_placed_days_ago=age, similar_share=p_similar(difficulty))
    target, line = history.target, history.target_line
    ref = choose_reference(world, target, line, rng.random() < p_indirect(difficulty), rng)
    noun = product_noun(product)
    date_style = rng.choice(DATE_STYLES)
    reference_text = phrase_reference(ref, noun, world.now, date_style)
    told = rng.random() >= difficulty.p_missing
    disclosure = Disclosure()
    disclosure.add("order", told)
    if ref.kind is RefKind.ORDER_ID:
        partial = "one of my orders"
    else:
        partial = phrase_reference(OrderReference(RefKind.NOUN, leaf, ""), noun, world.now, date_style)
    goal = TrackingGoal(order_id=target.order_id, status=target.status.value, reference=ref.to_dict(),
                        reference_text=reference_text, n_recent=len(history.recent_set),
                        n_orders=len(world.orders))
    protect = frozenset({reference_text, partial, target.order_id})
    user = TrackingUser(goal, difficulty, derive_seed("tracking-user", seed, difficulty.level), disclosure,
                        partial, protect)
    return SubTask(env="tracking", goal=goal, user=user, intent=intent)
