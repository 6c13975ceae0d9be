"""`Customer`: what every template customer shares (withholding, disclosure, patience, acts, voice).

An env's customer subclasses it and writes only what is its own: the decisions of its
opening (`decide_opening`) and replies (`decide_reply`), and its words, in a phrase table
(`envs/<env>/phrases.py`). The decisions that make the benchmark sound live here once:

* **Disclosure.** `to_disclose` applies the one rule of `users.understanding`: a
  request is always answered; topic words only narrow the answer. "Go ahead" is for
  when nothing is withheld (`withheld()` is empty).
* **Signals.** `missing_signal` is what an opening adds when something is withheld,
  so a careful agent knows to ask.
* **Patience.** `max_turns` (T_max) ends the dialogue with `goodbye` (QUIT);
  `count_mistake` counts mistakes the customer had to object to (a wrong order named, a
  cart full of things never asked for, proposals that break the request) and quits at
  `max_strikes`, so feedback cannot be mined as an oracle by trial and error within T_max.
* **Voice.** `opening` / `reply` are decide -> phrase (`self.phraser`, by default the
  templates) -> noise; noise never touches a protected value nor a fact the decision
  conveys. `aopening` / `areply` await the phraser instead. `UserMessage.excused` decides
  what r_eff forgives.

A model may *phrase* these decisions (a `users.phrasing.Phraser`); it never makes them.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import ClassVar

from ecom_bench._seeding import seeded_rng
from ecom_bench.difficulty import Difficulty
from ecom_bench.users.messages import Disclosure, UserAct, UserMessage
from ecom_bench.users.noise import add_noise
from ecom_bench.users.phrases import PHRASES, PhraseTable
from ecom_bench.users.phrasing import (
    CustomerDecision,
    Param,
    Phrase,
    Phraser,
    PhrasingContext,
    TemplatePhraser,
    Utterance,
    aphrase,
    choose,
    phrase,
)
from ecom_bench.world import World


class Customer:
    """Base of the template customers. Deterministic given (seed, the agent's words, the world)."""

    #: Prefix of every random stream of this customer (kept per env so transcripts stay stable).
    rng_prefix: ClassVar[tuple[str, ...]] = ()
    #: Mistakes the customer objects to before giving up (the last objection is the goodbye).
    max_strikes: ClassVar[int] = 2
    #: The customer's words: the shared ones, and an env's own (`envs/<env>/phrases.py`) over them.
    phrases: ClassVar[PhraseTable] = PHRASES

    def __init__(self, difficulty: Difficulty, seed: int, disclosure: Disclosure,
                 protect: Iterable[str] = ()) -> None:
        self.difficulty = difficulty
        self.seed = seed
        self._disclosure = disclosure
        self._protect = frozenset(protect)
        self._replies = 0
        self.strikes = 0
        self.phraser: Phraser = TemplatePhraser()
        self.env = ""  # the env's name, for the phraser (`use_phraser`)
        self._conversation: list[tuple[str, str]] = []
        self._seen: frozenset[str] = frozenset()
        self._noise_rng: random.Random | None = None  # the stream the decision drew from; noise goes on with it

    def use_phraser(self, phraser: Phraser, env: str) -> None:
        """Word this customer's decisions with `phraser` (the episode's), as a customer of `env`."""
        self.phraser = phraser
        self.env = env

    # --------------------------------------------------------- disclosure
    def disclosure(self) -> dict[str, bool]:
        return dict(self._disclosure.told)

    def told(self, slot: str) -> bool:
        return self._disclosure.is_told(slot)

    def withheld(self) -> list[str]:
        return self._disclosure.hidden()

    def to_disclose(self, asked: Iterable[str]) -> list[str]:
        """The withheld slots a request discloses: those it asks about, else all of them.

        Marks them told. The agent cannot miss by phrasing: a request that names no
        withheld slot (general, or in words the customer does not know) gets everything.
        """
        hidden = self.withheld()
        asked = set(asked)
        out = [s for s in hidden if s in asked] or hidden
        for slot in out:
            self._disclosure.reveal(slot)
        return out

    def slot_value(self, slot: str) -> str | None:
        """The value of `slot` as the customer's words carry it (None: no single value to check)."""
        return None

    def facts(self, slots: Iterable[str]) -> list[tuple[str, str]]:
        """(slot, value) for those of `slots` whose value the words carry (what an opening states)."""
        return [(s, v) for s in slots if (v := self.slot_value(s)) is not None]

    def persona(self) -> Mapping[str, float] | None:
        """The customer's hidden preference weights, where it has them (for a phraser's tone only)."""
        return None

    # ---------------------------------------------------------- decisions
    def decide_opening(self) -> CustomerDecision:
        raise NotImplementedError

    def decide_reply(self, agent_text: str, world: World, last_turn: bool) -> CustomerDecision:
        raise NotImplementedError

    def rng(self, *parts: object) -> random.Random:
        return seeded_rng(self.seed, *self.rng_prefix, *parts)

    def next_reply_rng(self) -> random.Random:
        self._replies += 1
        return self.rng("reply", self._replies)

    def alternatives(self, key: str) -> tuple[str, ...]:
        found = self.phrases[key]
        return (found,) if isinstance(found, str) else found

    def pick(self, rng: random.Random, key: str, **params: Param) -> Phrase:
        """One of `key`'s alternatives, drawn now (so the decision carries the choice)."""
        return choose(self.phrases, key, params, rng)

    def line(self, key: str, **params: Param) -> Phrase:
        """`key`'s one template."""
        return choose(self.phrases, key, params)

    def alternative(self, key: str, choice: int) -> Phrase:
        """`key`'s template number `choice` (chosen by a rule, not drawn)."""
        return choose(self.phrases, key, choice=choice)

    def missing_signal(self, rng: random.Random) -> Phrase | None:
        """What an opening says when something is withheld (None when nothing is)."""
        return self.pick(rng, "missing_signal") if self.withheld() else None

    def decision(self, act: UserAct, say: Utterance, rng: random.Random, revealed: Iterable[str] = (),
                 convey: Iterable[tuple[str, str]] = ()) -> CustomerDecision:
        """Say `say` as `act`. The facts conveyed are the revealed slots' values and `convey`; the
        values of the slots still withheld must not be said. Noise goes on with `rng`."""
        self._noise_rng = rng
        revealed = tuple(revealed)
        facts = self.facts(revealed)
        withhold = tuple(v for s in self.withheld() if (v := self.slot_value(s)) is not None)
        return CustomerDecision(act, say, revealed, (*facts, *convey), withhold)

    # ----------------------------------------------------------- patience
    def goodbye(self, rng: random.Random, key: str = "patience_quit") -> CustomerDecision:
        """The customer leaves (QUIT), said plainly."""
        return CustomerDecision(UserAct.QUIT, self.pick(rng, key), ends_episode=True, noised=False)

    def count_mistake(self, rng: random.Random) -> CustomerDecision | None:
        """Count one mistake the customer objects to; the goodbye once patience for mistakes is gone."""
        self.strikes += 1
        if self.strikes >= self.max_strikes:
            return self.goodbye(rng, "mistake_quit")
        return None

    # -------------------------------------------------------------- voice
    def opening(self) -> UserMessage:
        decision = self.decide_opening()
        return self.voice(decision, phrase(self.phraser, decision, self.context()))

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        decision = self._hear(agent_text, world, last_turn)
        return self.voice(decision, phrase(self.phraser, decision, self.context()))

    async def aopening(self) -> UserMessage:
        decision = self.decide_opening()
        return self.voice(decision, await aphrase(self.phraser, decision, self.context()))

    async def areply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        decision = self._hear(agent_text, world, last_turn)
        return self.voice(decision, await aphrase(self.phraser, decision, self.context()))

    def context(self) -> PhrasingContext:
        return PhrasingContext(self.env, self.persona(), tuple(self._conversation), self._seen)

    def _hear(self, agent_text: str, world: World, last_turn: bool) -> CustomerDecision:
        self._conversation.append(("agent", agent_text))
        self._seen = frozenset(getattr(world, "seen_ids", ()))  # a customer read without a world (tests) sees none
        return self.decide_reply(agent_text, world, last_turn)

    def voice(self, decision: CustomerDecision, words: str) -> UserMessage:
        """The customer's message: the phrased words, with input noise (rate p_noise(d)) that
        spares the protected values and every fact the decision conveys."""
        words = self._noised(decision, words)
        self._conversation.append(("customer", words))
        return UserMessage(words, decision.act, decision.revealed, decision.ends_episode)

    def template_opening(self) -> str:
        """The opening in the template words (noise included), said to no one: what a hidden
        state records of a request (a journey's), leaving the conversation untouched."""
        decision = self.decide_opening()
        return self._noised(decision, phrase(TemplatePhraser(), decision, self.context()))

    def _noised(self, decision: CustomerDecision, words: str) -> str:
        if decision.noised and self._noise_rng is not None:
            words = add_noise(words, self.difficulty.p_noise, self._noise_rng,
                              self._protect | set(decision.must_appear))
        return words


__all__ = ["Customer"]
