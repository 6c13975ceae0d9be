"""Structural attacks on E_TRACK / E_RETURN: guesses that never read the request.

The red team's strategies, written against what an agent is shown (the order list; a
product's kind is what its title says, here read from the catalogue for a stronger
attacker):

* ``group_newest``: the largest group of recent orders sharing a product kind, its
  newest order (returns: its first line);
* ``group_cue``: a random largest group, its member picked by one structural cue
  (newest, oldest, median date, with a note, busiest status, most lines, ...): the
  best cue's rate is what an attacker tuning on the env would reach;
* ``group_ask``: "Is it A, B or C?" about that group (at most 3 ids) and the id the
  customer names, else the newest;
* ``random_recent``: a random recent order.
Each must stay at chance: at most 5% with a 95% upper bound at most 8% over the episodes.
"""

from __future__ import annotations

import math
import random
import re
import statistics
from collections.abc import Callable
from datetime import timedelta

import pytest
from conftest import call, say

from ecom_bench.domains.orders.book import OrderBook
from ecom_bench.episode import new_episode
from ecom_bench.domains.orders.records import Order, OrderLine, OrderStatus

ORDER_ID = re.compile(r"\bORD-\d{6}\b")
#: What the red team counted as a recent order (the old background is 45+ days old).
RECENT_DAYS = 44
LEVELS = (3, 6, 9, 12)


# ------------------------------------------------------------------ the attacker's view
def largest_groups(world) -> list[tuple[str, list[Order]]]:  # noqa: ANN001
    """The largest groups of recent orders sharing a product kind (leaf category of any line), by leaf name."""
    by_leaf: dict[str, list[Order]] = {}
    for o in world.state(OrderBook).orders:
        if world.now - o.placed_at > timedelta(days=RECENT_DAYS):
            continue
        for leaf in {world.product(ln.product_id).leaf_category for ln in o.lines}:
            by_leaf.setdefault(leaf, []).append(o)
    top = max(len(g) for g in by_leaf.values())
    return sorted((leaf, g) for leaf, g in by_leaf.items() if len(g) == top)


def leaf_line(world, order: Order, leaf: str) -> OrderLine:  # noqa: ANN001
    return next(ln for ln in order.lines if world.product(ln.product_id).leaf_category == leaf)


CUES: dict[str, Callable[[list[Order]], Order]] = {
    "newest": lambda g: max(g, key=lambda o: o.placed_at),
    "oldest": lambda g: min(g, key=lambda o: o.placed_at),
    "median": lambda g: sorted(g, key=lambda o: o.placed_at)[len(g) // 2],
    "note": lambda g: next((o for o in g if o.note), g[0]),
    "no_note": lambda g: next((o for o in g if not o.note), g[0]),
    "most_lines": lambda g: max(g, key=lambda o: len(o.lines)),
    "fewest_lines": lambda g: min(g, key=lambda o: len(o.lines)),
    "moving": lambda g: next((o for o in g if o.status not in (OrderStatus.DELIVERED, OrderStatus.CANCELLED)), g[0]),
    "dearest": lambda g: max(g, key=lambda o: o.total),
    "cheapest": lambda g: min(g, key=lambda o: o.total),
}


def _target(ep) -> tuple[str, str | None]:  # noqa: ANN001
    g = ep.problem.goal
    return g.order_id, getattr(g, "line_id", None)


def structural_hits(ep, rng: random.Random) -> dict[str, bool]:  # noqa: ANN001
    """For each strategy, whether its guess is the target (returns: order and line)."""
    world = ep.world
    oid, lid = _target(ep)
    groups = largest_groups(world)
    leaf, group = groups[0]  # the red team's "largest group" (ties: first by name)
    pick_leaf, pick_group = rng.choice(groups)

    def right(order: Order, leaf_: str, first_line: bool = False) -> bool:
        if lid is None:
            return order.order_id == oid
        line = order.lines[0] if first_line else leaf_line(world, order, leaf_)
        return (order.order_id, line.line_id) == (oid, lid)

    hits = {"group_newest": right(CUES["newest"](group), leaf, first_line=True)}
    for name, cue in CUES.items():
        hits[f"cue_{name}"] = right(cue(pick_group), pick_leaf)
    recent = [o for o in world.state(OrderBook).orders if world.now - o.placed_at <= timedelta(days=RECENT_DAYS)]
    guess = rng.choice(recent)
    hits["random_recent"] = right(guess, world.product(guess.lines[0].product_id).leaf_category, first_line=True)
    return hits


def group_ask(ep) -> bool:  # noqa: ANN001
    """Ask "Is it A, B or C?" about the largest group's newest three, take the id the customer names."""
    world = ep.world
    oid, lid = _target(ep)
    leaf, group = largest_groups(world)[0]
    shown = sorted(group, key=lambda o: o.placed_at, reverse=True)[:3]
    ids = [o.order_id for o in shown]
    call(ep, "order_list", {})
    reply = say(ep, "Which of these orders is it: " + ", ".join(ids[:-1]) + f" or {ids[-1]}?")
    named = [m for m in ORDER_ID.findall(reply.text if reply else "") if m in ids]
    pick = next(o for o in shown if o.order_id == (named[0] if named else ids[0]))
    if lid is None:
        return pick.order_id == oid
    return (pick.order_id, leaf_line(world, pick, leaf).line_id) == (oid, lid)


def upper95(k: int, n: int) -> float:
    """Wilson score upper bound of a rate k/n at 95%."""
    z, p = 1.96, k / n
    return (p + z * z / (2 * n) + z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)


def attack_rates(context, env: str, n: int, levels=LEVELS) -> dict[str, tuple[int, int]]:  # noqa: ANN001
    """(wins, episodes) of every strategy over n episodes at each level."""
    wins: dict[str, int] = {}
    total = 0
    for d in levels:
        for i in range(n):
            rng = random.Random(f"attack-{env}-{d}-{i}")
            hits = structural_hits(new_episode(env, d, 0, i, context=context), rng)
            hits["group_ask"] = group_ask(new_episode(env, d, 0, i, context=context))
            for k, v in hits.items():
                wins[k] = wins.get(k, 0) + v
            total += 1
    return {k: (v, total) for k, v in wins.items()}


# ------------------------------------------------------------------------------ tests
@pytest.mark.parametrize("env", ["tracking", "returns"])
def test_structure_alone_finds_the_target_at_chance(context, env):
    rates = attack_rates(context, env, 50)
    bad = {k: f"{w}/{n}" for k, (w, n) in rates.items() if w / n > 0.05 or upper95(w, n) > 0.08}
    assert not bad, f"{env}: structural strategies above chance: {bad}"
    assert statistics.mean(w / n for w, n in rates.values()) <= 0.05
