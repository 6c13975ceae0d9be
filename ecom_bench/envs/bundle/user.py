"""E_BUNDLE's template user: names the project and some items, answers, reviews proposals.

* Opening: the project(s), the required items whose slot is told, a signal when some
  are withheld ("I'll need a few other things too"); likewise the budget and the
  bundle-wide requirements, or a signal that there are some ("I have a budget in mind").
* A question (a message with "?") is answered (CLARIFY): a general one ("what else do
  you need?") reveals every withheld item, the budget and the requirements; a question
  about the budget or a requirement (rating, delivery) reveals it; a question naming a
  category says whether it is needed (revealing it when it was withheld). So a withheld
  slot is always obtainable by asking.
* A proposal (a message naming catalogue product ids) is reviewed with the verifier's
  own rule (`goal.assess`): what is missing, unwanted, duplicated, out of stock or over
  budget (CORRECT, revealing what it mentions), or a confirmation (CONFIRM).
* Stock-outs the agent triggered are announced in the next reply; QUIT on the last turn.
"""

from __future__ import annotations

import random
import re

from ecom_bench._seeding import seeded_rng
from ecom_bench.catalog.naming import short_name
from ecom_bench.catalog.taxonomy import LEAVES
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.bundle.goal import (BUDGET_SLOT, BundleConstraint, BundleGoal, assess, item_name,
                                         with_article)
from ecom_bench.envs.bundle.projects import Project
from ecom_bench.users import UserAct, UserMessage, add_noise, render
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World

GREETINGS = ("Hi!", "Hello,", "Hey there.", "Hi there,", "")
NEED_INTROS = ("Here's what I need:", "Could you put together a shopping list for me:", "I'll need:",
               "Can you help me find:")
MORE_SIGNALS = ("I'll need a few other things too.", "There's a bit more I need as well.",
                "That's not everything, there are a few more things.")
BUDGET_SIGNALS = ("I have a budget in mind as well.", "I also have a budget to stick to.")
CONSTRAINT_SIGNALS = ("I also have a requirement for the products.",
                      "The products have to meet a requirement of mine.")
CONSTRAINT_WORDS: dict[str, tuple[str, ...]] = {
    "min_rating": ("rating", "rated", "stars", "reviews", "quality"),
    "max_ship_days": ("ship", "shipping", "deliver", "delivery", "arrive", "days", "when"),
}
REQUIREMENT_WORDS = ("requirement", "require", "preference", "prefer")
CLOSINGS = ("Thanks!", "Thank you.", "")
GENERAL_QUESTION = ("else", "other", "anything", "everything", "full list", "complete", "what do you need",
                    "what you need", "more")
BUDGET_WORDS = ("budget", "spend", "price range", "how much", "afford", "cost", "limit")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*")


def _says(text_l: str, phrase: str) -> bool:
    """Whether lower-cased `text_l` has `phrase` as whole words (a trailing plural "s" allowed)."""
    return re.search(rf"(?<![a-z0-9]){re.escape(phrase.lower())}s?(?![a-z0-9])", text_l) is not None


def listing(phrases: list[str]) -> str:
    """ "a; b; and c" (semicolons, so item names with commas stay whole)."""
    return phrases[0] if len(phrases) == 1 else "; ".join(phrases[:-1]) + "; and " + phrases[-1]


def mentioned_categories(text_l: str) -> list[str]:
    """The catalogue leaves a message names, by item name or category name."""
    return [leaf.name for leaf in LEAVES if _says(text_l, item_name(leaf.name)) or _says(text_l, leaf.name)]


def mentioned_products(text: str, world: World) -> list[str]:
    """Catalogue product ids a message names, in order, each once."""
    out: list[str] = []
    for tok in _TOKEN.findall(text):
        if tok not in out and world.product(tok) is not None:
            out.append(tok)
    return out


def money(x: float) -> str:
    return f"${x:.0f}" if float(x).is_integer() else f"${x:.2f}"


