"""`ConstraintUser`: a shopper with hard constraints it states or withholds, and feedback on proposals.

E_PD's and E_SUB's customers are one: they differ in the opening and in the env's hard gate
(`_gate_problem`). What it says, from E_PD's point of view:

* **Opening.** The product kind and every constraint not withheld (one sentence each);
  when something is withheld, the base's `missing_signal` ("That's not all I need").
* **Answers.** Any request for information (`is_request`) is answered by
  `Customer.to_disclose`: a request naming withheld constraints ("What's your budget?")
  gets those, plus a note that there is more while more is withheld; any other request
  ("Could you list all of your requirements?", "Is that everything?", "What features
  do you need?") gets every withheld constraint at once. With nothing withheld a
  question gets "That's everything" (CONTINUE: charged, so padding buys nothing).
* **Feedback on proposals** (products named in a plain message) is what a shopper says,
  not a validity oracle: it reacts to the set as a whole and to its *first* problem,
  naming the kind of problem ("that's over my budget") without reading out any value
  (stated ones are in the request, withheld ones are given when asked); every bad round
  costs patience (`count_mistake`: the second one ends the chat). It says "those look
  good" (CONFIRM) only when every proposed product is in stock and right (the verifier's
  own rule: priced and stocked in the variant the stated values name, so "that one is
  $26.88, over your $26 budget: OK?" gets "over my budget"). Stock-outs are reported
  (tools show them too) and cost nothing: the world changed, the agent made no mistake.
* Otherwise: "go ahead and recommend" only when nothing is withheld.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from ecom_bench.catalog import Catalog, Product
from ecom_bench.catalog.naming import Noun, agreement, counted, product_noun, short_name
from ecom_bench.difficulty import Difficulty
from ecom_bench.users.customer import Customer
from ecom_bench.users.mentions import ProductMentions
from ecom_bench.users.messages import Disclosure, UserAct
from ecom_bench.users.phrases import CONSTRAINT_PHRASES, PHRASES, PhraseTable
from ecom_bench.users.phrasing import CustomerDecision, Phrase, Speech, Utterance
from ecom_bench.users.understanding import is_check_in, is_request, says, topics_asked
from ecom_bench.world import World

#: Words that name one kind of constraint. They only *narrow* an answer (a request naming
#: none of the withheld constraints gets them all), so a missing cue makes the customer
#: say more, never less.
KIND_CUES: dict[str, tuple[str, ...]] = {
    "price": ("budget", "price", "cost", "spend", "expensive", "cheap", "afford", "how much", "pay", "$"),
    "brand": ("brand", "manufacturer", "maker", "make"),
    "rating": ("rating", "rated", "review", "star"),
    "ship": ("ship", "deliver", "arrive", "how soon", "how fast", "how quickly", "rush", "deadline", "wait"),
}
ATTRIBUTE_CUES: dict[str, tuple[str, ...]] = {
    "connector_type": ("connector", "plug", "port", "cable"),
    "color": ("color", "colour", "shade"),
    "size": ("size", "fit"),
    "material": ("material", "made of"),
}
#: Phrases that make a request general even when it lists examples ("anything else that
#: matters - price, brand, delivery?"): it gets every withheld constraint.
GENERAL_CUES = ("anything else", "any other", "anything more", "everything", "all your", "all of your",
                "all the", "requirement", "matter", "important", "priorit", "feature", "spec", "criteria",
                "must-have", "must have", "preferences", "constraint", "looking for", "else")
#: Proposals a customer reads in one message (the rest are ignored).
MAX_PROPOSALS = 5

#: A question whose plain answer is "no, that's all": it asks whether the customer needs more.
_ASKS_FOR_MORE = re.compile(r"\b(?:anything|something) (?:else|more|further)\b|\bany other\b|\bis that (?:all|everything)\b|"
                            r"\bbe (?:all|everything)\b|\b(?:have|did) i (?:covered|answered)|\bother (?:needs?|requirements?)\b")


class StatedConstraint(Protocol):
    """One hard requirement, as the customer knows it (`envs._ranking.Constraint` is one)."""

    @property
    def kind(self) -> str: ...

    @property
    def value(self) -> Any: ...

    @property
    def attribute(self) -> str | None: ...

    @property
    def slot(self) -> str: ...

    @property
    def label(self) -> str: ...

    def satisfaction(self, p: Product) -> float: ...


class ConstraintGoal(Protocol):
    """What the customer reads of its hidden goal (`envs._ranking.RankingGoal` provides it)."""

    @property
    def k(self) -> int: ...

    @property
    def reference_id(self) -> str: ...  # the product the customer wants something like

    @property
    def requirements(self) -> tuple[StatedConstraint, ...]: ...


def fmt(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


class ConstraintUser(Customer):
    """A shopper with hidden constraints; E_PD and E_SUB differ in the opening and in `_gate_problem`."""

    phrases: ClassVar[PhraseTable] = {**PHRASES, **CONSTRAINT_PHRASES}

    def __init__(self, goal: ConstraintGoal, catalog: Catalog, difficulty: Difficulty, seed: int,
                 disclosure: Disclosure) -> None:
        self.goal = goal
        self.catalog = catalog
        self._mentions = ProductMentions()
        protect = {str(c.value) for c in self.stated_constraints()}
        protect.update(c.label for c in self.stated_constraints() if c.attribute)
        protect.update(self._protected())
        protect.add("out of stock")  # feedback the agent must be able to read
        super().__init__(difficulty, seed, disclosure, protect)

    # ------------------------------------------------------------- hooks
    def stated_constraints(self) -> tuple[StatedConstraint, ...]:
        """Every constraint the user can state, in order (E_SUB adds compatibility)."""
        return self.goal.requirements

    def _intro(self, rng: random.Random) -> Phrase:
        raise NotImplementedError

    def _protected(self) -> set[str]:
        return set()

    def in_stock(self, world: World, p: Product) -> bool:
        """Whether `p` can be bought now in the variant this customer needs."""
        raise NotImplementedError

    def _gate_problem(self, p: Product, name: str) -> Phrase | None:
        """Why `p` fails the env's hard gate, in the customer's words (None if it passes)."""
        return None

    def slot_value(self, slot: str) -> str | None:
        return next((fmt(c.value) for c in self.stated_constraints() if c.slot == slot and c.kind != "category"),
                    None)

    def persona(self) -> Mapping[str, float] | None:
        return getattr(self.goal, "weights", None)

    # --------------------------------------------------------- decisions
    def decide_opening(self) -> CustomerDecision:
        rng = self.rng("opening")
        stated = [c for c in self.stated_constraints() if c.kind != "category" and self.told(c.slot)]
        parts: list[Phrase | None] = [self.pick(rng, "greeting"), self._intro(rng)]
        parts += [self.sentence(c, rng) for c in stated]
        parts.append(self.pick(rng, "ask_top_pick" if self.goal.k == 1 else "ask_list", k=self.goal.k))
        parts.append(self.pick(rng, "closing"))
        parts.append(self.missing_signal(self.rng("signal")))
        return self.decision(UserAct.OPENING, Speech(tuple(p for p in parts if p)), rng,
                             convey=self.facts(c.slot for c in stated))

    def decide_reply(self, agent_text: str, world: World, last_turn: bool) -> CustomerDecision:
        rng = self.next_reply_rng()
        if last_turn:
            return self.goodbye(rng)
        asking = is_request(agent_text)
        revealed = self._answer(agent_text) if asking else []
        said: list[Utterance] = [self.sentence(c, rng) for c in revealed]
        if revealed and self.withheld():
            said.append(self.pick(rng, "more_to_say"))
        slots = tuple(c.slot for c in revealed)
        proposals = self._proposals(agent_text, world)
        if proposals:
            return self._feedback(proposals, world, said, slots, rng)
        if said:
            return self.decision(UserAct.CLARIFY, Speech(tuple(said)), rng, slots)
        if (signal := self.missing_signal(rng)) is not None:
            return self.decision(UserAct.CONTINUE, Speech((self.line("okay"), signal)), rng)
        if asking and (again := self._told_asked(agent_text)):
            # "Is it okay if it ships in 11 days?", "the color should be Blue, right?": they say again
            # what they need (as they stated it: never a yes to relaxing it, never a bare no)
            return self.decision(UserAct.CONTINUE, Speech((*[self.sentence(c, rng) for c in again], self._go_ahead())),
                                 rng, convey=[(c.slot, fmt(c.value)) for c in again])
        if asking and not _ASKS_FOR_MORE.search(agent_text.lower()) and is_check_in(agent_text.lower()):
            # "Does that sound good?" asks for approval, not for more needs: a "No, that's
            # everything" would read as a refusal
            return self.decision(UserAct.CONTINUE, Speech((self.line("yes"), self._go_ahead())), rng)
        if asking:
            return self.decision(UserAct.CONTINUE, self.pick(rng, "nothing_else"), rng)
        return self.decision(UserAct.CONTINUE, self._go_ahead(), rng)

    def sentence(self, c: StatedConstraint, rng: random.Random) -> Phrase:
        """The sentence stating constraint `c`."""
        days = counted(c.value, "day") if c.kind == "ship" else ""
        stars = counted(c.value, "star") if c.kind == "rating" else ""
        return self.pick(rng, f"state_{c.kind}", value=fmt(c.value), label=c.label, days=days, stars=stars)

    def _go_ahead(self) -> Phrase:
        return self.line("go_ahead_top_pick" if self.goal.k == 1 else "go_ahead_list", k=self.goal.k)
    # ---------------------------------------------------------- questions
    def _cues(self, c: StatedConstraint) -> tuple[str, ...]:
        if c.kind != "attribute":
            return KIND_CUES.get(c.kind, ())
        assert c.attribute is not None
        return (c.label, c.attribute.replace("_", " ")) + ATTRIBUTE_CUES.get(c.attribute, ())

    def _told_asked(self, agent_text: str) -> list[StatedConstraint]:
        """The stated constraints, already told, that a request asks about by their cues."""
        told = {c.slot: c for c in self.stated_constraints() if c.kind != "category" and self.told(c.slot)}
        return [told[s] for s in topics_asked(agent_text, {s: self._cues(c) for s, c in told.items()})]

    def _answer(self, agent_text: str) -> list[StatedConstraint]:
        """The withheld constraints a request discloses (`Customer.to_disclose`), marked told."""
        low = agent_text.lower()
        hidden = {c.slot: c for c in self.stated_constraints() if not self.told(c.slot)}
        if not hidden:
            return []
        general = any(says(low, cue, prefix=True) for cue in GENERAL_CUES)
        asked = [] if general else topics_asked(agent_text, {s: self._cues(c) for s, c in hidden.items()})
        return [hidden[s] for s in self.to_disclose(asked)]

    # ---------------------------------------------------------- feedback
    def _proposals(self, agent_text: str, world: World) -> list[Product]:
        """Products the agent names in a plain message: by id, or by the short name of one it was shown."""
        return [world.catalog[pid] for pid in self._mentions(agent_text, world)[:MAX_PROPOSALS]]

    def _feedback(self, proposals: list[Product], world: World, said: list[Utterance], slots: tuple[str, ...],
                  rng: random.Random) -> CustomerDecision:
        """Stock-outs, then the set's first problem (a strike), else CONFIRM."""
        stocked = {p.id: self.in_stock(world, p) for p in proposals}
        gone = [self.line("out_of_stock_now", name=short_name(p), **agreement(short_name(p), product_noun(p)))
                for p in proposals if not stocked[p.id]]
        problem = next((c for p in proposals if stocked[p.id] and (c := self._problem(p, slots))), None)
        if problem:
            goodbye = self.count_mistake(rng)
            if goodbye is not None:
                return goodbye
            text = Speech((*said, *gone, self.pick(rng, "not_all"), problem), keep_empty=True)
            return self.decision(UserAct.CORRECT, text, rng, slots)
        if gone:
            return self.decision(UserAct.CORRECT, Speech((*said, *gone)), rng, slots)
        if len(proposals) < self.goal.k:
            # fine as far as they go; the customer asked for up to k and cannot know how many qualify
            more = self.line("fewer_than_asked", k=self.goal.k)
            return self.decision(UserAct.CONFIRM, Speech((*said, more)), rng, slots)
        return self.decision(UserAct.CONFIRM, Speech((*said, self.pick(rng, "looks_good"))), rng, slots)

    def _problem(self, p: Product, told_now: tuple[str, ...] = ()) -> Utterance | None:
        """The first thing wrong with an in-stock proposal, in the customer's words (None if none);
        "as I said" only for what was said before this reply (`told_now`: said in it)."""
        name = short_name(p)
        if gate := self._gate_problem(p, name):
            return gate
        c = next((c for c in self.goal.requirements if c.satisfaction(p) < 1.0), None)
        if c is None:
            return None
        text = self.line(f"complaint_{c.kind}", name=name, value=self._noun().a(), label=c.label,
                         **agreement(name, product_noun(p)))
        if c.kind != "category" and self.told(c.slot) and c.slot not in told_now:
            return Speech((text, self.alternative("as_i_said", len(name) % len(self.alternatives("as_i_said")))))
        return text

    def _noun(self) -> Noun:
        target = self.catalog.get(self.goal.reference_id)
        assert target is not None
        return product_noun(target)


