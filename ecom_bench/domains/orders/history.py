"""The generator of a customer's order history: `build_order_history`, the one generator of
look-alike histories that E_TRACK, E_RETURN and E_JOURNEY share.

It writes the orders (and the returns made before the conversation) into the world's
`OrderBook` (`book.py`); the records and the store's rules are `records.py`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import ClassVar

import numpy as np

from ecom_bench.catalog import Catalog, CatalogTooSparse, draws
from ecom_bench.catalog.lookups import catalog_lookups
from ecom_bench.domains.orders.book import OrderBook, next_return_id
from ecom_bench.domains.orders.records import (
    Order,
    OrderLine,
    OrderStatus,
    ReturnMethod,
    ReturnReason,
    ReturnRecord,
    line_leaf,
    return_fee,
)
from ecom_bench.world.state import World

CARRIERS = ("UPS", "FedEx", "USPS", "DHL")
NOTES = ("gift for Mom", "for the office", "for our camping trip", "for my nephew's birthday",
         "for the new apartment", "gift for Dad", "for the holidays", "for my sister's wedding",
         "for the kids' school", "for the cabin")
#: Age in days at which an order can have each status (consistent with its dates).
STATUS_AGE_DAYS: dict[OrderStatus, tuple[int, int]] = {
    OrderStatus.CONFIRMED: (0, 1), OrderStatus.SHIPPED: (1, 3), OrderStatus.IN_TRANSIT: (2, 7),
    OrderStatus.DELIVERED: (3, 40), OrderStatus.CANCELLED: (0, 40),
}
#: Old history: delivered or cancelled orders, 45-540 days old.
BACKGROUND_OLD = (32, 40)
OLD_AGE_DAYS = (45, 540)
#: The leaf categories the old history and the extra lines of recent orders are drawn from,
#: shared by every build of a world (E_JOURNEY), so the other leaves stay free for groups.
BACKGROUND_LEAVES = 8
#: Share of group orders with a note ("gift for Mom"): the same for every member of every group.
NOTE_SHARE = 0.3
#: Look-alike groups per history (the target's and its decoys): at least MIN_GROUPS, and
#: enough that groups × H_orders ≥ CHANCE_DENOMINATOR, so "a random group's most likely
#: member" is right at most ~1/32 of the time whatever structural cue picks the member.
MIN_GROUPS = 10
CHANCE_DENOMINATOR = 32


def group_count(n_recent: int) -> int:
    """How many look-alike groups a history wants (fewer when the catalogue has too few free leaves)."""
    return max(MIN_GROUPS, math.ceil(CHANCE_DENOMINATOR / max(1, n_recent)))


def statuses_for_age(days: int) -> list[OrderStatus]:
    return [s for s, (lo, hi) in STATUS_AGE_DAYS.items() if lo <= days <= hi or (s is OrderStatus.DELIVERED
                                                                                 and days > hi)]


#: `random_digits`: a word's top byte -> its top 4 bits as an ASCII digit (when below 10) ...
_TOP_NIBBLE_DIGIT = bytes(48 + (b >> 4) if b < 160 else 0 for b in range(256))
#: ... and the top bytes whose top 4 bits are 10-15: `randrange(10)` rejects those words.
_REJECTED_TOP = bytes(range(160, 256))


def random_digits(rng: random.Random, n: int) -> str:
    """n decimal digits: exactly what ``"".join(str(rng.randrange(10)) for _ in range(n))``
    returns, leaving `rng` in the same state, at a fraction of the cost (a history has
    ~100 tracking numbers of 12-22 digits).

    `random.Random.randrange(10)` draws one 32-bit Mersenne-Twister word at a time and
    keeps its top 4 bits when they are below 10, else draws again. Here the words come in
    batches of as many as digits are still missing (``getrandbits(32·k)`` draws k words,
    the first in the lowest 32 bits), and bytes.translate keeps the digits: every batch
    word is one the digit loop would have drawn too, so the stream never runs ahead. A
    subclass of `Random` (whose randrange may draw differently) gets the plain loop.
    """
    if type(rng) is not random.Random:
        return "".join(str(rng.randrange(10)) for _ in range(n))
    out = b""
    while len(out) < n:
        need = n - len(out)
        words = rng.getrandbits(32 * need).to_bytes(4 * need, "little")
        out += words[3::4].translate(_TOP_NIBBLE_DIGIT, _REJECTED_TOP)
    return out.decode("ascii")


def _tracking_number(carrier: str, rng: random.Random) -> str:
    # Every carrier's digits are drawn (16 UPS, 12 FedEx, 18 USPS, 10 other, in that order),
    # whichever the carrier: one 56-digit draw is the same stream.
    d = random_digits(rng, 56)
    return {"UPS": "1Z" + d[:16], "FedEx": d[16:28], "USPS": "9400" + d[28:46]}.get(carrier, d[46:])


def _new_order_id(rng: random.Random, taken: set[str]) -> str:
    while True:
        oid = f"ORD-{rng.randrange(100000, 1000000)}"
        if oid not in taken:
            taken.add(oid)
            return oid


@dataclass(frozen=True)
class MemberPlan:
    """How one order of a look-alike group is dated and filled (drawn by `GroupProcess.member`)."""

    status: OrderStatus
    placed_days_ago: int
    delivered_days_ago: int | None = None  # None: 2-6 days after it was placed
    variant_id: str | None = None  # the group line's variant (None: a random one)
    quantity: int = 1
    extra_lines: int = 0  # lines of background products besides the group line
    returned: bool = False  # the group line was already returned before the conversation
    edge: str | None = None  # the env's name for what makes this member special, if anything


class GroupProcess:
    """How an env draws its look-alike groups.

    ONE process draws the target's group and every decoy group, and every member of a
    group, target included; the target is then a random member of the first group. So
    no cue of a group (size, kind, dates, statuses) or of a member (age, status, note,
    lines, position of the line) tells the target apart: only the customer's words do.
    """

    #: Put the group line at a random position among the order's lines (else first).
    random_line_position: ClassVar[bool] = False
    #: How often the group's products share the anchor product's brand (harder to tell apart).
    similar_share: float = 0.0

    def leaf(self, rng: random.Random, leaves: list[str], catalog: Catalog) -> str | None:
        """A leaf category for a new group among `leaves` (None when none suits)."""
        return rng.choice(leaves) if leaves else None

    def usable(self, world: World, rows: np.ndarray) -> np.ndarray:
        """Which of `rows` (catalogue rows of one leaf) a group may use, as a bool mask."""
        return np.ones(len(rows), dtype=bool)

    def member(self, rng: random.Random, world: World, row: int) -> MemberPlan:
        """The plan of one member, whose group line is catalogue row `row` (`world.catalog.products[row]`)."""
        raise NotImplementedError


@dataclass
class OrderHistory:
    """What one build added: the target, its look-alike group, the decoy groups, the old background."""

    target: Order
    target_line: OrderLine
    groups: list[list[Order]] = field(default_factory=list)  # the target's group first
    background: list[Order] = field(default_factory=list)
    plans: dict[str, MemberPlan] = field(default_factory=dict)  # order id -> its plan

    @property
    def recent_set(self) -> list[Order]:
        """The orders an indirect reference must be resolved against: H_orders(d) of them."""
        return list(self.groups[0])

    @property
    def confusable(self) -> list[Order]:
        return [o for o in self.groups[0] if o is not self.target]


class _Builder:
    """Makes date-consistent orders with world-unique ids for one build.

    Orders are made of catalogue rows, not `Product`s: a line needs only the product's id,
    price and variants, read from the catalogue's columns (making a Product costs ~20-45 µs,
    and a history has ~130 lines, most never looked at again)."""

    def __init__(self, world: World, rng: random.Random) -> None:
        self.world, self.rng = world, rng
        self.taken = {o.order_id for o in world.state(OrderBook).orders}
        self.today = world.now.date()

    def at(self, days_ago: int, lo_hour: int = 7, hi_hour: int = 22) -> datetime:
        day = self.today - timedelta(days=days_ago)
        hi = max(0, min(hi_hour, self.world.now.hour - 1)) if days_ago == 0 else hi_hour
        return datetime.combine(day, time(self.rng.randint(min(lo_hour, hi), hi), self.rng.randrange(60)))

    def line(self, order_id: str, n: int, row: int, quantity: int, variant_id: str | None = None) -> OrderLine:
        """A line of catalogue row `row`: the given variant, else a random one (when it has any)."""
        catalog = self.world.catalog
        first = int(catalog.variant_offsets[row])
        vids = catalog.variant_ids_at(row)
        if variant_id is None and vids:
            variant_id = self.rng.choice(vids)
        at = vids.index(variant_id) if variant_id in vids else -1
        price = float(catalog.variant_prices[first + at]) if at >= 0 else float(catalog.prices[row])
        return OrderLine(f"{order_id}-L{n}", catalog.id_at(row), variant_id, quantity, price, row=row)

    def order(self, rows: list[int], status: OrderStatus, placed_days_ago: int, *,
              delivered_days_ago: int | None = None, note: str | None = None, lead: int = 0,
              lead_variant: str | None = None, lead_quantity: int = 1) -> Order:
        """An order of catalogue `rows`; line `lead` (0-based) gets `lead_variant` and `lead_quantity`."""
        rng = self.rng
        oid = _new_order_id(rng, self.taken)
        lines = [self.line(oid, i + 1, r, lead_quantity if i == lead else rng.choice((1, 1, 1, 2)),
                           lead_variant if i == lead else None) for i, r in enumerate(rows)]
        order = Order(oid, self.at(placed_days_ago), status, lines, note=note)
        if status in (OrderStatus.SHIPPED, OrderStatus.IN_TRANSIT, OrderStatus.DELIVERED):
            order.carrier = rng.choice(CARRIERS)
            order.tracking_number = _tracking_number(order.carrier, rng)
        if status in (OrderStatus.CONFIRMED, OrderStatus.SHIPPED, OrderStatus.IN_TRANSIT):
            order.eta = self.today + timedelta(days=rng.randint(1, 5))
        if status is OrderStatus.DELIVERED:
            if delivered_days_ago is None:
                transit = rng.randint(2, min(6, placed_days_ago))
                delivered_days_ago = placed_days_ago - transit
            order.delivered_at = self.at(delivered_days_ago, 9, 19)
        self.world.state(OrderBook).orders.append(order)
        return order

    def returned(self, order: Order, line: OrderLine) -> None:
        """Record a return of `line` made before the conversation (halfway between delivery and now)."""
        assert order.delivered_at is not None
        rng = self.rng
        reason, method = rng.choice(list(ReturnReason)), rng.choice(list(ReturnMethod))
        fee = return_fee(reason, method)
        created = order.delivered_at.replace(hour=10) + (self.world.now - order.delivered_at) / 2
        self.world.state(OrderBook).returns.append(ReturnRecord(next_return_id(self.world), order.order_id, line.line_id,
                                               line.product_id, line.variant_id, line.quantity, "return", reason,
                                               method, fee, round(line.unit_price * line.quantity - fee, 2), created))


def _leaf_rows(catalog: Catalog) -> dict[str, np.ndarray]:
    """Leaf category -> its rows (ascending): the catalogue's `by_leaf_category` as the
    catalogue lookups' arrays, built when the catalogue is loaded rather than on a first reset."""
    return catalog_lookups(catalog).leaf_rows


