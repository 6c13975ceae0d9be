"""Process-independent seeding: every random choice derives from hashlib, never hash()."""

from __future__ import annotations

import hashlib
import random


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any printable parts, identical in every process."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def seeded_rng(*parts: object) -> random.Random:
    return random.Random(derive_seed(*parts))


def episode_seed(env: str, seed: int, difficulty: int, index: int) -> int:
    """The seed of episode `index` of a (env, seed, d) dataset: the same in both fronts."""
    return derive_seed(env, seed, difficulty, index)
