"""The rule generator: `make_rule` draws a rule of a family together with a customer's situation,
and keeps it only when every clause moves the answer (`rules.py` says why and how far).

Conditions are drawn blind, then which of them hold, then the customer's values that make them
so, so a condition's text never says whether it holds.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from ecom_bench.domains.policy.rules import (
    FAMILIES,
    SLOTS,
    Clause,
    Condition,
    Effect,
    EffectOp,
    Family,
    PolicyRule,
    Slot,
)


def _nice_money(x: float) -> float:
    step = 0.25 if x < 10 else 1.0 if x < 100 else 5.0
    return max(step, round(x / step) * step)


def _condition(rng: random.Random, slot: Slot, used: set[tuple]) -> Condition | None:
    """A condition on `slot` drawn without looking at the customer's value (None: a repeat).

    Why blind: a condition drawn to hold (or fail) for a known value gives itself away by
    its text ("at least $390" on a $15-$400 range rarely holds; a list of 3 of 4 values
    always did). Drawn first, with the value drawn after to make it hold or fail, its text
    says nothing about whether it holds.
    """
    if slot.is_choice:
        size = rng.randint(1, len(slot.choices) - 1)
        chosen = set(rng.sample(slot.choices, size))
        cond = Condition(slot.key, "in", values=tuple(c for c in slot.choices if c in chosen))
    else:
        op: Literal["at_least", "under"] = rng.choice(("at_least", "under"))
        cond = Condition(slot.key, op, threshold=rng.choice(slot.thresholds()))
    key = (cond.slot, cond.op, cond.threshold, cond.values)
    if key in used:
        return None
    used.add(key)
    return cond


def _value(rng: random.Random, slot: Slot, wanted: list[tuple[Condition, bool]]) -> Any:
    """A value of `slot`, uniform among those giving each condition its wanted truth (None if none does)."""
    def fits(v: Any) -> bool:
        return all(c.holds({slot.key: v}) == truth for c, truth in wanted)

    if slot.is_choice:
        ok = [c for c in slot.choices if fits(c)]
        return rng.choice(ok) if ok else None
    if slot.decimals == 0:
        whole = [v for v in range(int(slot.lo), int(slot.hi) + 1) if fits(v)]
        return rng.choice(whole) if whole else None
    a, b = slot.lo, slot.hi
    for c, truth in wanted:  # the interval the conditions leave: [a, b]
        if (c.op == "at_least") == truth:
            a = max(a, c.threshold)
        else:
            b = min(b, c.threshold)
    for _ in range(20):
        v = round(rng.uniform(a, b), slot.decimals)
        if a <= v <= b and fits(v):
            return v
    return None


def _truths(rng: random.Random, fam: Family, n: int) -> list[bool]:
    """Which clauses hold. Numeric: each at even odds. Categorical (a decision list): the
    decisive clause, or the default, is drawn uniformly; every clause before it fails and
    the ones after it hold or not at even odds (they cannot change the answer)."""
    if fam.kind == "number":
        return [rng.random() < 0.5 for _ in range(n)]
    decisive = rng.randint(0, n)  # n: no clause holds, the default decides
    return [False] * decisive + [True] * (decisive < n) + [rng.random() < 0.5 for _ in range(n - decisive - 1)]


def _effect(rng: random.Random, unit: str, running: float, slot: Slot, situation: dict[str, Any]) -> Effect:
    frac = rng.uniform(0.12, 0.5)
    if unit != "$":  # days and months: whole units
        n = max(1, round(frac * running))
        return Effect(rng.choice(("add", "subtract")), float(n))
    ops: list[EffectOp] = ["add", "subtract", "percent_off", "percent_more"]
    if slot.per and slot.unit != "$" and float(situation[slot.key]) >= 1:  # "per dollar": starts only
        ops.append("per_unit")
    op = rng.choice(ops)
    if op in ("percent_off", "percent_more"):
        return Effect(op, float(rng.choice((10, 15, 20, 25, 30, 40))))
    if op == "per_unit":
        rate = max(0.05, round(frac * max(running, 5) / float(situation[slot.key]) / 0.05) * 0.05)
        return Effect(op, round(rate, 2), slot.key)
    return Effect(op, _nice_money(frac * max(running, 5)))


def make_rule(rng: random.Random, family: str, scope: str, n_clauses: int, rule_id: str,
              *, max_attempts: int = 400) -> tuple[PolicyRule, dict[str, Any]]:
    """A rule of `family` for `scope` with `n_clauses` clauses, and a situation whose answer
    depends on every clause it must (see the module docstring). Deterministic given `rng`."""
    fam = FAMILIES[family]
    if fam.max_clauses is not None and n_clauses > fam.max_clauses:
        raise ValueError(f"{family} rules hold at most {fam.max_clauses} clauses, asked for {n_clauses}")
    for _ in range(max_attempts):
        pool = list(fam.pool)
        rng.shuffle(pool)
        keys = pool[:n_clauses] + [rng.choice(fam.pool) for _ in range(n_clauses - len(pool))]
        drawn = _draw_rule(rng, fam, scope, keys, rule_id)
        if drawn is not None and drawn[0].depends_on_every_clause(drawn[1]):
            return drawn
    raise RuntimeError(f"could not draw a {family} rule with {n_clauses} clauses")


def _draw_rule(rng: random.Random, fam: Family, scope: str, keys: list[str],
               rule_id: str) -> tuple[PolicyRule, dict[str, Any]] | None:
    """Conditions first (blind), then which hold, then the customer's values that make them so."""
    used: set[tuple] = set()
    conditions: list[Condition] = []
    for k in keys:
        cond = next((c for _ in range(10) if (c := _condition(rng, SLOTS[k], used)) is not None), None)
        if cond is None:
            return None
        conditions.append(cond)
    truths = _truths(rng, fam, len(keys))
    situation: dict[str, Any] = {fam.scope: scope}
    for k in dict.fromkeys(([fam.amount_slot] if fam.amount_slot else []) + keys):
        # The first condition on a slot gets its drawn truth; a slot read twice (only when a
        # numeric rule has more clauses than its family has slots) decides the later ones.
        first = next(([(c, t)] for c, t in zip(conditions, truths, strict=True) if c.slot == k), [])
        value = _value(rng, SLOTS[k], first)
        if value is None:
            return None
        situation[k] = value
    truths = [c.holds(situation) for c in conditions]
    if fam.kind == "choice":
        labels = rng.sample(fam.outcomes, len(keys) + 1)
        decisions = tuple(Clause(c, outcome=o) for c, o in zip(conditions, labels[:-1], strict=True))
        return PolicyRule(rule_id, fam.key, scope, decisions, default=labels[-1]), situation
    rate = 0.0
    if fam.base_slot:
        base = float(rng.randint(*fam.base_pct))
    elif fam.unit == "$":
        base = rng.randint(int(fam.base[0]), int(fam.base[1])) + 0.99
    else:
        base = float(rng.randint(int(fam.base[0]), int(fam.base[1])))
    if fam.rate_slot:
        lo, hi, step = fam.rate
        rate = round(lo + step * rng.randint(0, round((hi - lo) / step)), 4)
    running = PolicyRule(rule_id, fam.key, scope, (), base=base, rate=rate).start(situation)
    minimum = 1.0 if fam.unit == "$" else fam.floor + 1
    clauses = []
    for cond, holds in zip(conditions, truths, strict=True):
        slot = SLOTS[cond.slot]
        then, otherwise = (_effect(rng, fam.unit, running, slot, situation) for _ in range(2))
        running = (then if holds else otherwise).apply(running, situation)
        if running < minimum:
            return None
        clauses.append(Clause(cond, then, otherwise))
    return PolicyRule(rule_id, fam.key, scope, tuple(clauses), base=base, rate=rate), situation


__all__ = ["make_rule"]