def _leaves_of(world: World, orders: list[Order]) -> set[str]:
    leaves = {line_leaf(world.catalog, ln) for o in orders for ln in o.lines}
    leaves.discard(None)
    return leaves  # type: ignore[return-value]


def free_leaves(world: World, catalog: Catalog) -> list[str]:
    """Leaf categories no order in the world uses yet."""
    used = _leaves_of(world, world.state(OrderBook).orders)
    leaves = _leaf_rows(catalog)
    return sorted(set(leaves) - used) or sorted(leaves)


def background_leaves(world: World, rng: random.Random) -> list[str]:
    """The world's background leaves: those its earlier builds' background used, topped up to BACKGROUND_LEAVES."""
    groups = {o.group_leaf for o in world.state(OrderBook).orders if o.group_leaf}
    leaves = sorted(_leaves_of(world, world.state(OrderBook).orders) - groups)
    if len(leaves) < BACKGROUND_LEAVES:
        free = [lf for lf in sorted(_leaf_rows(world.catalog)) if lf not in groups and lf not in leaves]
        leaves += rng.sample(free, min(len(free), BACKGROUND_LEAVES - len(leaves)))
    return leaves


#: `_untaken`: below this many rows, pick among the untaken ones directly (no rejection).
_SMALL_POOL = 64


