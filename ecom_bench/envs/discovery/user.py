"""The template shopper of E_PD (and, by subclassing, E_SUB).

It states the category and every constraint not withheld (one sentence each), answers
questions (a question naming a requirement reveals it, e.g. "budget", "brand",
"rating", "shipping" or the feature's name; a general "any other requirements?"
reveals the next withheld one, so asking again reveals the next), and gives feedback on products the agent proposes in a plain message:
which constraint a proposal breaks (CORRECT, revealing it if it was withheld), that it
went out of stock, or that the proposals look good (CONFIRM). The same satisfaction
rule as the verifier decides, so the user never approves what the verifier rejects.
"""

from __future__ import annotations

import random
import re

from ecom_bench._seeding import seeded_rng
from ecom_bench.catalog import Catalog, Product
from ecom_bench.catalog.naming import short_name
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs._ranking import Constraint, RankingGoal, category_noun
from ecom_bench.users import UserAct, UserMessage, add_noise, render
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World

KIND_KEYWORDS: dict[str, tuple[str, ...]] = {
    "price": ("budget", "price", "cost", "spend", "expensive", "cheap", "afford", "how much", "$"),
    "brand": ("brand", "manufacturer", "maker", "make"),
    "rating": ("rating", "rated", "review", "reviews", "stars", "star"),
    "ship": ("ship", "shipping", "deliver", "delivery", "arrive", "how soon", "how fast"),
}
ATTRIBUTE_KEYWORDS: dict[str, tuple[str, ...]] = {
    "connector_type": ("connector", "plug", "port", "cable"),
    "color": ("color", "colour", "shade"),
    "size": ("size", "fit"),
    "material": ("material", "made of"),
}
GENERAL_KEYWORDS = ("other requirement", "any requirement", "requirements", "anything else", "any other",
                    "preferences", "preference", "constraints", "must-have", "else")
_ID = re.compile(r"\bP\d{5,}\b")

GREETINGS = ("Hi!", "Hello,", "Hey there.", "Hi there,", "")
CLOSINGS = ("Thanks!", "Thank you.", "")
SENTENCES: dict[str, tuple[str, ...]] = {
    "price": ("My budget is ${value}.", "It should cost under ${value}.", "I don't want to spend more than ${value}."),
    "brand": ("It should be from {value}.", "I'd like the {value} brand."),
    "rating": ("It should be rated at least {value} stars.", "I only buy things with {value}+ stars."),
    "ship": ("It needs to ship within {value} days.", "I need it delivered in {value} days or less."),
    "attribute": ("The {label} must be {value}.", "The {label} must be {value}, please."),
}
VIOLATIONS: dict[str, str] = {
    "price": "The {name} costs ${actual}, over my budget of ${value}.",
    "rating": "The {name} is only rated {actual} stars; I want at least {value}.",
    "ship": "The {name} takes {actual} days to ship; I need it within {value} days.",
    "category": "The {name} isn't a {value}.",
    "brand": "The {name} isn't from {value}.",
    "attribute": "The {name} isn't available with that {label}; the {label} must be {value}.",
}


def _says(text_l: str, phrase: str) -> bool:
    return re.search(rf"(?<![a-z0-9]){re.escape(phrase.lower())}(?![a-z0-9])", text_l) is not None


