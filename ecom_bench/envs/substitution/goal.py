"""E_SUB's hidden goal: the out-of-stock original, the compatibility requirement, the constraints."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ecom_bench.catalog import Catalog, Product
from ecom_bench.envs._ranking import Constraint, Gate


@dataclass(frozen=True)
class SubstitutionGoal:
    original_id: str  # p0: named by the customer, out of stock from the start
    substitute_id: str  # a hidden in-stock compatible product meeting every constraint (never stocked out)
    compatibility: Constraint  # p0's variant attribute and value: a hard gate, not one of the m
    category: Constraint  # p0's leaf: the request's subject, always known
    constraints: tuple[Constraint, ...]  # the m constraints; [0] is the budget
    k: int
    lam: float  # λ = clip(0.4 + 0.05·d, 0.4, 0.8)
    ranked_ids: tuple[str, ...] = ()
    doomed_ids: tuple[str, ...] = ()
    oracle_search: dict[str, Any] = field(default_factory=dict)

    @property
    def reference_id(self) -> str:
        return self.original_id

    @property
    def requirements(self) -> tuple[Constraint, ...]:
        return (self.category, *self.constraints)

    @property
    def gate(self) -> Gate:
        return Gate(require=(self.compatibility,), exclude=(self.original_id,))

    def gate_problem(self, p: Product) -> str:
        if p.id == self.original_id:
            return "the original product itself (out of stock)"
        return f"incompatible: {self.compatibility.describe()} but offers {self.compatibility.actual(p)}"

    def base_relevance(self, catalog: Catalog, rows: np.ndarray, s: np.ndarray, sims: np.ndarray) -> np.ndarray:
        return self.lam * np.maximum(0.0, sims) + (1.0 - self.lam) * s

    @property
    def base_key(self) -> tuple[Any, ...]:
        return ("similarity", self.lam)

    def to_dict(self) -> dict[str, Any]:
        return {"original_id": self.original_id, "substitute_id": self.substitute_id,
                "compatibility": self.compatibility.to_dict(),
                "category": self.category.to_dict(), "constraints": [c.to_dict() for c in self.constraints],
                "k": self.k, "lambda": self.lam, "oracle_search": dict(self.oracle_search),
                "ranked_ids": list(self.ranked_ids), "doomed_ids": list(self.doomed_ids)}
