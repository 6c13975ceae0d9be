"""E_CART's template user: names the items, withholds slots, answers, corrects, confirms.

Every reply is tagged (confirm, clarify, correct, continue, quit). The user reads
the agent's words with simple keyword rules and sees the cart (as a shopper sees
the cart page), so corrections come from the same matching rule as the verifier.
"""

from __future__ import annotations

import re

from ecom_bench._seeding import seeded_rng
from ecom_bench.catalog import Product
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.cart.goal import CartGoal, CartTarget
from ecom_bench.users import UserAct, UserMessage, add_noise, render
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World

ATTRIBUTE_LABELS = {"connector_type": "connector", "item_form": "form", "pack_size": "pack size",
                    "screen_size": "screen size"}
ATTRIBUTE_KEYWORDS = {
    "connector_type": ("connector", "plug", "port", "cable", "usb", "lightning", "type"),
    "size": ("size", "fit", "small", "medium", "large"),
    "color": ("color", "colour", "shade"),
    "material": ("material", "made of", "filter", "finish"),
    "item_form": ("form", "type", "format"),
    "wattage": ("watt", "wattage", "power"),
    "capacity": ("capacity", "size", "volume"),
    "scent": ("scent", "fragrance", "smell"),
    "flavor": ("flavor", "flavour", "taste"),
    "pack_size": ("pack", "count", "size"),
    "screen_size": ("screen", "inch", "size", "display"),
}
GENERIC_VARIANT_WORDS = ("variant", "version", "option", "which one", "model", "kind", "style")
QUANTITY_WORDS = ("how many", "quantity", "how much", "units", "number of", "pieces", "count")

GREETINGS = ("Hi!", "Hello,", "Hey there.", "Hi there,", "")
INTROS = ("Please add these to my cart:", "Could you put the following in my cart:",
          "I'd like to order", "Shopping list:", "Can you add to my cart")
CLOSINGS = ("Thanks!", "That's all.", "Thank you.", "")


def attribute_label(attribute: str | None) -> str:
    if attribute is None:
        return "option"
    return ATTRIBUTE_LABELS.get(attribute, attribute.replace("_", " "))


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9][a-z0-9\-]+", text.lower()))


def _says(text_l: str, phrase: str) -> bool:
    """Whether lower-cased `text_l` contains `phrase` as whole words ("mint" is not in "papermint")."""
    return re.search(rf"(?<![a-z0-9]){re.escape(phrase.lower())}(?![a-z0-9])", text_l) is not None