class BundleUser:
    """The simulated shopper of one E_BUNDLE episode."""

    def __init__(self, goal: BundleGoal, projects: list[Project], difficulty: Difficulty, seed: int,
                 disclosure: Disclosure) -> None:
        self.goal = goal
        self.projects = projects
        self.difficulty = difficulty
        self.seed = seed
        self._disclosure = disclosure
        self._replies = 0
        self._announced: set[str] = set()
        # Never noised: what is needed, the projects, and the fact that something sold out.
        self._protect = frozenset({item_name(c) for c in goal.required} | set(goal.required)
                                  | {p.name for p in projects} | {"sold out"})

    # ---------------------------------------------------------------- API
    def disclosure(self) -> dict[str, bool]:
        return dict(self._disclosure.told)

    def opening(self) -> UserMessage:
        rng = seeded_rng(self.seed, "bundle-user", "opening")
        primary, *others = self.projects
        intro = primary.phrase + "".join(f", and {p.also}" for p in others)
        told = [with_article(i.category) for i in self.goal.items if self._disclosure.is_told(i.slot)]
        parts = [rng.choice(GREETINGS), intro + ".", rng.choice(NEED_INTROS), listing(told) + "."]
        if len(told) < len(self.goal.items):
            parts.append(rng.choice(MORE_SIGNALS))
        if self.goal.budget is not None:
            parts.append(self._budget_sentence() if self._disclosure.is_told(BUDGET_SLOT)
                         else rng.choice(BUDGET_SIGNALS))
        told_rules = [c for c in self.goal.constraints if self._disclosure.is_told(c.slot)]
        if told_rules:
            parts.append(self._rules_sentence(told_rules))
        if len(told_rules) < len(self.goal.constraints):
            parts.append(rng.choice(CONSTRAINT_SIGNALS))
        parts.append(rng.choice(CLOSINGS))
        return UserMessage(self._noisy(render(" ".join(parts)), rng), UserAct.OPENING)

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        self._replies += 1
        rng = seeded_rng(self.seed, "bundle-user", "reply", self._replies)
        if last_turn:
            text = rng.choice(("This is taking too long, I'll figure it out myself. Bye.",
                               "Sorry, I have to go. I'll shop for this another time."))
            return UserMessage(text, UserAct.QUIT, ends_episode=True)
        news = self._stock_news(world)
        proposed = mentioned_products(agent_text, world)
        if proposed:
            return self._review(proposed, world, news, rng)
        if "?" in agent_text:
            revealed, answer = self._answer(agent_text.lower())
            return self._say(news + [answer], UserAct.CLARIFY, rng, revealed)
        if news:
            return self._say(news, UserAct.CORRECT, rng)
        ok = rng.choice(("Okay, thanks.", "Sounds good.", "Sure, go ahead."))
        return self._say([ok], UserAct.CONTINUE, rng)

    # ---------------------------------------------------------- questions
    def _answer(self, text_l: str) -> tuple[list[str], str]:
        named = mentioned_categories(text_l)
        asks_budget = any(_says(text_l, w) for w in BUDGET_WORDS)
        asks_rules = any(_says(text_l, w) for w in REQUIREMENT_WORDS)
        asked_rules = [c for c in self.goal.constraints
                       if asks_rules or any(_says(text_l, w) for w in CONSTRAINT_WORDS[c.kind])]
        general = (any(_says(text_l, w) for w in GENERAL_QUESTION)
                   or not (named or asks_budget or asks_rules or asked_rules))
        revealed: list[str] = []
        sentences: list[str] = []
        if general:
            hidden = [i for i in self.goal.items if not self._disclosure.is_told(i.slot)]
            for i in hidden:
                self._disclosure.reveal(i.slot)
                revealed.append(i.slot)
            if hidden:
                sentences.append(render("I also need {items}.", items=listing([with_article(i.category)
                                                                                for i in hidden])))
            else:
                sentences.append("That's everything on my list.")
        for category in named:
            item = self.goal.item(category)
            if item is None:
                sentences.append(render("No, I don't need {what}.", what=with_article(category)))
            elif not general:
                if self._disclosure.reveal(item.slot):
                    revealed.append(item.slot)
                sentences.append(render("Yes, I need {what}.", what=with_article(category)))
        if asks_budget or general:
            if self.goal.budget is None:
                if asks_budget:
                    sentences.append("I don't have a fixed budget, just keep it sensible.")
            else:
                if self._disclosure.reveal(BUDGET_SLOT):
                    revealed.append(BUDGET_SLOT)
                sentences.append(self._budget_sentence())
        rules = self.goal.constraints if general else tuple(asked_rules)
        for c in rules:
            if self._disclosure.reveal(c.slot):
                revealed.append(c.slot)
        if rules:
            sentences.append(self._rules_sentence(list(rules)))
        elif asks_rules:
            sentences.append("No special requirements.")
        return revealed, " ".join(sentences)

    def _budget_sentence(self) -> str:
        return render("My budget is {b} in total.", b=money(self.goal.budget or 0))

    @staticmethod
    def _rules_sentence(rules: list[BundleConstraint]) -> str:
        text = " and ".join(c.describe() for c in rules)
        return render("Please note: {text}.", text=text[0].upper() + text[1:])

    # ---------------------------------------------------------- proposals
    def _review(self, proposed: list[str], world: World, news: list[str], rng: random.Random) -> UserMessage:
        a = assess(self.goal, proposed, world)
        problems = list(news)
        revealed: list[str] = []
        if a.missing:
            for c in a.missing:
                slot = self.goal.item(c).slot  # type: ignore[union-attr]
                if self._disclosure.reveal(slot):
                    revealed.append(slot)
            problems.append(render("You're still missing {items}.", items=listing([with_article(c)
                                                                                  for c in a.missing])))
        for pid, _ in a.out_of_stock:
            if not any(pid in n for n in news):
                problems.append(render("The {name} ({pid}) is out of stock.",
                                       name=short_name(world.product(pid)), pid=pid))
        for pid, rule in a.violations:
            if self._disclosure.reveal(rule.slot):
                revealed.append(rule.slot)
            problems.append(render("The {name} ({pid}) {why}.", name=short_name(world.product(pid)), pid=pid,
                                   why=rule.violation(world.product(pid))))
        for pid, cat in a.extra:
            problems.append(render("I don't need {what}, so please drop the {name} ({pid}).",
                                   what=with_article(cat), name=short_name(world.product(pid)), pid=pid))
        for pid, cat in a.duplicates:
            problems.append(render("I only need one {what}; please drop the {name} ({pid}).",
                                   what=item_name(cat), name=short_name(world.product(pid)), pid=pid))
        if a.over_budget > 0:
            if self._disclosure.reveal(BUDGET_SLOT):
                revealed.append(BUDGET_SLOT)
            problems.append(render("That comes to {total}, over my budget of {b}.", total=money(a.total),
                                   b=money(self.goal.budget or 0)))
        if problems:
            return self._say(problems, UserAct.CORRECT, rng, revealed)
        text = rng.choice(("That looks perfect. Please submit that list.",
                           "Great, that's everything I need. Go ahead and submit it.",
                           "Yes, that list works for me. Please submit it."))
        return self._say([text], UserAct.CONFIRM, rng)

    def _stock_news(self, world: World) -> list[str]:
        """Announce, once, the scheduled stock-outs of this task that have fired."""
        news = []
        for event in world.stock_outs:
            if event.fired_at_turn is None or event.watch not in self.goal.stock_out_ids:
                continue
            if event.watch in self._announced:
                continue
            self._announced.add(event.watch)
            p = world.product(event.watch)
            news.append(render("Heads up: the {name} ({pid}) just sold out.",
                               name=short_name(p) if p else "item", pid=event.watch))
        return news

    def _say(self, sentences: list[str], act: UserAct, rng: random.Random,
             revealed: list[str] | tuple[str, ...] = ()) -> UserMessage:
        return UserMessage(self._noisy(" ".join(s for s in sentences if s), rng), act, tuple(revealed))

    def _noisy(self, text: str, rng: random.Random) -> str:
        return add_noise(text, self.difficulty.p_noise, rng, self._protect)
