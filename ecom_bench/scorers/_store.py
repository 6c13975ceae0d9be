"""Per-sample state kept in Inspect's store (logged, visible in the viewer)."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from inspect_ai.util import Store, StoreModel
from pydantic import Field

if TYPE_CHECKING:
    from ecom_bench.episode import Episode


class EpisodeStore(StoreModel):
    """What the solver leaves for the scorers and the log viewer.

    `hidden` is the hidden goal: only the scorer reads it; it never enters a message the
    model under test sees. The structured fields are typed `Any` (they hold plain JSON
    data: hidden goal, status, acts, outcome), so a value read back is the value written.
    The solver binds it once (`store_as`, which puts every field in the store), then writes
    and the scorers read through `write_episode` / `read_episode`, the same keys without
    the model: a `StoreModel` re-validates the whole store on every field write and builds
    and validates itself on every `store_as` (~0.7 ms each, and five scorers read it per sample).
    """

    env: str = ""
    difficulty: int = 0
    hidden: Any = Field(default_factory=dict)  # dict[str, Any]
    turns: int = 0
    status: Any = Field(default_factory=dict)  # EpisodeStatus.to_dict() at the end
    user_acts: Any = Field(default_factory=list)  # list[str]
    outcome: Any = None  # EpisodeResult.to_dict(), or None before the end


def _key(field: str) -> str:
    """The store key `store_as(EpisodeStore)` uses for a field (Inspect prefixes the class name)."""
    if field not in EpisodeStore.model_fields or field in ("store", "instance"):
        raise KeyError(f"EpisodeStore has no field {field!r}")
    return f"{EpisodeStore.__name__}:{field}"


def write_episode(store: Store, **fields: Any) -> None:
    """Set EpisodeStore fields in a sample's store, keyed as `store_as(EpisodeStore)` keys them."""
    for field, value in fields.items():
        store.set(_key(field), value)


def read_episode(store: Store, field: str) -> Any:
    """An EpisodeStore field read straight from the store (its default when absent); no model is built."""
    key = _key(field)
    if key in store:
        return store.get(key)
    return EpisodeStore.model_fields[field].get_default(call_default_factory=True)


@dataclass(frozen=True)
class LiveSample:
    """The episode a sample's solver is running, and its hidden goal (computed once)."""

    episode: Episode
    hidden: dict[str, Any]


#: Set by the solver for its sample (a context variable: each sample runs in its own task, and
#: the model's generate call runs inside it). The scripted models read the live episode's
#: status and hidden goal here rather than from the store: every `store_as` re-validates
#: each field, and a store write per step is a logged change, together most of what a
#: scripted sample cost beyond Inspect's own bookkeeping.
live_sample: ContextVar[LiveSample | None] = ContextVar("ecom_bench_live_sample", default=None)
