"""The simulated user's hidden preferences (docs/design.md §Simulated user), shared by every environment.

Weights over [price, rating, ship speed, brand, similarity] ~ Dirichlet(α), base
α = [2, 2, 1, 1, 1], boosted by 3 on every dimension the user constrains: preferences
are aligned with what the user says, so an agent is never penalised for obeying.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ecom_bench._seeding import derive_seed

PERSONA_DIMENSIONS = ("price", "rating", "ship_speed", "brand", "similarity")
PERSONA_BASE_ALPHA = (2.0, 2.0, 1.0, 1.0, 1.0)
PERSONA_BOOST = 3.0


def sample_persona(seed: int, boosted: Iterable[str] = ()) -> dict[str, float]:
    """Hidden preference weights, boosted on the `boosted` dimensions (names from PERSONA_DIMENSIONS)."""
    boost = set(boosted)
    unknown = boost - set(PERSONA_DIMENSIONS)
    if unknown:
        raise ValueError(f"unknown persona dimensions: {sorted(unknown)}")
    alpha = np.array([a + (PERSONA_BOOST if d in boost else 0.0) for d, a in zip(PERSONA_DIMENSIONS, PERSONA_BASE_ALPHA, strict=True)])
    w = np.random.default_rng(derive_seed(seed, "persona")).dirichlet(alpha)
    return {d: round(float(x), 4) for d, x in zip(PERSONA_DIMENSIONS, w, strict=True)}
