"""`Customer`: what every template customer shares (withholding, disclosure, patience, acts).

An env's customer subclasses it and writes only what is its own: the opening, the
words for its slots, and its feedback on what the agent did. The decisions that make
the benchmark sound live here once:

* **Disclosure.** `to_disclose` applies the one rule of `users.understanding`: a
  request is always answered; topic words only narrow the answer. "Go ahead" is for
  when nothing is withheld (`withheld()` is empty).
* **Signals.** `missing_signal` is the sentence an opening adds when something is
  withheld, so a careful agent knows to ask.
* **Patience.** `max_turns` (T_max) ends the dialogue with `quit`; `strike` counts
  mistakes the customer had to object to (a wrong order named, a cart full of things
  never asked for, proposals that break the request) and quits at `max_strikes`, so
  feedback cannot be mined as an oracle by trial and error within T_max.
* **Acts.** `say` tags every reply; `UserMessage.excused` decides what r_eff forgives.

Later an LLM may *phrase* these decisions (Inspect model role `user`); it never makes them.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import ClassVar

from ecom_bench._seeding import seeded_rng
from ecom_bench.difficulty import Difficulty
from ecom_bench.users.messages import Disclosure, UserAct, UserMessage
from ecom_bench.users.noise import add_noise

PATIENCE_QUITS = ("This is taking too long; I'll sort it out another way. Bye.",
                  "Sorry, I have to go now. I'll try again another time.")
MISTAKE_QUITS = ("This isn't going anywhere; you keep getting it wrong. I'll sort it out myself. Bye.",
                 "I've had to correct you too many times. I'll do this another way. Goodbye.")
MISSING_SIGNALS = ("There are a couple of other things that matter to me too, if you need them.",
                   "I have a few more requirements as well; just ask.",
                   "That's not all I need, by the way.")


class Customer:
    """Base of the template customers. Deterministic given (seed, the agent's words, the world)."""

    #: Prefix of every random stream of this customer (kept per env so transcripts stay stable).
    rng_prefix: ClassVar[tuple[str, ...]] = ()
    #: Mistakes the customer objects to before giving up (the last objection is the goodbye).
    max_strikes: ClassVar[int] = 2
    #: What an opening says when something is withheld (an env may word it for its own request).
    missing_signals: ClassVar[tuple[str, ...]] = MISSING_SIGNALS

    def __init__(self, difficulty: Difficulty, seed: int, disclosure: Disclosure,
                 protect: Iterable[str] = ()) -> None:
        self.difficulty = difficulty
        self.seed = seed
        self._disclosure = disclosure
        self._protect = frozenset(protect)
        self._replies = 0
        self.strikes = 0

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

    def missing_signal(self, rng: random.Random) -> str:
        """What an opening says when something is withheld ("" when nothing is)."""
        return rng.choice(self.missing_signals) if self.withheld() else ""

    # -------------------------------------------------------------- words
    def rng(self, *parts: object) -> random.Random:
        return seeded_rng(self.seed, *self.rng_prefix, *parts)

    def next_reply_rng(self) -> random.Random:
        self._replies += 1
        return self.rng("reply", self._replies)

    def noisy(self, text: str, rng: random.Random) -> str:
        return add_noise(text, self.difficulty.p_noise, rng, self._protect)

    def say(self, text: str, act: UserAct, rng: random.Random, revealed: Iterable[str] = ()) -> UserMessage:
        return UserMessage(self.noisy(text, rng), act, tuple(revealed))

    # ----------------------------------------------------------- patience
    @staticmethod
    def quit(rng: random.Random, lines: tuple[str, ...] = PATIENCE_QUITS) -> UserMessage:
        return UserMessage(rng.choice(lines), UserAct.QUIT, ends_episode=True)

    def strike(self, rng: random.Random) -> UserMessage | None:
        """Count one mistake the customer objects to; the goodbye once patience for mistakes is gone."""
        self.strikes += 1
        if self.strikes >= self.max_strikes:
            return self.quit(rng, MISTAKE_QUITS)
        return None


__all__ = ["Customer", "MISSING_SIGNALS", "MISTAKE_QUITS", "PATIENCE_QUITS"]
