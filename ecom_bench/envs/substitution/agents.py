"""Scripted E_SUB agents: E_PD's, with the heuristic searching around the original's name."""

from __future__ import annotations

import re
from typing import Any

from ecom_bench.envs._ranking import RecommendOracle, RecommendRandom
from ecom_bench.envs.discovery.agents import RankingHeuristic, Wants

# The original's name is never noised: the run of capitalised words (and figures: "Levi's 505",
# "Mr. Coffee 12-Cup") after "the" / "usual".
_ORIGINAL = re.compile(r"\b(?:the|usual) ((?:[A-Z][\w'&.\-]*)(?: (?:&|[A-Z0-9][\w'&.\-]*))+)")


class SubstitutionHeuristic(RankingHeuristic):
    """Searches the original's name plus the required features; never recommends the original."""

    def subject(self, opening: str) -> str:
        m = _ORIGINAL.search(opening)
        return m.group(1).strip() if m else super().subject(opening)

    def excluded(self, wants: Wants, product: dict[str, Any]) -> bool:
        return product["title"].lower().startswith(wants.subject.lower())


SUBSTITUTION_POLICIES: dict[str, type] = {"oracle": RecommendOracle, "heuristic": SubstitutionHeuristic,
                                          "random": RecommendRandom}