def _untaken(rng: random.Random, rows: np.ndarray, taken: set[int]) -> int:
    """A uniformly random row of `rows` not in `taken` (at least one is not): by rejection,
    which costs O(1) draws when `rows` is much larger than `taken`, whatever the leaf's size."""
    if len(rows) <= _SMALL_POOL:
        return rng.choice([r for r in rows.tolist() if r not in taken])
    while True:
        r = int(rows[rng.randrange(len(rows))])
        if r not in taken:
            return r


def _group_products(rng: random.Random, catalog: Catalog, pool: np.ndarray, n: int,
                    similar_share: float) -> list[int]:
    """n distinct products of one leaf (`pool`: its usable rows); each after the first shares
    the first one's brand with probability `similar_share` (when it can). The target is drawn
    among them afterwards, so brand clusters say nothing about which member it is.

    Each pick after the first is a uniformly random untaken product of the anchor's brand
    (with probability `similar_share`, while one is left), else of the whole pool, drawn
    lazily: the cost does not grow with the leaf (shuffling the leaf drew one number per
    product, ~27,000 a history at 200k products)."""
    anchor = int(rng.choice(pool))
    brand = catalog_lookups(catalog).brand_code
    same = pool[(brand[pool] == brand[anchor]) & (pool != anchor)]
    picks, taken = [anchor], {anchor}
    same_left = len(same)
    while len(picks) < min(n, len(pool)):
        if same_left and rng.random() < similar_share:
            r = _untaken(rng, same, taken)
        else:
            r = _untaken(rng, pool, taken)
        same_left -= bool(brand[r] == brand[anchor])
        picks.append(r)
        taken.add(r)
    return picks


