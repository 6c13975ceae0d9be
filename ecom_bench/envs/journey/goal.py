"""E_JOURNEY's hidden goal: the chained sub-tasks; where each request opens in a conversation.

The phrases that open a request (`phrases.py`) are part of the user's visible words (a
customer says "one more thing"); `request_segments` splits a conversation at them, so every
journey policy (honest or oracle) can hand each request's part of the conversation to that
env's own policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ecom_bench.envs.base import SubTask
from ecom_bench.envs.journey.phrases import PHRASES


def _prefixes(kind: str) -> tuple[str, ...]:
    found = PHRASES[kind]
    return (found,) if isinstance(found, str) else found


_ALL_PREFIXES = tuple((kind, prefix) for kind in ("first", "next", "switch", "resume")
                      for prefix in _prefixes(kind))


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
    for kind, prefix in _ALL_PREFIXES:
        if prefix in text:
            return kind, text.split(prefix, 1)[1].strip()
    return None


def request_segments(roles_and_texts: list[tuple[str, str]]) -> list[tuple[str, list[int]]]:
    """Group message indices by request: [(request opening text, [message indices])], in the order
    the requests opened, which is the order of the journey's intents.

    A request's segment starts at the user message that opens it ("First:", "Next:", or a
    switch "before that, ...") and runs to the next marker; a "back to my earlier request"
    continues the request the last switch interrupted. Only the markers are read, never the
    request's words, so any wording of the requests (a phraser's) splits the same way.
    Index 0 (the system prompt) is not in any segment.
    """
    segments: list[tuple[str, list[int]]] = []
    paused: list[int] = []  # requests interrupted by a switch, most recent last
    current: int | None = None
    for i, (role, text) in enumerate(roles_and_texts):
        if role == "user":
            opened = request_opening(text)
            if opened is not None:
                kind, request = opened
                if kind == "resume" and paused:
                    current = paused.pop()
                else:
                    if kind == "switch" and current is not None:
                        paused.append(current)
                    segments.append((re.sub(r"\s+", " ", request), []))
                    current = len(segments) - 1
        if current is not None and i > 0:
            segments[current][1].append(i)
    return segments
