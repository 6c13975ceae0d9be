"""E_RETURN generator: a delivered target line, its look-alikes, edge cases, wishes.

One RNG seeded by (env, seed, d) draws everything. The target is the first line of a
delivered order in a leaf category no other order of the world uses; H_orders(d) − 1
delivered look-alikes of that leaf and the shared background history surround it
(`world.orders.build_order_history`). With p_edge(d) = 0.7·σ((d−4)/1.5) the target is
an edge case of the store rule: delivered exactly on the window's last day or the day
before (still eligible), the day after (not eligible), a final-sale item, or a line
already returned. The eligibility is computed by the same rule the tools enforce.
"""

from __future__ import annotations

import math
import random

from ecom_bench._seeding import derive_seed, seeded_rng
from ecom_bench.catalog import CatalogTooSparse, Product, draws
from ecom_bench.catalog.naming import short_name
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.base import SubTask
from ecom_bench.envs.returns.goal import ReplacementWish, ReturnsGoal
from ecom_bench.envs.returns.user import ReturnsUser, UserScript
from ecom_bench.envs.tracking.references import DATE_STYLES, choose_reference, p_indirect, p_similar, phrase_reference
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World
from ecom_bench.world.orders import (
    OrderStatus,
    RefKind,
    ReturnMethod,
    ReturnReason,
    ReturnRecord,
    build_order_history,
    check_eligibility,
    free_leaves,
    next_return_id,
    product_noun,
    return_window_days,
)

EDGES = ("last_day", "day_before_last", "day_after_last", "final_sale", "already_returned")
ELIGIBLE_EDGES = frozenset({None, "last_day", "day_before_last"})
P_EXCHANGE = 0.25
P_REPLACEMENT = 0.5
P_QUANTITY_2 = 0.2


def p_edge(difficulty: Difficulty) -> float:
    return 0.7 / (1.0 + math.exp(-(difficulty.level - 4) / 1.5))


def _delivered_days_ago(edge: str | None, window: int | None, rng: random.Random) -> int:
    if window is None:
        return rng.randint(2, 20)
    return {"last_day": window, "day_before_last": window - 1, "day_after_last": window + 1}.get(
        edge, rng.randint(2, max(2, window - 3)))


def _replacement(world: World, product: Product, rng: random.Random) -> tuple[ReplacementWish, str] | None:
    """A wish some in-stock product of the same leaf satisfies, and one such product."""
    catalog = world.catalog
    pool = [catalog.products[i] for i in catalog.by_leaf_category[product.leaf_category]]
    pool = [p for p in pool if p.id != product.id and world.in_stock(p)]
    if not pool:
        return None
    kinds = ["max_price", "other_brand", "min_rating"]
    rng.shuffle(kinds)
    for kind in kinds:
        if kind == "max_price":
            prices = sorted(p.price for p in pool)
            wish = ReplacementWish(kind, float(math.ceil(prices[int(0.4 * (len(prices) - 1))])))
        elif kind == "other_brand":
            wish = ReplacementWish(kind, product.brand)
        else:
            wish = ReplacementWish(kind, rng.choice((4.0, 4.5)))
        fits = [p for p in pool if wish.satisfied_by(p.price, p.brand, p.rating)]
        if fits:
            return wish, rng.choice(fits).id
    return None