def build_order_history(world: World, rng: random.Random, process: GroupProcess, *, n_recent: int) -> OrderHistory:
    """Append one customer's order history to `world` and return what was added.

    - `group_count(n_recent)` look-alike groups (as many as the free leaves allow), each
      `n_recent` orders of distinct products of one leaf category no other order of the
      world uses; every group and every member drawn by `process` the same way;
    - the target: a random member of the first group (its group line: `target_line`);
    - old background: 32-40 delivered or cancelled orders, 45-540 days old, in the
      world's background leaves (which also supply the groups' extra lines).
    Group leaves are never reused by a later build, so every earlier reference stays
    unique (E_JOURNEY). The caller picks a description of the target with `unique_references`.
    """
    catalog = world.catalog
    b = _Builder(world, rng)
    n = max(1, n_recent)
    background = background_leaves(world, rng)
    taken = _leaves_of(world, world.state(OrderBook).orders) | set(background)
    by_leaf = _leaf_rows(catalog)
    free = [lf for lf in sorted(by_leaf) if lf not in taken]
    groups: list[tuple[str, list[int]]] = []
    while len(groups) < group_count(n):
        leaf = process.leaf(rng, free, catalog)
        if leaf is None:
            break
        free.remove(leaf)
        rows = catalog_lookups(catalog).leaf(leaf)
        pool = rows[process.usable(world, rows)]
        if len(pool):  # a leaf has dozens of products: fewer than n only at absurd d
            groups.append((leaf, _group_products(rng, catalog, pool, n, process.similar_share)))
    if not groups:
        raise CatalogTooSparse.lacking(
            catalog, "leaf category for a look-alike order group that no order of this world uses yet",
            f": an order history (returns, tracking) needs at least {BACKGROUND_LEAVES + 1} leaf categories, "
            f"{BACKGROUND_LEAVES} for the account's older orders and one per look-alike group, and a second one "
            f"in the same world (a journey's return and tracking requests) {BACKGROUND_LEAVES + 1} plus the "
            f"first one's groups ({group_count(1)} at d = 0-1, {group_count(4)} from d = 6); this catalogue has "
            f"{len(by_leaf)}, {len(taken)} of them used by this world's orders (docs/catalogue.md)")

    def background_product(exclude: list[int]) -> int:
        """A random row of the background leaves not in `exclude` (rows are products: ids are unique)."""
        need = "background product for an order history"
        if not background:
            raise CatalogTooSparse.lacking(catalog, need)
        for _ in draws(catalog, need):
            row = int(rng.choice(by_leaf[rng.choice(background)]))
            if row not in exclude:
                return row
        raise AssertionError("unreachable: draws() raises once exhausted")

    members = [(g, r, process.member(rng, world, r)) for g, (_, rows) in enumerate(groups) for r in rows]
    rng.shuffle(members)  # creation order (the world's list order) says nothing either
    history = OrderHistory(target=None, target_line=None, groups=[[] for _ in groups])  # type: ignore[arg-type]
    leads: dict[str, OrderLine] = {}
    for g, row, plan in members:
        line_rows = [row]
        for _ in range(plan.extra_lines):
            line_rows.append(background_product(line_rows))
        lead = rng.randrange(len(line_rows)) if process.random_line_position else 0
        line_rows[0], line_rows[lead] = line_rows[lead], line_rows[0]
        order = b.order(line_rows, plan.status, plan.placed_days_ago, delivered_days_ago=plan.delivered_days_ago,
                        note=rng.choice(NOTES) if rng.random() < NOTE_SHARE else None, lead=lead,
                        lead_variant=plan.variant_id, lead_quantity=plan.quantity)
        order.group_leaf = groups[g][0]
        leads[order.order_id] = order.lines[lead]
        if plan.returned:
            b.returned(order, order.lines[lead])
        history.groups[g].append(order)
        history.plans[order.order_id] = plan
    for group in history.groups:
        group.sort(key=lambda o: o.placed_at)
    history.target = rng.choice(history.groups[0])
    history.target_line = leads[history.target.order_id]

    for _ in range(rng.randint(*BACKGROUND_OLD)):
        age = rng.randint(*OLD_AGE_DAYS)
        items: list[int] = []
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            items.append(background_product(items))
        status = OrderStatus.CANCELLED if rng.random() < 0.12 else OrderStatus.DELIVERED
        history.background.append(b.order(items, status, age,
                                          note=rng.choice(NOTES) if rng.random() < 0.1 else None))
    return history


__all__ = [
    "CARRIERS",
    "NOTES",
    "STATUS_AGE_DAYS",
    "GroupProcess",
    "MemberPlan",
    "OrderHistory",
    "background_leaves",
    "build_order_history",
    "free_leaves",
    "group_count",
    "random_digits",
    "statuses_for_age",
]
