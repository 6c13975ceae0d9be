"""E_JOURNEY's hidden goal: the chained sub-tasks, and the phrases that open each request.

The phrases are part of the user's visible words (a customer says "one more thing");
`request_segments` splits a conversation at them, so every journey policy (honest or
oracle) can hand each request's part of the conversation to that env's own policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ecom_bench.envs.base import SubTask

FIRST_PREFIX = "I have a few things to sort out today. First:"
NEXT_PREFIXES = ("Thanks! One more thing:", "Great, thank you. Next:", "Perfect. I also need help with this:")
SWITCH_PREFIXES = ("Oh wait, before that, something more urgent:", "Actually, hold on, one thing first:")
RESUME_PREFIXES = ("OK, back to my earlier request:", "Now, about what I asked before:")
_ALL_PREFIXES = (FIRST_PREFIX, *NEXT_PREFIXES, *SWITCH_PREFIXES, *RESUME_PREFIXES)


@dataclass
class JourneyGoal:
    """The sub-tasks in order and, per boundary, whether the user switches intent early (p_switch)."""

    tasks: tuple[SubTask, ...]
    openings: tuple[str, ...]  # each request's opening, as the user words it
    switches: tuple[bool, ...]  # switches[i]: intent i is interrupted by intent i+1

    def to_dict(self) -> dict[str, Any]:
        return {
            "intents": [{**t.hidden_state(), "opening": o} for t, o in zip(self.tasks, self.openings, strict=True)],
            "switches": list(self.switches),
        }


def _norm(text: str) -> str:
    return " ".join(text.split())


def request_opening(text: str) -> tuple[str, str] | None:
    """(prefix kind, request text) if this user message opens or resumes a request."""
    text = _norm(text)
    for prefix in _ALL_PREFIXES:
        if prefix in text:
            kind = ("first" if prefix == FIRST_PREFIX else "next" if prefix in NEXT_PREFIXES
                    else "switch" if prefix in SWITCH_PREFIXES else "resume")
            return kind, text.split(prefix, 1)[1].strip()
    return None


def request_segments(roles_and_texts: list[tuple[str, str]]) -> list[tuple[str, list[int]]]:
    """Group message indices by request: [(request opening text, [message indices])].

    A request's segment starts at the user message that opens it and runs to the next
    opening; a resumed request continues its earlier segment. Index 0 (the system
    prompt) is not in any segment.
    """
    segments: dict[str, list[int]] = {}
    order: list[str] = []
    current: str | None = None
    for i, (role, text) in enumerate(roles_and_texts):
        if role == "user":
            opened = request_opening(text)
            if opened is not None:
                key = re.sub(r"\s+", " ", opened[1])
                if key not in segments:
                    segments[key] = []
                    order.append(key)
                current = key
        if current is not None and i > 0:
            segments[current].append(i)
    return [(k, segments[k]) for k in order]