def build_returns(world: World, seed: int, difficulty: Difficulty, intent: int = 0) -> SubTask:
    rng = seeded_rng("returns", seed, difficulty.level)
    catalog = world.catalog
    edge = rng.choice(EDGES) if rng.random() < p_edge(difficulty) else None
    leaves = free_leaves(world, catalog)

    def top_window(leaf: str) -> int | None:
        return return_window_days(catalog.products[catalog.by_leaf_category[leaf][0]])

    final_sale = [lf for lf in leaves if top_window(lf) is None]
    if edge == "final_sale" and not final_sale:
        edge = "day_after_last"
    candidates = final_sale if edge == "final_sale" else [lf for lf in leaves if top_window(lf) is not None]
    if not candidates:
        raise CatalogTooSparse.lacking(catalog, "category with a return window that no order of this account "
                                                "uses yet")
    for _ in draws(catalog, "returnable product with an in-stock variant"):
        leaf = rng.choice(candidates)
        product = catalog.products[rng.choice(catalog.by_leaf_category[leaf])]
        in_stock = [v for v in product.variants if world.stock_of(product, v) > 0]
        if in_stock or not product.variants:
            break
    window = return_window_days(product)
    variant = rng.choice(in_stock) if in_stock else None
    quantity = 2 if rng.random() < P_QUANTITY_2 else 1
    alternatives = [v for v in product.variants if variant and v.id != variant.id
                    and world.stock_of(product, v) >= quantity]
    kind = "exchange" if alternatives and rng.random() < P_EXCHANGE else "return"
    reasons = [r for r in ReturnReason if r is not ReturnReason.DOES_NOT_FIT
               or (variant is not None and variant.attribute == "size")]
    reason, method = rng.choice(reasons), rng.choice(list(ReturnMethod))
    delivered = _delivered_days_ago(edge, window, rng)
    history = build_order_history(
        world, rng, product, n_recent=difficulty.n_orders, target_status=OrderStatus.DELIVERED,
        target_placed_days_ago=delivered + rng.randint(2, 5), target_delivered_days_ago=delivered,
        target_variant_id=variant.id if variant else None, target_quantity=quantity,
        extra_lines=rng.choice((0, 0, 1, 2)), similar_share=p_similar(difficulty), confusable_delivered=True)
    target, line = history.target, history.target_line
    if edge == "already_returned":
        earlier = target.delivered_at.replace(hour=10) + (world.now - target.delivered_at) / 2
        world.returns.append(ReturnRecord(next_return_id(world), target.order_id, line.line_id, line.product_id,
                                          line.variant_id, line.quantity, "return", reason, method, 0.0,
                                          line.unit_price * line.quantity, earlier))
    eligibility = check_eligibility(world, target, line)
    assert eligibility.eligible == (edge in ELIGIBLE_EDGES), (edge, eligibility.reason)

    ref = choose_reference(world, target, line, rng.random() < p_indirect(difficulty), rng)
    noun = product_noun(product)
    reference_text = phrase_reference(ref, noun, world.now, rng.choice(DATE_STYLES))
    new_variant = rng.choice(alternatives) if kind == "exchange" else None
    wish = _replacement(world, product, rng) if kind == "return" and rng.random() < P_REPLACEMENT else None
    goal = ReturnsGoal(
        order_id=target.order_id, line_id=line.line_id, product_id=product.id,
        variant_id=line.variant_id, leaf=product.leaf_category, kind=kind, reason=reason.value,
        method=method.value, eligible=eligibility.eligible, eligibility=eligibility.reason, edge=edge,
        reference=ref.to_dict(), reference_text=reference_text, n_recent=len(history.recent_set),
        new_variant_id=new_variant.id if new_variant else None,
        new_variant_value=new_variant.value if new_variant else None,
        replacement=wish[0] if wish else None, replacement_example=wish[1] if wish else None)

    disclosure = Disclosure()
    direct = ref.kind is RefKind.ORDER_ID
    for slot in ("order", "item", "reason", "method", "variant"):
        if slot == "item" and not direct or slot == "variant" and kind != "exchange":
            continue
        disclosure.add(slot, rng.random() >= difficulty.p_missing)
    script = UserScript.draw(goal, noun, f"the {short_name(product)}" if rng.random() < 0.5 else f"the {noun}",
                             variant.attribute if variant else None, window, rng)
    user = ReturnsUser(goal, script, difficulty, derive_seed("returns-user", seed, difficulty.level), disclosure,
                       intent)
    return SubTask(env="returns", goal=goal, user=user, intent=intent)


__all__ = ["EDGES", "build_returns", "p_edge"]
