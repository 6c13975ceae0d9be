"""E_RETURN generator: a delivered target line, its look-alikes, edge cases, wishes.

One RNG seeded by (env, seed, d) draws everything. The recent history is look-alike
groups of H_orders(d) delivered orders each, one leaf category per group, drawn by one
process (`ReturnsProcess`, `domains.orders.history.build_order_history`); the target is a random
member of one group, and its line sits at a random position among its order's lines.
With p_edge(d) = 0.7·σ((d−4)/1.5) an order (target or not) is an edge case of the store
rule: delivered exactly on the window's last day or the day before (still eligible), the
day after (not eligible), a final-sale item, or a line already returned. The
eligibility is computed by the same rule the tools enforce.
"""

from __future__ import annotations

import math
import random

import numpy as np

from ecom_bench._seeding import derive_seed, seeded_rng
from ecom_bench.catalog import Catalog, Product
from ecom_bench.catalog.lookups import catalog_lookups
from ecom_bench.catalog.naming import product_noun, short_name
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.base import EnvAxis, SubTask
from ecom_bench.envs.returns.goal import ReplacementWish, ReturnsGoal
from ecom_bench.envs.returns.user import ReturnsUser, UserScript
from ecom_bench.envs.tracking.references import (
    DATE_STYLES,
    alternate_phrases,
    choose_reference,
    p_indirect,
    p_similar,
    phrase_reference,
)
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World
from ecom_bench.domains.orders.eligibility import check_eligibility
from ecom_bench.domains.orders.history import GroupProcess, MemberPlan, build_order_history
from ecom_bench.domains.orders.records import (
    OrderStatus,
    DEFAULT_RETURN_WINDOW_DAYS,
    RETURN_WINDOW_DAYS,
    ReturnMethod,
    ReturnReason,
    return_window_days,
)
from ecom_bench.domains.orders.references import RefKind
from ecom_bench.world.state import in_stock_mask

EDGES = ("last_day", "day_before_last", "day_after_last", "final_sale", "already_returned")
ELIGIBLE_EDGES = frozenset({None, "last_day", "day_before_last"})
P_EXCHANGE = 0.25
P_REPLACEMENT = 0.5
P_QUANTITY_2 = 0.2
#: Lines of other kinds a group order carries besides its group line.
EXTRA_LINES = (0, 0, 1, 2)


#: E_RETURN's own edge-case axis (the order-history axes are E_TRACK's, `tracking.references`).
P_EDGE = EnvAxis("p_edge", "chance an order is a store-rule edge case (window's last day, final sale, ...)",
                 "0.7·σ((d − 4)/1.5)", lambda d: 0.7 / (1.0 + math.exp(-(d - 4) / 1.5)))


def p_edge(difficulty: Difficulty) -> float:
    return float(P_EDGE.at(difficulty))


def _delivered_days_ago(edge: str | None, window: int | None, rng: random.Random) -> int:
    if window is None:
        return rng.randint(2, 20)
    by_edge: dict[str | None, int] = {"last_day": window, "day_before_last": window - 1, "day_after_last": window + 1}
    return by_edge.get(edge, rng.randint(2, max(2, window - 3)))


def _replacement(world: World, product: Product, rng: random.Random) -> tuple[ReplacementWish, str] | None:
    """A wish some in-stock product of the same leaf satisfies, and one such product."""
    catalog = world.catalog
    rows = catalog_lookups(catalog).leaf(product.leaf_category)
    rows = rows[rows != catalog.index_of(product.id)]
    rows = rows[in_stock_mask(world, rows)]
    if not len(rows):
        return None
    kinds = ["max_price", "other_brand", "min_rating"]
    rng.shuffle(kinds)
    for kind in kinds:
        if kind == "max_price":
            prices = np.sort(catalog.prices[rows])
            wish = ReplacementWish(kind, float(math.ceil(prices[int(0.4 * (len(prices) - 1))])))
            fits = rows[catalog.prices[rows] <= float(wish.value)]
        elif kind == "other_brand":
            wish = ReplacementWish(kind, product.brand)
            brand = catalog_lookups(catalog).brand_code
            fits = rows[brand[rows] != brand[catalog.index_of(product.id)]]
        else:
            wish = ReplacementWish(kind, rng.choice((4.0, 4.5)))
            fits = rows[catalog.ratings[rows] >= float(wish.value)]
        if len(fits):
            return wish, catalog.products[int(rng.choice(fits))].id
    return None


