"""What every simulated user shares: tagged replies and placeholder-safe rendering.

The goal and all scoring stay in code: a simulator *decides* an act (and which
slots it reveals); a phraser (the templates, or a model: `users.phrasing`) only words it.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from ecom_bench.world import World


class UserAct(str, enum.Enum):
    """The tag of a user reply. confirm/clarify replies are not charged to the agent."""

    OPENING = "opening"
    CONFIRM = "confirm"
    CLARIFY = "clarify"
    CORRECT = "correct"
    CONTINUE = "continue"
    QUIT = "quit"



@dataclass(frozen=True)
class UserMessage:
    text: str
    act: UserAct
    revealed: tuple[str, ...] = ()  # slot names disclosed by this message
    ends_episode: bool = False

    @property
    def excused(self) -> bool:
        """Is the turn that drew this reply not charged to the agent (r_eff)?

        Only when the customer had something to give: a CLARIFY that disclosed withheld
        information, or a CONFIRM of a concrete state or proposal the customer checked.
        A question that drew nothing new ("anything else?" when nothing is withheld) is
        charged, so padding every message with a question cannot buy efficiency.
        """
        return self.act is UserAct.CONFIRM or (self.act is UserAct.CLARIFY and bool(self.revealed))

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "act": self.act.value, "revealed": list(self.revealed),
                "ends_episode": self.ends_episode}


class UserSimulator(Protocol):
    """A user for one episode. Deterministic given the problem and the agent's words.

    One that words its replies through a phraser (every `Customer`) also has
    `use_phraser(phraser, env)`, which the episode calls, and `aopening` / `areply`.
    """

    def opening(self) -> UserMessage: ...

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage: ...

    def disclosure(self) -> dict[str, bool]:
        """Slot name → whether the user has told the agent its value so far."""
        ...


_PLACEHOLDER = re.compile(r"[{}]|\$\{|%\(|<[a-z_]+>")


class PlaceholderLeak(RuntimeError):
    """A template produced text with an unfilled placeholder (docs/design.md §Upstream pitfalls, 6)."""


def render(template: str, **values: Any) -> str:
    """Fill a template and refuse to emit anything that still looks like a placeholder."""
    text = template.format(**values)
    if _PLACEHOLDER.search(text):
        raise PlaceholderLeak(f"placeholder left in user message: {text!r}")
    return " ".join(text.split())


@dataclass
class Disclosure:
    """Tracks, slot by slot, what the user has said (docs/design.md §Simulated user, strategic omission)."""

    told: dict[str, bool] = field(default_factory=dict)

    def add(self, slot: str, told: bool) -> None:
        self.told[slot] = told

    def reveal(self, slot: str) -> bool:
        """Mark a slot told; True if it was news."""
        was = self.told.get(slot, True)
        self.told[slot] = True
        return not was

    def is_told(self, slot: str) -> bool:
        return self.told.get(slot, True)

    def hidden(self) -> list[str]:
        return [s for s, t in self.told.items() if not t]
