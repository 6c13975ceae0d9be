"""E_JOURNEY's user: runs the sub-tasks' users one request at a time.

It opens request 0; once the agent answers the active request (its env's final-answer
tool), the next agent message gets the next request. With p_switch(d) the user
interrupts request i at their first reply with request i+1, then comes back to i once
i+1 is answered. Everything else is the active sub-user's own reply.

Its own words are the markers that open a request ("One more thing:"); the requests are
the sub-users' openings, worded by the episode's phraser. The markers are said as written,
whatever the phraser: they are how an agent (and every scripted journey agent) tells that a
new request starts, and a reworded marker would move the request boundaries.
"""

from __future__ import annotations

from ecom_bench._seeding import seeded_rng
from ecom_bench.envs.journey.goal import JourneyGoal
from ecom_bench.envs.journey.phrases import PHRASES
from ecom_bench.users import UserAct, UserMessage, render
from ecom_bench.users.phrasing import (
    CustomerDecision,
    Phraser,
    PhrasingContext,
    TemplatePhraser,
    choose,
    phrase,
)
from ecom_bench.world import World


_MARKERS = TemplatePhraser()


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
        self.phraser: Phraser = TemplatePhraser()
        self.env = "journey"

    @property
    def users(self):  # noqa: ANN201
        return [t.user for t in self.goal.tasks]

    def use_phraser(self, phraser: Phraser, env: str) -> None:
        """Word the prefixes, and every sub-user's words, with `phraser`."""
        self.phraser = phraser
        self.env = env
        for t in self.goal.tasks:
            if (use := getattr(t.user, "use_phraser", None)) is not None:  # a plugin's may word its own
                use(phraser, t.env)

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

    # ----------------------------------------------------------- decisions
    def _decide(self, agent_text: str, world: World,
                last_turn: bool) -> tuple[str, int, UserAct, tuple[str, ...]] | None:
        """(prefix kind, request, act, revealed) when this reply opens a request, else None (the active
        sub-user replies). Counts the reply and moves between requests."""
        if last_turn:
            return None
        if self._pending is not None:
            kind, intent = self._pending
            self._pending = None
            return kind, intent, UserAct.CONTINUE, ()
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
            # The customer's own doing: the turn is excused (it left the agent's question unanswered).
            return "switch", nxt, UserAct.CLARIFY, (f"{nxt}:request",)
        return None

    def _prefix(self, kind: str) -> CustomerDecision:
        rng = seeded_rng(self.seed, "journey-user", self._replies)
        prefix = choose(PHRASES, kind, rng=rng if kind != "first" else None)
        return CustomerDecision(UserAct.CONTINUE, prefix, noised=False)

    @staticmethod
    def _said(decision: CustomerDecision) -> str:
        """A marker's words, as written (see the module docstring)."""
        return phrase(_MARKERS, decision, PhrasingContext("journey"))

    @staticmethod
    def _request(prefix: str, opening: UserMessage, act: UserAct, revealed: tuple[str, ...]) -> UserMessage:
        text = render(str(PHRASES["request"]), prefix=prefix, text=opening.text)
        return UserMessage(text, act, revealed)

    # ----------------------------------------------------------------- API
    def opening(self) -> UserMessage:
        first = self.users[0].opening()
        return self._request(self._said(self._prefix("first")), first,
                             UserAct.OPENING, first.revealed)

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        self._replies += 1
        opens = self._decide(agent_text, world, last_turn)
        if opens is None:
            return self.users[world.intent].reply(agent_text, world, last_turn=last_turn)
        kind, intent, act, revealed = opens
        prefix = self._said(self._prefix(kind))
        return self._request(prefix, self.users[intent].opening(), act, revealed)

    async def aopening(self) -> UserMessage:
        first = await self.users[0].aopening()
        return self._request(self._said(self._prefix("first")), first,
                             UserAct.OPENING, first.revealed)

    async def areply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        self._replies += 1
        opens = self._decide(agent_text, world, last_turn)
        if opens is None:
            return await self.users[world.intent].areply(agent_text, world, last_turn=last_turn)
        kind, intent, act, revealed = opens
        prefix = self._said(self._prefix(kind))
        return self._request(prefix, await self.users[intent].aopening(), act, revealed)

    def disclosure(self) -> dict[str, bool]:
        out: dict[str, bool] = {}
        for t in self.goal.tasks:
            for slot, told in t.user.disclosure().items():
                out[f"{t.intent}:{t.env}:{slot}"] = told
        return out
