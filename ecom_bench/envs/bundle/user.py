"""E_BUNDLE's template user: names the project and some items, answers, reviews proposals.

* Opening: the project(s), the required items whose slot is told, a signal when some
  are withheld ("I'll need a few other things too"); likewise the budget and the
  bundle-wide requirements, or a signal that there are some ("I have a budget in mind").
* A request for information (`users.understanding.is_request`: any question or "tell
  me ..." in any phrasing) is always answered (`Customer.to_disclose`): item names,
  budget and requirement words only narrow which withheld slot it gets; a request
  naming none ("what else do you need?", "is that everything?") gets every withheld
  item, the budget and the requirements. A question naming a category is also told
  whether it is needed. CLARIFY only when something withheld was disclosed; "That's
  everything on my list" is a CONTINUE, so padding messages with questions earns nothing.
* A proposal (a message naming catalogue product ids) is reviewed with the verifier's
  own rule (`goal.assess`): the *kinds* of problem (something missing, unwanted,
  doubled, over budget, breaking a requirement; CORRECT, disclosing nothing, and a
  `strike`: the second bad list ends the chat), sold-out picks by name, or a
  confirmation (CONFIRM).
* Stock-outs the agent triggered are announced in the next reply; QUIT on the last turn.
"""

from __future__ import annotations

import random
import re
from typing import ClassVar

from ecom_bench.catalog.naming import agreement, product_noun, short_name
from ecom_bench.catalog.taxonomy import LEAVES
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs._mentions import ProductMentions
from ecom_bench.envs.bundle.goal import (BUDGET_SLOT, BundleConstraint, BundleGoal, assess, item_name,
                                         with_article)
from ecom_bench.envs.bundle.projects import Project
from ecom_bench.users import UserAct, UserMessage, render
from ecom_bench.users.base import Disclosure
from ecom_bench.users.customer import Customer
from ecom_bench.users.understanding import is_request, sentences
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
#: Words that widen a request to everything withheld ("what's your budget, and anything else?").
#: They only ever make the customer say more; no request is left unanswered without them.
GENERAL_WORDS = ("else", "other", "anything", "everything", "more", "all", "complete", "full list")
BUDGET_WORDS = ("budget", "spend", "price range", "how much", "afford", "cost", "limit")


def _says(text_l: str, phrase: str) -> bool:
    """Whether lower-cased `text_l` has `phrase` as whole words (a trailing plural "s" allowed)."""
    return re.search(rf"(?<![a-z0-9]){re.escape(phrase.lower())}s?(?![a-z0-9])", text_l) is not None


def listing(phrases: list[str]) -> str:
    """ "a; b; and c" (semicolons, so item names with commas stay whole)."""
    return phrases[0] if len(phrases) == 1 else "; ".join(phrases[:-1]) + "; and " + phrases[-1]


def mentioned_categories(text_l: str) -> list[str]:
    """The catalogue leaves a message names, by item name or category name."""
    return [leaf.name for leaf in LEAVES if _says(text_l, item_name(leaf.name)) or _says(text_l, leaf.name)]


#: Words that put products forward as the list ("Here's my proposal: ...", "How about ...?"); a
#: question about one named product without them ("Which size of the X tank top?") is a question.
_PROPOSES = re.compile(r"\b(?:propos\w*|suggest\w*|recommend\w*|here'?s|here (?:is|are)|how about|what about|"
                       r"list|bundle|submit\w*|go with|shall i|should i|works?|look(?:s)? good|sounds? good|"
                       r"i (?:found|picked|chose|selected)|my picks?)\b")


def money(x: float) -> str:
    return f"${x:.0f}" if float(x).is_integer() else f"${x:.2f}"


