"""E_TRACK generator: an account history, one target order, and how the customer names it.

The recent history is `group_count(H_orders(d))` look-alike groups: H_orders(d) orders
of one leaf category each (the target's group and decoys), every order dated and given
a status by the same draw (`TrackingProcess`), so neither a group nor a member's place
in it tells the target apart; the target is a random member of one group. ~36 old
background orders make the account realistic.
"""

from __future__ import annotations

import random

from ecom_bench._seeding import derive_seed, seeded_rng
from ecom_bench.catalog.naming import product_noun
from ecom_bench.difficulty import Difficulty
from ecom_bench.domains.orders.book import OrderBook
from ecom_bench.envs.base import SubTask
from ecom_bench.envs.tracking.goal import TrackingGoal
from ecom_bench.envs.tracking.references import (
    DATE_STYLES,
    alternate_phrases,
    choose_reference,
    p_indirect,
    p_similar,
    phrase_reference,
)
from ecom_bench.envs.tracking.user import TrackingUser
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World
from ecom_bench.domains.orders.history import STATUS_AGE_DAYS, GroupProcess, MemberPlan, build_order_history
from ecom_bench.domains.orders.records import OrderStatus
from ecom_bench.domains.orders.references import OrderReference, RefKind

#: Status weights of every group order (orders in motion are what customers ask about most).
STATUS_WEIGHTS = {OrderStatus.CONFIRMED: 1.0, OrderStatus.SHIPPED: 1.0, OrderStatus.IN_TRANSIT: 1.5,
                  OrderStatus.DELIVERED: 1.5, OrderStatus.CANCELLED: 1.0}
MAX_TARGET_AGE_DAYS = 20
#: Customers ask about an order once it has had a day to move (no group order is placed today).
MIN_TARGET_AGE_DAYS = 1


class TrackingProcess(GroupProcess):
    """Every group order: a status by STATUS_WEIGHTS, then an age that status allows (1-20 days)."""

    def __init__(self, similar_share: float) -> None:
        self.similar_share = similar_share

    def member(self, rng: random.Random, world: World, row: int) -> MemberPlan:
        status = rng.choices(list(STATUS_WEIGHTS), list(STATUS_WEIGHTS.values()))[0]
        lo, hi = STATUS_AGE_DAYS[status]
        age = rng.randint(max(lo, MIN_TARGET_AGE_DAYS), min(hi, MAX_TARGET_AGE_DAYS))
        return MemberPlan(status, age)  # one line: tracking is about whole orders


def build_tracking(world: World, seed: int, difficulty: Difficulty, intent: int = 0,
                  customer: type[TrackingUser] = TrackingUser) -> SubTask:
    rng = seeded_rng("tracking", seed, difficulty.level)
    history = build_order_history(world, rng, TrackingProcess(p_similar(difficulty)), n_recent=difficulty.n_orders)
    target, line = history.target, history.target_line
    product = world.catalog.get(line.product_id)
    assert product is not None
    leaf = product.leaf_category
    ref = choose_reference(world, target, line, rng.random() < p_indirect(difficulty), rng)
    kind_noun = product_noun(product)
    noun = kind_noun.one
    date_style = rng.choice(DATE_STYLES)
    reference_text = phrase_reference(ref, noun, world.now, date_style)
    alternates = alternate_phrases(world, target, line, ref, noun, date_style, rng)
    told = rng.random() >= difficulty.p_missing
    disclosure = Disclosure()
    disclosure.add("order", told)
    if ref.kind is RefKind.ORDER_ID:
        partial = "one of my orders"
    else:
        partial = phrase_reference(OrderReference(RefKind.NOUN, leaf, ""), noun, world.now, date_style)
    goal = TrackingGoal(order_id=target.order_id, status=target.status.value, reference=ref.to_dict(),
                        reference_text=reference_text, n_recent=len(history.recent_set),
                        n_orders=len(world.state(OrderBook).orders))
    protect = frozenset({reference_text, partial, target.order_id, *alternates})
    # "where the jeans I ordered are": references headed by the product's kind agree with its noun
    partial_kind = RefKind.ORDER_ID if ref.kind is RefKind.ORDER_ID else RefKind.NOUN
    plural = frozenset(r for r, kind in ((reference_text, ref.kind), (partial, partial_kind))
                       if kind_noun.plural and kind not in (RefKind.ORDER_ID, RefKind.ORDINAL))
    user = customer(goal, difficulty, derive_seed("tracking-user", seed, difficulty.level), disclosure,
                        partial, protect, alternates, plural_references=plural)
    return SubTask(env="tracking", goal=goal, user=user, intent=intent)
