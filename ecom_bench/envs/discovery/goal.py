"""E_PD's hidden goal: the target, the constraints it satisfies, the persona, the ideal list."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ecom_bench.catalog import Catalog, Product
from ecom_bench.envs._ranking import NO_GATE, Constraint, Gate, persona_utility


@dataclass(frozen=True)
class DiscoveryGoal:
    target_id: str  # a hidden in-stock product meeting every constraint (never scheduled out of stock)
    target_brand: str
    category: Constraint  # the request's subject: always stated, not one of the m
    constraints: tuple[Constraint, ...]  # the m constraints; [0] is the budget
    k: int  # k_rec(d): the list size asked for, and nDCG's cut-off
    alpha: int  # 4 + d // 4
    weights: dict[str, float] = field(default_factory=dict)  # hidden persona
    ranked_ids: tuple[str, ...] = ()  # the ideal ranking at build time (for the oracle)
    doomed_ids: tuple[str, ...] = ()  # good candidates scheduled to go out of stock once shown
    oracle_search: dict[str, Any] = field(default_factory=dict)  # the oracle's opening catalog_search

    @property
    def reference_id(self) -> str:
        return self.target_id

    @property
    def requirements(self) -> tuple[Constraint, ...]:
        return (self.category, *self.constraints)

    @property
    def budget(self) -> float:
        return float(self.constraints[0].value)

    @property
    def gate(self) -> Gate:
        return NO_GATE

    def gate_problem(self, p: Product) -> str:
        return ""

    def base_relevance(self, catalog: Catalog, rows: np.ndarray, s: np.ndarray, sims: np.ndarray) -> np.ndarray:
        return persona_utility(self.weights, catalog, rows, budget=self.budget, brand=self.target_brand, sims=sims)

    @property
    def base_key(self) -> tuple[Any, ...]:
        return ("persona", tuple(sorted(self.weights.items())), self.budget, self.target_brand)

    def to_dict(self) -> dict[str, Any]:
        return {"target_id": self.target_id, "category": self.category.to_dict(),
                "constraints": [c.to_dict() for c in self.constraints], "oracle_search": dict(self.oracle_search),
                "k": self.k, "alpha": self.alpha, "ranked_ids": list(self.ranked_ids),
                "doomed_ids": list(self.doomed_ids)}
