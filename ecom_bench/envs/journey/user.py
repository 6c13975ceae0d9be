"""E_JOURNEY's user: runs the sub-tasks' users one request at a time.

It opens request 0; once the agent answers the active request (its env's final-answer
tool), the next agent message gets the next request. With p_switch(d) the user
interrupts request i at their first reply with request i+1, then comes back to i once
i+1 is answered. Everything else is the active sub-user's own reply.
"""

from __future__ import annotations

from ecom_bench._seeding import seeded_rng
from ecom_bench.envs.journey.goal import (FIRST_PREFIX, NEXT_PREFIXES, RESUME_PREFIXES, SWITCH_PREFIXES,
                                          JourneyGoal)
from ecom_bench.users import UserAct, UserMessage, render
from ecom_bench.world import World


class JourneyUser:
    def __init__(self, goal: JourneyGoal, seed: int) -> None:
        self.goal = goal
        self.seed = seed
        self._paused: list[int] = []  # interrupted requests, most recent last
        self._opened: set[int] = {0}
        self._replies_in: dict[int, int] = {}  # replies given while each request was active
        self._switched_to: set[int] = set()
        self._pending: tuple[str, int] | None = None  # ("next" | "resume", intent) to announce
        self._replies = 0

    @property
    def users(self):  # noqa: ANN201
        return [t.user for t in self.goal.tasks]

    # ------------------------------------------------------------ progress
    def on_answer(self, world: World) -> bool:
        """The active request was answered: move on. True when every request is done."""
        if self._paused:
            world.intent = self._paused.pop()
            self._pending = ("resume", world.intent)
            return False
        nxt = next((i for i in range(len(self.goal.tasks)) if i not in self._opened), None)
        if nxt is None:
            return True
        world.intent = nxt
        self._opened.add(nxt)
        self._pending = ("next", nxt)
        return False

    # ----------------------------------------------------------------- API
    def opening(self) -> UserMessage:
        first = self.users[0].opening()
        return UserMessage(render("{prefix} {text}", prefix=FIRST_PREFIX, text=first.text), UserAct.OPENING,
                           first.revealed)

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        self._replies += 1
        rng = seeded_rng(self.seed, "journey-user", self._replies)
        if last_turn:
            return self.users[world.intent].reply(agent_text, world, last_turn=True)
        if self._pending is not None:
            kind, intent = self._pending
            self._pending = None
            prefix = rng.choice(NEXT_PREFIXES if kind == "next" else RESUME_PREFIXES)
            opening = self.goal.openings[intent]
            return UserMessage(render("{prefix} {text}", prefix=prefix, text=opening), UserAct.CONTINUE)
        active = world.intent
        first_reply = self._replies_in.get(active, 0) == 0
        self._replies_in[active] = self._replies_in.get(active, 0) + 1
        nxt = active + 1
        if (first_reply and active not in self._switched_to and nxt < len(self.goal.tasks)
                and self.goal.switches[active] and nxt not in self._opened):
            self._paused.append(active)
            self._opened.add(nxt)
            self._switched_to.add(nxt)
            world.intent = nxt
            text = render("{prefix} {text}", prefix=rng.choice(SWITCH_PREFIXES), text=self.goal.openings[nxt])
            # The customer's own doing: the turn is excused (it left the agent's question unanswered).
            return UserMessage(text, UserAct.CLARIFY, (f"{nxt}:request",))
        return self.users[active].reply(agent_text, world, last_turn=False)

    def disclosure(self) -> dict[str, bool]:
        out: dict[str, bool] = {}
        for t in self.goal.tasks:
            for slot, told in t.user.disclosure().items():
                out[f"{t.intent}:{t.env}:{slot}"] = told
        return out