class ReturnsProcess(GroupProcess):
    """Every group order is delivered and may be an edge case of the store rule, target or not.

    A group is in a final-sale leaf with probability p_edge/5 (when one is free); in any
    other group each order is, with the same total probability p_edge/5 per kind, delivered
    on its window's last day, the day before, the day after, or already returned. So the
    target's edge has the distribution it always had, and no order stands out by it.
    """

    random_line_position = True

    def __init__(self, difficulty: Difficulty) -> None:
        self.similar_share = p_similar(difficulty)
        self.p_kind = p_edge(difficulty) / len(EDGES)

    def leaf(self, rng: random.Random, leaves: list[str], catalog: Catalog) -> str | None:
        top = catalog_lookups(catalog).leaf_top
        final = [lf for lf in leaves if RETURN_WINDOW_DAYS.get(top.get(lf, ""), 0) is None]
        other = [lf for lf in leaves if RETURN_WINDOW_DAYS.get(top.get(lf, ""), 0) is not None]
        pool = final if final and rng.random() < self.p_kind else other or final
        return rng.choice(pool) if pool else None

    def usable(self, world: World, rows: np.ndarray) -> np.ndarray:
        """Products without variants, and those with a variant in stock (one can be ordered)."""
        return ~catalog_lookups(world.catalog).has_variants[rows] | in_stock_mask(world, rows)

    def member(self, rng: random.Random, world: World, row: int) -> MemberPlan:
        """Read from the catalogue's columns (no Product is made): the row's return window
        (`return_window_days`) and its variants in stock (`world.stock_of` of each)."""
        ix = catalog_lookups(world.catalog)
        path = ix.paths[ix.path_code[row]]
        window = RETURN_WINDOW_DAYS.get(path[0] if path else "", DEFAULT_RETURN_WINDOW_DAYS)
        edge = None
        if window is None:
            edge = "final_sale"
        elif rng.random() < 4 * self.p_kind / (1 - self.p_kind):
            edge = rng.choice([e for e in EDGES if e != "final_sale"])
        delivered = _delivered_days_ago(edge, window, rng)
        catalog = world.catalog
        first = int(catalog.variant_offsets[row])
        in_stock = [vid for k, vid in enumerate(catalog.variant_ids_at(row), first)
                    if world.stock.get(vid, int(catalog.variant_stocks[k])) > 0]
        return MemberPlan(OrderStatus.DELIVERED, delivered + rng.randint(2, 5), delivered,
                          variant_id=rng.choice(in_stock) if in_stock else None,
                          quantity=2 if rng.random() < P_QUANTITY_2 else 1, extra_lines=rng.choice(EXTRA_LINES),
                          returned=edge == "already_returned", edge=edge)


def build_returns(world: World, seed: int, difficulty: Difficulty, intent: int = 0,
                 customer: type[ReturnsUser] = ReturnsUser) -> SubTask:
    rng = seeded_rng("returns", seed, difficulty.level)
    catalog = world.catalog
    history = build_order_history(world, rng, ReturnsProcess(difficulty), n_recent=difficulty.n_orders)
    target, line = history.target, history.target_line
    edge = history.plans[target.order_id].edge
    product = catalog.get(line.product_id)
    assert product is not None
    window = return_window_days(product)
    variant = product.variant(line.variant_id) if line.variant_id else None
    quantity = line.quantity
    alternatives = [v for v in product.variants if variant and v.id != variant.id
                    and world.stock_of(product, v) >= quantity]
    kind = "exchange" if alternatives and rng.random() < P_EXCHANGE else "return"
    reasons = [r for r in ReturnReason if r is not ReturnReason.DOES_NOT_FIT
               or (variant is not None and variant.attribute == "size")]
    reason, method = rng.choice(reasons), rng.choice(list(ReturnMethod))
    eligibility = check_eligibility(world, target, line)
    assert eligibility.eligible == (edge in ELIGIBLE_EDGES), (edge, eligibility.reason)

    ref = choose_reference(world, target, line, rng.random() < p_indirect(difficulty), rng)
    kind_noun = product_noun(product)
    noun = kind_noun.one
    date_style = rng.choice(DATE_STYLES)
    reference_text = phrase_reference(ref, noun, world.now, date_style)
    alternates = alternate_phrases(world, target, line, ref, noun, date_style, rng)
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
                             variant.attribute if variant else None, window, rng,
                             a_replacement=kind_noun.a("replacement"))
    user = customer(goal, script, difficulty, derive_seed("returns-user", seed, difficulty.level), disclosure,
                       intent, alternates)
    return SubTask(env="returns", goal=goal, user=user, intent=intent)


__all__ = ["EDGES", "build_returns", "p_edge"]
