"""Episodes the dataset builder made, handed to the solver so each world is generated once.

Building an Inspect sample needs the customer's opening, which needs the episode; the
solver then needs that same episode. The builder leaves it here under the sample's
key and the solver takes it (once: a second epoch, a retry or an evicted entry builds
a fresh one from the same seed, which is the same episode).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from ecom_bench.envs.context import CatalogSpec
from ecom_bench.episode import Episode

#: Episodes kept waiting for their solver; the oldest go first (they are rebuilt if needed).
MAX_WAITING = 1024

_waiting: OrderedDict[Hashable, Episode] = OrderedDict()


def key(metadata: dict[str, Any], catalog: CatalogSpec, embedder: str, strict: bool) -> Hashable:
    """What identifies a sample's episode: its (env, d, seed, index) and how its world is built."""
    return (metadata["env"], metadata["difficulty"], metadata["seed"], metadata["index"], catalog, embedder, strict)


def leave(key: Hashable, episode: Episode) -> None:
    _waiting[key] = episode
    _waiting.move_to_end(key)
    while len(_waiting) > MAX_WAITING:
        _waiting.popitem(last=False)


def take(key: Hashable) -> Episode | None:
    """The episode left under `key`, if it is still waiting and untouched."""
    episode = _waiting.pop(key, None)
    if episode is None or episode.steps or episode.done:
        return None
    return episode