class BundleUser(Customer):
    """The simulated shopper of one E_BUNDLE episode."""

    rng_prefix: ClassVar[tuple[str, ...]] = ("bundle-user",)

    def __init__(self, goal: BundleGoal, projects: list[Project], difficulty: Difficulty, seed: int,
                 disclosure: Disclosure) -> None:
        # Never noised: what is needed, the projects, and the fact that something sold out.
        protect = {item_name(c) for c in goal.required} | set(goal.required) | {p.name for p in projects} | {
            "sold out"}
        super().__init__(difficulty, seed, disclosure, protect)
        self._mentions = ProductMentions()
        self.goal = goal
        self.projects = projects
        self._announced: set[str] = set()

    # ---------------------------------------------------------------- API
    def opening(self) -> UserMessage:
        rng = self.rng("opening")
        primary, *others = self.projects
        intro = primary.phrase + "".join(f", and {p.also}" for p in others)
        told = [with_article(i.category) for i in self.goal.items if self.told(i.slot)]
        parts = [rng.choice(GREETINGS), intro + ".", rng.choice(NEED_INTROS), listing(told) + "."]
        if len(told) < len(self.goal.items):
            parts.append(rng.choice(MORE_SIGNALS))
        if self.goal.budget is not None:
            parts.append(self._budget_sentence() if self.told(BUDGET_SLOT) else rng.choice(BUDGET_SIGNALS))
        told_rules = [c for c in self.goal.constraints if self.told(c.slot)]
        if told_rules:
            parts.append(self._rules_sentence(told_rules))
        if len(told_rules) < len(self.goal.constraints):
            parts.append(rng.choice(CONSTRAINT_SIGNALS))
        parts.append(rng.choice(CLOSINGS))
        return self.say(render(" ".join(parts)), UserAct.OPENING, rng)

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        rng = self.next_reply_rng()
        if last_turn:
            return self.quit(rng)
        news = self._stock_news(world)
        proposed = self._mentions(agent_text, world)
        if proposed and (len(proposed) > 1 or _PROPOSES.search(agent_text.lower()) or not is_request(agent_text)):
            return self._review(proposed, world, news, rng)
        if is_request(agent_text):
            revealed, answer = self._answer(agent_text)
            return self._say(news + [answer], UserAct.CLARIFY if revealed else UserAct.CONTINUE, rng, revealed)
        if news:
            return self._say(news, UserAct.CORRECT, rng)
        oks = ("Okay, thanks.", "Sounds good.") + (() if self.withheld() else ("Sure, go ahead.",))
        return self._say([rng.choice(oks)], UserAct.CONTINUE, rng)

    # ---------------------------------------------------------- questions
    def _asked(self, sentence: str) -> tuple[set[str], list[str], bool, bool]:
        """(slots a request sentence asks about, categories it names, asks budget?, asks requirements?)."""
        low = sentence.lower()
        named = mentioned_categories(low)
        asks_budget = any(_says(low, w) for w in BUDGET_WORDS)
        asks_rules = any(_says(low, w) for w in REQUIREMENT_WORDS)
        slots = {item.slot for c in named if (item := self.goal.item(c)) is not None}
        slots |= {BUDGET_SLOT} if asks_budget else set()
        slots |= {c.slot for c in self.goal.constraints
                  if asks_rules or any(_says(low, w) for w in CONSTRAINT_WORDS[c.kind])}
        return slots, named, asks_budget, asks_rules

    def _answer(self, text: str) -> tuple[list[str], str]:
        """Disclose what the request asks for (everything withheld unless it names some of it), and
        answer what it asks about that was already told."""
        hidden = set(self.withheld())
        asked: set[str] = set()
        named: list[str] = []
        asks_budget = asks_rules = False
        for sentence in [s for s in sentences(text) if is_request(s)] or [text]:
            slots, cats, budget, rules = self._asked(sentence)
            named += [c for c in cats if c not in named]
            asks_budget, asks_rules = asks_budget or budget, asks_rules or rules
            # "your requirements / preferences" is a general question in plain English, not one about rules
            general = rules or any(_says(sentence.lower(), w) for w in GENERAL_WORDS)
            asked |= slots if slots & hidden and not general else hidden
        revealed = self.to_disclose(asked)
        new_items = [i for i in self.goal.items if i.slot in revealed]
        out: list[str] = []
        if new_items:
            out.append(render("I also need {items}.", items=listing([with_article(i.category) for i in new_items])))
        for category in named:
            item = self.goal.item(category)
            if item is None:
                out.append(render("No, I don't need {what}.", what=with_article(category)))
            elif item not in new_items:
                out.append(render("Yes, I need {what}.", what=with_article(category)))
        if BUDGET_SLOT in revealed or (asks_budget and self.goal.budget is not None):
            out.append(self._budget_sentence())
        elif asks_budget:
            out.append("I don't have a fixed budget, just keep it sensible.")
        stated = [c for c in self.goal.constraints if c.slot in revealed or (asks_rules and c.slot not in hidden)]
        if stated:
            out.append(self._rules_sentence(stated))
        elif asks_rules:
            out.append("No special requirements.")
        if not out:
            out.append("That's everything on my list.")
        return revealed, " ".join(out)

    def _budget_sentence(self) -> str:
        return render("My budget is {b} in total.", b=money(self.goal.budget or 0))

    @staticmethod
    def _rules_sentence(rules: list[BundleConstraint]) -> str:
        text = " and ".join(c.describe() for c in rules)
        return render("Please note: {text}.", text=text[0].upper() + text[1:])

    # ---------------------------------------------------------- proposals
    def _review(self, proposed: list[str], world: World, news: list[str], rng: random.Random) -> UserMessage:
        """The customer's look at a proposed list: the kinds of problem, never the answer.

        It says *that* something is missing, unwanted, doubled, over budget or breaks a
        requirement, but not which item or category, nor a value (the request said what it
        could; withheld items come when asked). Each list with such a problem costs patience
        (`strike`). Reading the answer out ("you're still missing a tent; I don't need a
        jigsaw puzzle ...") let an agent that never read the request build the bundle from
        the reviews alone (77% of d = 3 episodes). Sold-out
        proposals are named and cost nothing: the world changed, not the agent.
        """
        a = assess(self.goal, proposed, world)
        problems = list(news)
        for pid, _ in a.out_of_stock:
            if not any(pid in n for n in news):
                p = world.catalog[pid]
                problems.append(render("The {name} ({pid}) {is} out of stock.", name=short_name(p), pid=pid,
                                       **agreement(short_name(p), product_noun(p))))
        kinds = [text for wrong, text in (
            (a.missing, "That's not everything I need yet."),
            (a.extra, "Some of these aren't things I need."),
            (a.duplicates, "I only need one of each thing."),
            (a.violations, "Some of these don't meet my requirements."),
            (a.over_budget > 0, "That's over my budget."),
        ) if wrong]
        if kinds:
            if (goodbye := self.strike(rng)) is not None:
                return goodbye
            return self._say(problems + kinds, UserAct.CORRECT, rng)
        if problems:
            return self._say(problems, UserAct.CORRECT, rng)
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

    def _say(self, parts: list[str], act: UserAct, rng: random.Random,
             revealed: list[str] | tuple[str, ...] = ()) -> UserMessage:
        return self.say(" ".join(s for s in parts if s), act, rng, revealed)
