"""The seam between what a customer decides and how it is worded.

A customer *decides* (in code, deterministically): the act, the slots it reveals, the
facts its words must carry and the values they must not, and what to say as a tree of
`Phrase`s: phrase-table keys, the template drawn for each, and the values that fill it.
A `Phraser` turns that into words. `TemplatePhraser` fills the templates (the benchmark's
published text); a model may word the same decision instead (Inspect's `user` role),
given the `PhrasingContext`. Noise is added afterwards by the customer, never to a
protected value.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ecom_bench.users.messages import UserAct, render


@dataclass(frozen=True)
class Phrase:
    """One piece of a reply: `template` (drawn among `key`'s alternatives in the phrase table)
    filled with `params`, which may themselves be phrases or speeches."""

    key: str
    template: str
    params: Mapping[str, Param] = field(default_factory=dict)


@dataclass(frozen=True)
class Speech:
    """Pieces said one after another, joined by `sep`; empty ones are dropped unless `keep_empty`."""

    parts: tuple[Utterance | str, ...]  # a str: words worded already (a fact from the world's data)
    sep: str = " "
    keep_empty: bool = False


Utterance = Phrase | Speech
Param = str | int | float | Phrase | Speech | None


@dataclass(frozen=True)
class CustomerDecision:
    """What the customer says this turn, decided in code and ready to be worded.

    `convey`: (slot, value) pairs the words must carry (values as they appear in the text);
    `withhold`: values still withheld, which the words must not contain; `noised`: whether
    the customer adds input noise to the words (a goodbye is said plainly).
    """

    act: UserAct
    say: Utterance
    revealed: tuple[str, ...] = ()
    convey: tuple[tuple[str, str], ...] = ()
    withhold: tuple[str, ...] = ()
    ends_episode: bool = False
    noised: bool = True

    @property
    def must_appear(self) -> tuple[str, ...]:
        return tuple(value for _, value in self.convey)


@dataclass(frozen=True)
class PhrasingContext:
    """What a phraser may know besides the decision: who speaks, and the conversation so far."""

    env: str
    persona: Mapping[str, float] | None = None
    conversation: tuple[tuple[str, str], ...] = ()  # (role: "customer" | "agent", text), oldest first
    seen_ids: frozenset[str] = frozenset()  # ids the agent was shown by its tools


@runtime_checkable
class Phraser(Protocol):
    """Words a `CustomerDecision`. `phrase` must work without an event loop; `aphrase` is its async twin."""

    def phrase(self, decision: CustomerDecision, context: PhrasingContext) -> str: ...

    async def aphrase(self, decision: CustomerDecision, context: PhrasingContext) -> str: ...


class PhrasingError(RuntimeError):
    """A phraser failed or returned something other than text."""


def choose(table: Mapping[str, tuple[str, ...] | str], key: str, params: Mapping[str, Param] | None = None,
           rng: random.Random | None = None, choice: int = 0) -> Phrase:
    """`key`'s template from a phrase table, filled with `params`: drawn with `rng`, else number `choice`."""
    found = table[key]
    options = (found,) if isinstance(found, str) else found
    return Phrase(key, rng.choice(options) if rng is not None else options[choice], dict(params or {}))


def _fill(u: Param) -> str | int | float | None:
    """A nested piece, filled but not yet tidied (the phrase around it tidies the whole)."""
    if isinstance(u, Phrase):
        return u.template.format(**{k: _fill(v) for k, v in u.params.items()})
    if isinstance(u, Speech):
        return _join(u, [str(_fill(p)) for p in u.parts])
    return u


def _join(speech: Speech, texts: list[str]) -> str:
    return speech.sep.join(t for t in texts if t or speech.keep_empty)


def template_text(u: Utterance | str) -> str:
    """The published words of an utterance: each phrase filled and tidied (`messages.render`)."""
    if isinstance(u, Phrase):
        return render(u.template, **{k: _fill(v) for k, v in u.params.items()})
    if isinstance(u, Speech):
        return _join(u, [template_text(p) for p in u.parts])
    return u


class TemplatePhraser:
    """The benchmark's own wording: the templates the customer drew, filled."""

    def phrase(self, decision: CustomerDecision, context: PhrasingContext) -> str:
        return template_text(decision.say)

    async def aphrase(self, decision: CustomerDecision, context: PhrasingContext) -> str:
        return self.phrase(decision, context)


def checked(text: object, phraser: object) -> str:
    if not isinstance(text, str):
        raise PhrasingError(f"phraser {type(phraser).__name__} returned {type(text).__name__}, not the "
                            "customer's words (a str)")
    return text


@contextlib.contextmanager
def _reported(phraser: object, decision: CustomerDecision) -> Iterator[None]:
    """A phraser's failure, as a `PhrasingError` naming the phraser."""
    try:
        yield
    except PhrasingError:
        raise
    except Exception as e:
        raise PhrasingError(f"phraser {type(phraser).__name__} failed wording a {decision.act.value} message: "
                            f"{type(e).__name__}: {e}") from e


def phrase(phraser: Phraser, decision: CustomerDecision, context: PhrasingContext) -> str:
    """`phraser.phrase`, checked: a failure or a non-str is a `PhrasingError` naming the phraser."""
    with _reported(phraser, decision):
        text = phraser.phrase(decision, context)
    return checked(text, phraser)


async def aphrase(phraser: Phraser, decision: CustomerDecision, context: PhrasingContext) -> str:
    """`phraser.aphrase`, checked as `phrase` is."""
    with _reported(phraser, decision):
        text = await phraser.aphrase(decision, context)
    return checked(text, phraser)


class LoopPhraser:
    """The phraser an episode hands its customer. `phrase` words with the episode's phraser, or,
    while `loop` is set (`Episode.astep` runs the one turn loop of `step` in a worker thread),
    runs its `aphrase` on that event loop and waits for the words."""

    def __init__(self, phraser: Phraser) -> None:
        self.phraser = phraser
        self.loop: asyncio.AbstractEventLoop | None = None

    def phrase(self, decision: CustomerDecision, context: PhrasingContext) -> str:
        if self.loop is None:
            return phrase(self.phraser, decision, context)
        return asyncio.run_coroutine_threadsafe(aphrase(self.phraser, decision, context), self.loop).result()

    async def aphrase(self, decision: CustomerDecision, context: PhrasingContext) -> str:
        return await aphrase(self.phraser, decision, context)


__all__ = ["CustomerDecision", "LoopPhraser", "Param", "Phrase", "Phraser", "PhrasingContext", "PhrasingError",
           "Speech", "TemplatePhraser", "Utterance", "aphrase", "choose", "phrase", "template_text"]
