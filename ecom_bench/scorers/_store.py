"""Per-sample state kept in Inspect's store (logged, visible in the viewer)."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from inspect_ai.util import StoreModel
from pydantic import Field

if TYPE_CHECKING:
    from ecom_bench.episode import Episode


class EpisodeStore(StoreModel):
    """What the solver leaves for the scorers and the log viewer.

    `hidden` is the hidden goal: only the scorer reads it; it never enters a message the
    model under test sees. The structured fields are typed `Any` (they hold plain JSON
    data: hidden goal, status, acts, outcome): a `StoreModel` re-validates every
    non-scalar field on each `store_as` and read, and a `dict[str, Any]` annotation made
    that a copy of the dict each time (~1.1 ms a `store_as`, six per sample; `Any`: ~0.7 ms).
    """

    env: str = ""
    difficulty: int = 0
    hidden: Any = Field(default_factory=dict)  # dict[str, Any]
    turns: int = 0
    status: Any = Field(default_factory=dict)  # EpisodeStatus.to_dict() at the end
    user_acts: Any = Field(default_factory=list)  # list[str]
    outcome: Any = None  # EpisodeResult.to_dict(), or None before the end


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