class CartUser:
    """The simulated shopper of one E_CART episode."""

    def __init__(self, goal: CartGoal, products: dict[str, Product], difficulty: Difficulty,
                 seed: int, disclosure: Disclosure) -> None:
        self.goal = goal
        self.products = products
        self.difficulty = difficulty
        self.seed = seed
        self._disclosure = disclosure
        self._replies = 0
        protect = {t.variant_value for t in goal.targets if t.variant_value}
        for p in products.values():
            protect.update(v.value for v in p.variants)
        self._protect = frozenset(protect)

    # ---------------------------------------------------------------- API
    def disclosure(self) -> dict[str, bool]:
        return dict(self._disclosure.told)

    def opening(self) -> UserMessage:
        rng = seeded_rng(self.seed, "cart-user", "opening")
        items = [self._item_phrase(t, rng) for t in self.goal.targets]
        if len(items) > 1:
            listing = "; ".join(items[:-1]) + "; and " + items[-1]
        else:
            listing = items[0]
        text = render("{greeting} {intro} {listing}. {closing}", greeting=rng.choice(GREETINGS),
                      intro=rng.choice(INTROS), listing=listing, closing=rng.choice(CLOSINGS))
        return UserMessage(self._noisy(text, rng), UserAct.OPENING)

    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        self._replies += 1
        rng = seeded_rng(self.seed, "cart-user", "reply", self._replies)
        if last_turn:
            text = rng.choice(("This is taking too long, I'll shop somewhere else. Bye.",
                               "Sorry, I have to go. I'll order another time."))
            return UserMessage(text, UserAct.QUIT, ends_episode=True)
        text_l = agent_text.lower()
        asked = "?" in agent_text
        if asked:
            revealed, answers = self._answer_question(text_l)
            if revealed:
                return UserMessage(self._noisy(" ".join(answers), rng), UserAct.CLARIFY, tuple(revealed))
            wrong_proposal = self._wrong_proposal(text_l, world)
            if wrong_proposal:
                return self._correction([wrong_proposal], rng)
        problems, missing = self._cart_problems(world)
        if problems:
            return self._correction(problems + missing, rng)
        if missing:
            names = ", ".join(f"the {t.short_name}" for t in missing)
            if world.cart:
                return self._correction([render("You haven't added {names} yet.", names=names)], rng)
            text = render("Please go ahead and add {names}.", names=names)
            return UserMessage(self._noisy(text, rng), UserAct.CONTINUE)
        text = rng.choice(("That's everything, thanks. Please check out.",
                           "Yes, that's all I need. Please place the order.",
                           "Looks right to me. Go ahead and check out."))
        return UserMessage(self._noisy(text, rng), UserAct.CONFIRM)

    # ------------------------------------------------------------ opening
    def _item_phrase(self, t: CartTarget, rng) -> str:  # noqa: ANN001
        qty_told = self._disclosure.is_told(t.quantity_slot)
        var_told = self._disclosure.is_told(t.variant_slot)
        if t.quantity > 1 and not qty_told:
            head = rng.choice(("a few of the {name}", "some of the {name}", "several of the {name}"))
        elif t.quantity > 1:
            head = rng.choice(("{qty} x {name}", "{qty} of the {name}", "{qty} units of the {name}"))
        else:
            head = rng.choice(("the {name}", "one {name}", "a {name}"))
        tail = ""
        if t.variant_required and var_told:
            tail = rng.choice((" in {value}", " ({label}: {value})", ", the {value} one"))
        elif t.variant_required:
            tail = rng.choice((" (I need a specific {label})", ", in a particular {label}",
                               " - the right {label} matters"))
        return render(head + tail, name=t.short_name, qty=t.quantity, value=t.variant_value,
                      label=attribute_label(t.variant_attribute))

    def _noisy(self, text: str, rng) -> str:  # noqa: ANN001
        return add_noise(text, self.difficulty.p_noise, rng, self._protect)

    # ---------------------------------------------------------- questions
    def _mentions(self, t: CartTarget, text_l: str, words: set[str]) -> bool:
        p = self.products[t.product_id]
        name_words = {w for w in _words(t.short_name) if len(w) > 3}
        return bool(name_words & words) or p.id.lower() in text_l

    def _answer_question(self, text_l: str) -> tuple[list[str], list[str]]:
        words = _words(text_l)
        hidden = [t for t in self.goal.targets
                  if not self._disclosure.is_told(t.variant_slot) or not self._disclosure.is_told(t.quantity_slot)]
        if not hidden:
            return [], []
        named = [t for t in hidden if self._mentions(t, text_l, words)]
        scope = named or hidden
        asks_qty = any(_says(text_l, w) for w in QUANTITY_WORDS)
        revealed: list[str] = []
        answers: list[str] = []
        for t in scope:
            p = self.products[t.product_id]
            values = {v.value.lower() for v in p.variants}
            keywords = ATTRIBUTE_KEYWORDS.get(t.variant_attribute or "", ()) + GENERIC_VARIANT_WORDS
            asks_var = any(_says(text_l, k) for k in keywords) or any(_says(text_l, v) for v in values)
            specific = asks_qty or asks_var
            if not self._disclosure.is_told(t.variant_slot) and (asks_var or not specific):
                self._disclosure.reveal(t.variant_slot)
                revealed.append(t.variant_slot)
                answers.append(render("For the {name}, I need the {value} one.", name=t.short_name,
                                      value=t.variant_value))
            if not self._disclosure.is_told(t.quantity_slot) and (asks_qty or not specific):
                self._disclosure.reveal(t.quantity_slot)
                revealed.append(t.quantity_slot)
                answers.append(render("I need {qty} of the {name}.", qty=t.quantity, name=t.short_name))
        return revealed, answers

    def _wrong_proposal(self, text_l: str, world: World) -> str | None:
        """The agent proposes a variant the user does not want ("Shall I add the Lightning one?").

        Only for items not already right in the cart, and only when the agent names
        another of the product's variant values (as whole words) and not the wanted one.
        """
        words = _words(text_l)
        have = self.goal.cart_units(world.cart)
        for t in self.goal.targets:
            if not t.variant_required or have.get(t.key) or not self._mentions(t, text_l, words):
                continue
            if _says(text_l, t.variant_value):
                continue
            p = self.products[t.product_id]
            if any(_says(text_l, v.value) for v in p.variants if v.value != t.variant_value):
                self._disclosure.reveal(t.variant_slot)
                return render("No, for the {name} I need the {value} one.", name=t.short_name,
                              value=t.variant_value)
        return None

    # --------------------------------------------------------- corrections
    def _cart_problems(self, world: World) -> tuple[list[str], list[CartTarget]]:
        problems: list[str] = []
        missing: list[CartTarget] = []
        have = self.goal.cart_units(world.cart)
        for t in self.goal.targets:
            lines = [ln for ln in world.cart if ln.product_id == t.product_id]
            if not lines:
                missing.append(t)
                continue
            p = self.products[t.product_id]
            for ln in lines:
                if self.goal.line_key(ln) != t.key:
                    v = p.variant(ln.variant_id) if ln.variant_id else None
                    self._disclosure.reveal(t.variant_slot)
                    problems.append(render("The {name} in my cart is the {wrong} one, but I need {value}.",
                                           name=t.short_name, wrong=v.value if v else "wrong",
                                           value=t.variant_value))
            n = have.get(t.key, 0)
            if 0 < n != t.quantity:
                self._disclosure.reveal(t.quantity_slot)
                problems.append(render("I need {qty} of the {name}, not {n}.", qty=t.quantity,
                                       name=t.short_name, n=n))
        for ln in world.cart:
            if self.goal.target(ln.product_id) is None:
                p = world.product(ln.product_id)
                problems.append(render("I didn't ask for the {title}; please remove it.",
                                       title=p.title if p else ln.product_id))
        return problems, missing

    def _correction(self, problems: list[str], rng) -> UserMessage:  # noqa: ANN001
        text = " ".join(p if isinstance(p, str) else render("You haven't added the {name} yet.",
                                                             name=p.short_name) for p in problems)
        return UserMessage(self._noisy(text, rng), UserAct.CORRECT)
