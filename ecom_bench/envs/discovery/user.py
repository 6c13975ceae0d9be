"""The template shopper of E_PD (and, by subclassing, E_SUB): a `users.customer.Customer`.

What it says:

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
  (stated ones are in the request, withheld ones are given when asked); every bad round costs patience (`strike`: the second one ends the
  chat). It says "those look good" (CONFIRM) only when every proposed product is in
  stock and right (the verifier's own rule: priced and stocked in the variant the stated
  values name, so "that one is $26.88, over your $26 budget: OK?" gets "over my budget"). Stock-outs are reported (tools show them
  too) and cost nothing: the world changed, the agent made no mistake.
* Otherwise: "go ahead and recommend" only when nothing is withheld.
"""

from __future__ import annotations

import random
import re

from ecom_bench.catalog import Catalog, Product
from ecom_bench.catalog.naming import Noun, agreement, counted, product_noun, short_name
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs._mentions import ProductMentions
from ecom_bench.envs._ranking import Constraint, RankingGoal, in_stock_for
from ecom_bench.users import UserAct, UserMessage, render
from ecom_bench.users.base import Disclosure
from ecom_bench.users.customer import Customer
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

GREETINGS = ("Hi!", "Hello,", "Hey there.", "Hi there,", "")
CLOSINGS = ("Thanks!", "Thank you.", "")
QUITS = ("This is taking too long, I'll look elsewhere. Bye.", "Sorry, I have to go. I'll shop another time.")
SENTENCES: dict[str, tuple[str, ...]] = {
    "price": ("My budget is ${value}.", "It should cost under ${value}.", "I don't want to spend more than ${value}."),
    "brand": ("It should be from {value}.", "I'd like the {value} brand."),
    "rating": ("It should be rated at least {stars}.", "I only buy things with {value}+ stars."),
    "ship": ("It needs to ship within {days}.", "I need it delivered in {days} or less."),
    "attribute": ("The {label} must be {value}.", "The {label} must be {value}, please."),
}
#: Asking for the list: [k > 1, k == 1] (never "top 1 picks"; `requested_k` reads both). It says
#: that only products meeting everything count, fewer if fewer do: that is the success rule, and
#: a careful agent that filled the list with near misses to reach k failed without being told.
ASK_LIST = (("Please recommend your top {k} picks, only ones that meet everything I need (fewer if fewer do).",
             "Send me your top {k} options; only ones that fit all of it, even if that's fewer."),
            ("Please recommend your top pick.", "Send me your top option."))
GO_AHEAD = ("Please go ahead and recommend your top {k} picks, only ones that meet everything (fewer if "
            "fewer do).", "Please go ahead and recommend your top pick.")
#: A question whose plain answer is "no, that's all": it asks whether the customer needs more.
_ASKS_FOR_MORE = re.compile(r"\b(?:anything|something) (?:else|more|further)\b|\bany other\b|\bis that (?:all|everything)\b|"
                            r"\bbe (?:all|everything)\b|\b(?:have|did) i (?:covered|answered)|\bother (?:needs?|requirements?)\b")
MORE_TO_SAY = ("There's something else that matters to me too, if you want to know.",
               "That's not all, by the way; there's more if you need it.")
#: What is wrong with a proposal, by kind. Never a value: a stated one is in the request
#: already, a withheld one is given when asked. (Restating stated values let an agent that
#: never read the request learn them from complaints: 13% of d = 3 discovery episodes.)
COMPLAINTS: dict[str, str] = {
    "price": "The {name} {is} over my budget.",
    "rating": "The {name} {isnt} rated highly enough for me.",
    "ship": "The {name} would take too long to get here.",
    "category": "The {name} {isnt} {value}.",
    "brand": "The {name} {isnt} the brand I want.",
    "attribute": "The {name} {isnt} available with the {label} I need.",
}
#: Said after a complaint about something the customer had already stated.
AS_I_SAID = ("As I said.", "I mentioned that.")
NOT_ALL = ("Not all of these work for me.", "Hmm, that's not quite right.", "")
FEWER_THAN_ASKED = ("Those work for me. I asked for up to {k} picks, though: if more meet everything, "
                    "please include them in your recommendation.")
LOOKS_GOOD = ("Those look good to me. Please send them as your final recommendation.",
              "That works for me. Go ahead and send your recommendation.")


