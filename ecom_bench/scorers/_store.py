"""Per-sample state kept in Inspect's store (logged, visible in the viewer)."""

from __future__ import annotations

from typing import Any

from inspect_ai.util import StoreModel
from pydantic import Field


class EpisodeStore(StoreModel):
    """What the solver leaves for the scorer and the scripted models.

    `hidden` is the hidden goal: only the oracle model and the scorer read it; it
    never enters a message the model under test sees.
    """

    env: str = ""
    difficulty: int = 0
    hidden: dict[str, Any] = Field(default_factory=dict)
    turns: int = 0
    status: dict[str, Any] = Field(default_factory=dict)  # EpisodeStatus.to_dict(), before each generation
    user_acts: list[str] = Field(default_factory=list)
    outcome: dict[str, Any] | None = None
