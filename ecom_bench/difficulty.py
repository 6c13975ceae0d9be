"""Difficulty: one integer d drives the 12 shared axes of docs/design.md §Difficulty axes.

An environment's own axes (E_CART's item count, E_BUNDLE's project size, ...) are declared
by the environment (`Environment.axes`, shown by `ecom-bench show`).

Formulas are the design's reference parameterisation (upstream parity), so our numbers are
comparable; d has no upper cap. `Difficulty.from_level(d)` is the only constructor the
rest of the code uses, and it is where bad values are rejected.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def validate_level(d: object, *, name: str = "difficulty") -> int:
    """Return d as an int, or raise ValueError naming the bad value.

    Accepts ints and integral floats/strings ("6", 6.0) because CLI values arrive
    YAML-parsed; rejects bools, negatives, fractions and anything else.
    """
    if isinstance(d, bool):
        raise ValueError(f"{name} must be a non-negative integer, got {d!r}")
    value: float
    if isinstance(d, int):
        value = d
    elif isinstance(d, float):
        value = d
    elif isinstance(d, str):
        try:
            value = float(d.strip())
        except ValueError:
            raise ValueError(f"{name} must be a non-negative integer, got {d!r}") from None
    else:
        raise ValueError(f"{name} must be a non-negative integer, got {d!r}")
    if not math.isfinite(value) or value != int(value) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {d!r}")
    return int(value)


#: B_branch stops at 12 clauses (d = 33): past ~16, a rule whose answer depends on every one
#: of its clauses can no longer be drawn reliably (measured: 2 of 20 draws failed at 17).
MAX_POLICY_CLAUSES = 12


@dataclass(frozen=True)
class Difficulty:
    """All axes at one difficulty level. See docs/design.md §Difficulty axes."""

    level: int
    # --- the 12 shared axes -------------------------------------------------
    n_constraints: int  # 1  m
    k_rec: int  # 2  recommendation list size
    max_turns: int  # 3  T_max (turn budget, also user patience)
    p_missing: float  # 4  slot omitted from the opening message
    p_noise: float  # 5  typo / slang rate per word
    p_switch: float  # 6  context switch (journey)
    top_k: int  # 7  retrieval depth of catalog_search
    eps_rank: float  # 8  distractor share in search results
    p_oos: float  # 9  items going out of stock mid-dialogue
    n_orders: int  # 10 H_orders, order-history size
    n_policy_clauses: int  # 11 B_branch
    tool_budget: int  # 12 B_tool, tool calls allowed per turn

    @classmethod
    def from_level(cls, d: object) -> "Difficulty":
        d = validate_level(d)
        return cls(
            level=d,
            n_constraints=2 + d // 2,
            k_rec=min(10, 3 + d // 3),
            max_turns=4 + d // 2,
            p_missing=0.8 * sigmoid((d - 3) / 1.5),
            p_noise=min(max(0.01 * d, 0.0), 0.125),
            p_switch=0.6 * sigmoid((d - 5) / 2),
            top_k=max(20, 200 - 10 * d),
            eps_rank=min(0.4, 0.02 * d),
            p_oos=min(0.5, 0.05 * d),
            n_orders=1 + d // 2,
            n_policy_clauses=min(MAX_POLICY_CLAUSES, 1 + d // 3),
            tool_budget=1 + d // 2,
        )

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)