def fmt(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


class ConstraintUser(Customer):
    """A shopper with hidden constraints; E_PD and E_SUB differ in the opening and in `_gate_problem`."""

    def __init__(self, goal: RankingGoal, catalog: Catalog, difficulty: Difficulty, seed: int,
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
    def stated_constraints(self) -> tuple[Constraint, ...]:
        """Every constraint the user can state, in order (E_SUB adds compatibility)."""
        return self.goal.requirements

    def _intro(self, rng: random.Random) -> str:
        raise NotImplementedError

    def _protected(self) -> set[str]:
        return set()

    def _gate_problem(self, p: Product, name: str) -> str:
        """Why `p` fails the env's hard gate, in the customer's words ('' if it passes)."""
        return ""

    # --------------------------------------------------------------- API
    def opening(self) -> UserMessage:
        rng = self.rng("opening")
        parts = [rng.choice(GREETINGS), self._intro(rng)]
        parts += [self.sentence(c, rng) for c in self.stated_constraints()
                  if c.kind != "category" and self.told(c.slot)]
        parts.append(render(rng.choice(ASK_LIST[self.goal.k == 1]), k=self.goal.k))
        parts.append(rng.choice(CLOSINGS))
        parts.append(self.missing_signal(self.rng("signal")))
        return self.say(" ".join(p for p in parts if p), UserAct.OPENING, rng)

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        rng = self.next_reply_rng()
        if last_turn:
            return self.quit(rng, QUITS)
        asking = is_request(agent_text)
        revealed = self._answer(agent_text) if asking else []
        said = [self.sentence(c, rng) for c in revealed]
        if revealed and self.withheld():
            said.append(rng.choice(MORE_TO_SAY))
        slots = tuple(c.slot for c in revealed)
        proposals = self._proposals(agent_text, world)
        if proposals:
            return self._feedback(proposals, world, said, slots, rng)
        if said:
            return self.say(" ".join(said), UserAct.CLARIFY, rng, slots)
        if self.withheld():
            return self.say("Okay. " + self.missing_signal(rng), UserAct.CONTINUE, rng)
        if asking and (again := self._told_asked(agent_text)):
            # "Is it okay if it ships in 11 days?", "the color should be Blue, right?": they say again
            # what they need (as they stated it: never a yes to relaxing it, never a bare no)
            text = " ".join([self.sentence(c, rng) for c in again] + [render(GO_AHEAD[self.goal.k == 1], k=self.goal.k)])
            return self.say(text, UserAct.CONTINUE, rng)
        if asking and not _ASKS_FOR_MORE.search(agent_text.lower()) and is_check_in(agent_text.lower()):
            # "Does that sound good?" asks for approval, not for more needs: a "No, that's
            # everything" would read as a refusal
            return self.say("Yes. " + render(GO_AHEAD[self.goal.k == 1], k=self.goal.k), UserAct.CONTINUE, rng)
        if asking:
            return self.say(rng.choice(("No, that's everything I need.", "Nothing else, that's all.")),
                            UserAct.CONTINUE, rng)
        return self.say(render(GO_AHEAD[self.goal.k == 1], k=self.goal.k), UserAct.CONTINUE, rng)

    # ----------------------------------------------------------- phrasing
    def sentence(self, c: Constraint, rng: random.Random) -> str:
        days = counted(c.value, "day") if c.kind == "ship" else ""
        stars = counted(c.value, "star") if c.kind == "rating" else ""
        return render(rng.choice(SENTENCES[c.kind]), value=fmt(c.value), label=c.label, days=days, stars=stars)

    # ---------------------------------------------------------- questions
    def _cues(self, c: Constraint) -> tuple[str, ...]:
        if c.kind != "attribute":
            return KIND_CUES.get(c.kind, ())
        assert c.attribute is not None
        return (c.label, c.attribute.replace("_", " ")) + ATTRIBUTE_CUES.get(c.attribute, ())

    def _told_asked(self, agent_text: str) -> list[Constraint]:
        """The stated constraints, already told, that a request asks about by their cues."""
        told = {c.slot: c for c in self.stated_constraints() if c.kind != "category" and self.told(c.slot)}
        return [told[s] for s in topics_asked(agent_text, {s: self._cues(c) for s, c in told.items()})]

    def _answer(self, agent_text: str) -> list[Constraint]:
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

    def _feedback(self, proposals: list[Product], world: World, said: list[str], slots: tuple[str, ...],
                  rng: random.Random) -> UserMessage:
        """Stock-outs, then the set's first problem (a strike), else CONFIRM."""
        stocked = {p.id: in_stock_for(self.goal, world, p) for p in proposals}
        gone = [render("The {name} show{s} as out of stock now.", name=short_name(p),
                       **agreement(short_name(p), product_noun(p)))
                for p in proposals if not stocked[p.id]]
        problem = next((c for p in proposals if stocked[p.id] and (c := self._problem(p, slots))), "")
        if problem:
            goodbye = self.strike(rng)
            if goodbye is not None:
                return goodbye
            text = " ".join(said + gone + [rng.choice(NOT_ALL), problem])
            return self.say(text, UserAct.CORRECT, rng, slots)
        if gone:
            return self.say(" ".join(said + gone), UserAct.CORRECT, rng, slots)
        if len(proposals) < self.goal.k:
            # fine as far as they go; the customer asked for up to k and cannot know how many qualify
            more = render(FEWER_THAN_ASKED, k=self.goal.k)
            return self.say(" ".join(said + [more]), UserAct.CONFIRM, rng, slots)
        return self.say(" ".join(said + [rng.choice(LOOKS_GOOD)]), UserAct.CONFIRM, rng, slots)

    def _problem(self, p: Product, told_now: tuple[str, ...] = ()) -> str:
        """The first thing wrong with an in-stock proposal, in the customer's words ('' if none);
        "as I said" only for what was said before this reply (`told_now`: said in it)."""
        name = short_name(p)
        if gate := self._gate_problem(p, name):
            return gate
        c = next((c for c in self.goal.requirements if c.satisfaction(p) < 1.0), None)
        if c is None:
            return ""
        text = render(COMPLAINTS[c.kind], name=name, value=self._noun().a(), label=c.label,
                      **agreement(name, product_noun(p)))
        if c.kind != "category" and self.told(c.slot) and c.slot not in told_now:
            text += " " + AS_I_SAID[len(name) % len(AS_I_SAID)]
        return text

    def _noun(self) -> Noun:
        target = self.catalog.get(self.goal.reference_id)
        assert target is not None
        return product_noun(target)


class DiscoveryUser(ConstraintUser):
    """E_PD: "I'm looking for a mouse." plus the constraints."""

    def _intro(self, rng: random.Random) -> str:
        noun = self._noun()
        return render(rng.choice(("I'm looking for {a_noun}.", "I need {a_new_noun}.", "Can you help me find {a_noun}?")),
                      a_noun=noun.a(), a_new_noun=noun.a("new"))

    def _protected(self) -> set[str]:
        return {self._noun().one}