def fmt(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


class ConstraintUser:
    """A shopper with hidden constraints; E_PD and E_SUB differ in the opening and in `_extra_issues`."""

    def __init__(self, goal: RankingGoal, catalog: Catalog, difficulty: Difficulty, seed: int,
                 disclosure: Disclosure) -> None:
        self.goal = goal
        self.catalog = catalog
        self.difficulty = difficulty
        self.seed = seed
        self._disclosure = disclosure
        self._replies = 0
        protect = {str(c.value) for c in self.stated_constraints()}
        protect.update(c.label for c in self.stated_constraints() if c.attribute)
        protect.update(self._protected())
        protect.add("out of stock")  # feedback the agent must be able to read
        self._protect = frozenset(protect)

    # ------------------------------------------------------------- hooks
    def stated_constraints(self) -> tuple[Constraint, ...]:
        """Every constraint the user can state, in order (E_SUB adds compatibility)."""
        return self.goal.requirements

    def _intro(self, rng: random.Random) -> str:
        raise NotImplementedError

    def _protected(self) -> set[str]:
        return set()

    def _extra_issues(self, p: Product, name: str, world: World) -> list[str]:
        return []

    # --------------------------------------------------------------- API
    def disclosure(self) -> dict[str, bool]:
        return dict(self._disclosure.told)

    def opening(self) -> UserMessage:
        rng = seeded_rng(self.seed, "opening")
        parts = [rng.choice(GREETINGS), self._intro(rng)]
        parts += [self.sentence(c, rng) for c in self.stated_constraints()
                  if c.kind != "category" and self._disclosure.is_told(c.slot)]
        parts.append(render(rng.choice(("Please recommend your top {k} picks.", "Send me your top {k} options.")),
                            k=self.goal.k))
        parts.append(rng.choice(CLOSINGS))
        return UserMessage(self._noisy(" ".join(p for p in parts if p), rng), UserAct.OPENING)

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        self._replies += 1
        rng = seeded_rng(self.seed, "reply", self._replies)
        if last_turn:
            text = rng.choice(("This is taking too long, I'll look elsewhere. Bye.",
                               "Sorry, I have to go. I'll shop another time."))
            return UserMessage(text, UserAct.QUIT, ends_episode=True)
        text_l = agent_text.lower()
        asked = "?" in agent_text
        hidden_before = set(self._disclosure.hidden())
        revealed = self._answer_question(text_l) if asked else []
        answers = [self.sentence(c, rng) for c in revealed]
        proposals = self._proposals(agent_text, world)
        problems: list[str] = []
        for p in proposals:
            problems += self._issues(p, world)
        slots = tuple(sorted(hidden_before - set(self._disclosure.hidden())))
        if problems:
            return UserMessage(self._noisy(" ".join(answers + problems), rng), UserAct.CORRECT, slots)
        if answers:
            return UserMessage(self._noisy(" ".join(answers), rng), UserAct.CLARIFY, slots)
        if proposals:
            text = rng.choice(("Those look good to me. Please send them as your final recommendation.",
                               "That works for me. Go ahead and send your recommendation."))
            return UserMessage(self._noisy(text, rng), UserAct.CONFIRM)
        if asked and not self._disclosure.hidden():
            text = rng.choice(("No, that's everything I need.", "Nothing else, that's all."))
            return UserMessage(self._noisy(text, rng), UserAct.CLARIFY)
        text = render("Please go ahead and recommend your top {k} picks.", k=self.goal.k)
        return UserMessage(self._noisy(text, rng), UserAct.CONTINUE)

    # ----------------------------------------------------------- phrasing
    def sentence(self, c: Constraint, rng: random.Random) -> str:
        return render(rng.choice(SENTENCES[c.kind]), value=fmt(c.value), label=c.label)

    def _noisy(self, text: str, rng: random.Random) -> str:
        return add_noise(text, self.difficulty.p_noise, rng, self._protect)

    # ---------------------------------------------------------- questions
    def _answer_question(self, text_l: str) -> list[Constraint]:
        """A question naming a requirement reveals it; a general one ("anything else?") the next withheld one."""
        hidden = [c for c in self.stated_constraints() if not self._disclosure.is_told(c.slot)]
        out = []
        for c in hidden:
            if c.kind == "attribute":
                assert c.attribute is not None
                keys = (c.label, c.attribute.replace("_", " ")) + ATTRIBUTE_KEYWORDS.get(c.attribute, ())
            else:
                keys = KIND_KEYWORDS.get(c.kind, ())
            if any(k in text_l if k == "$" else _says(text_l, k) for k in keys):
                out.append(c)
        rest = [c for c in hidden if c not in out]
        if rest and any(_says(text_l, k) for k in GENERAL_KEYWORDS):
            out.append(rest[0])
        for c in out:
            self._disclosure.reveal(c.slot)
        return out

    # ---------------------------------------------------------- feedback
    def _proposals(self, agent_text: str, world: World) -> list[Product]:
        """Products the agent names in a plain message: by id, or by the short name of one it was shown."""
        found: dict[str, Product] = {}
        for pid in _ID.findall(agent_text):
            p = world.product(pid)
            if p is not None:
                found[p.id] = p
        text_l = agent_text.lower()
        for pid in sorted(world.seen_ids):
            p = world.product(pid)
            if p is not None and p.id not in found and short_name(p).lower() in text_l:
                found[p.id] = p
        return list(found.values())[:5]

    def _issues(self, p: Product, world: World) -> list[str]:
        name = short_name(p)
        extra = self._extra_issues(p, name, world)
        if extra:
            return extra
        if not world.in_stock(p):
            return [render("The {name} shows as out of stock now.", name=name)]
        out = []
        for c in self.goal.requirements:
            if c.satisfaction(p) < 1.0:
                if not self._disclosure.is_told(c.slot):
                    self._disclosure.reveal(c.slot)
                actual = {"price": fmt(p.price), "rating": fmt(p.rating), "ship": str(p.ship_days)}.get(c.kind, "")
                value = self._category_word() if c.kind == "category" else fmt(c.value)
                out.append(render(VIOLATIONS[c.kind], name=name, actual=actual, value=value, label=c.label))
        return out

    def _category_word(self) -> str:
        target = self.catalog.get(self.goal.reference_id)
        assert target is not None
        return category_noun(target)


class DiscoveryUser(ConstraintUser):
    """E_PD: "I'm looking for a {noun}." plus the constraints."""

    def _intro(self, rng: random.Random) -> str:
        return render(rng.choice(("I'm looking for a {noun}.", "I need a new {noun}.",
                                  "Can you help me find a {noun}?")), noun=self._category_word())

    def _protected(self) -> set[str]:
        return {self._category_word()}
