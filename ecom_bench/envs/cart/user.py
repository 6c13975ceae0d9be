"""E_CART's template customer: names the items, withholds details, answers, corrects, confirms.

The customer reads the agent's words with `users.understanding` (any request for
information is answered; topic words only narrow which withheld detail it gets) and
sees the cart as a shopper sees the cart page. Its feedback is that of a real shopper,
not an oracle:

* **A cart holding things never asked for.** Several of them ("a mess") get one
  general objection ("I didn't ask for most of these; please only add what I listed"):
  nothing is itemised, neither what to remove nor which lines were right, so carting
  the whole visit history teaches nothing. A single stray item is named. Either costs
  patience (`Customer.count_mistake`): the second such objection is the customer leaving.
  After a mess the customer no longer reads its list out again ("please just add what
  I asked for"): it already gave it.
* **Honest mistakes on what was asked for** (a wrong variant or quantity of a listed
  item, listed items not added yet) are pointed at, from the same matching rule as the
  verifier (`goal.line_key`), so the user never complains about a line the verifier
  accepts; they cost no patience. The customer points at the wrong *line* and the kind
  of error ("that's not the size I asked for") but never restates a value or names what
  is missing: it said those in its request, and a withheld one is given when asked. A
  correction that read the answer out ("I need S", "you haven't added the X yet") let
  an agent that never read the request fill the cart from the customer's replies
  (measured: 8 of 25 at d = 3, carting one visited item per turn).
* **Acts.** CLARIFY only when the reply disclosed a withheld detail; CONFIRM only for
  a cart the customer checked and found exactly right; everything else is CONTINUE or
  CORRECT, so padding messages with questions earns nothing (`UserMessage.excused`).
* **Names.** Each item is asked for by a name no viewed look-alike's title also holds
  (`catalog.naming.distinct_name`, chosen by the generator), and the agent's words are read
  phrase by phrase as the product each phrase names longest (`catalog.naming.NameIndex`):
  the full title of a wanted item is that item, even where it begins with a look-alike's name.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import ClassVar

from ecom_bench.catalog import Product
from ecom_bench.catalog.lookups import catalog_lookups
from ecom_bench.catalog.naming import (
    NameIndex,
    a_named,
    agreement,
    name_forms,
    product_noun,
    short_name,
    without_mentions,
)
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.cart.goal import CartGoal, CartTarget
from ecom_bench.envs.cart.phrases import PHRASES
from ecom_bench.users import UserAct
from ecom_bench.users.customer import Customer
from ecom_bench.users.messages import Disclosure
from ecom_bench.users.phrases import PhraseTable
from ecom_bench.users.phrasing import CustomerDecision, Phrase, Speech
from ecom_bench.users.understanding import is_request, says, sentences, topics_asked, words
from ecom_bench.world import World

ATTRIBUTE_LABELS = {"connector_type": "connector", "item_form": "form", "pack_size": "pack size",
                    "screen_size": "screen size"}
#: Words that point a question at a variant rather than a quantity (they only narrow the answer).
ATTRIBUTE_KEYWORDS = {
    "connector_type": ("connector", "plug", "port", "cable", "usb", "lightning"),
    "size": ("size", "fit", "small", "medium", "large"),
    "color": ("color", "colour", "shade"),
    "material": ("material", "made of", "filter", "finish"),
    "item_form": ("form", "format"),
    "wattage": ("watt", "wattage", "power"),
    "capacity": ("capacity", "volume", "storage"),
    "scent": ("scent", "fragrance", "smell"),
    "flavor": ("flavor", "flavour", "taste"),
    "pack_size": ("pack", "count"),
    "screen_size": ("screen", "inch", "display"),
}
GENERIC_VARIANT_WORDS = ("variant", "version", "option", "model", "kind", "style", "type", "finish", "which one")
QUANTITY_WORDS = ("how many", "quantity", "quantities", "amount", "how much", "units", "number of", "pieces", "more than one", "just one")

#: What could be a product or variant id in the agent's words: a run of id characters holding a
#: digit (`_id_tokens`). One pattern "run with a digit in it" backtracks over every start of a
#: digit-free run: quadratic in a long token ("xxxx..." of 100k characters took minutes).
_ID_RUN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*")
_DIGIT = re.compile(r"[0-9]")


def _id_tokens(text: str) -> list[str]:
    return [run for run in _ID_RUN.findall(text) if _DIGIT.search(run)]


def _say(*parts: Phrase | None) -> Speech:
    """The sentences said, one after another (None: nothing to say there)."""
    return Speech(tuple(p for p in parts if p is not None))


def attribute_label(attribute: str | None) -> str:
    if attribute is None:
        return "option"
    return ATTRIBUTE_LABELS.get(attribute, attribute.replace("_", " "))


class CartUser(Customer):
    """The simulated shopper of one E_CART episode."""

    rng_prefix: ClassVar[tuple[str, ...]] = ("cart-user",)
    phrases: ClassVar[PhraseTable] = {**Customer.phrases, **PHRASES}

    def __init__(self, goal: CartGoal, products: dict[str, Product], difficulty: Difficulty,
                 seed: int, disclosure: Disclosure) -> None:
        # the values that matter are never noised: variant values and the names that identify the items
        protect = {t.variant_value for t in goal.targets if t.variant_value} | {t.short_name for t in goal.targets}
        for p in products.values():
            protect.update(v.value for v in p.variants)
        super().__init__(difficulty, seed, disclosure, protect)
        self.goal = goal
        self.products = products
        self._saw_mess = False  # once objected to a mess, the customer does not read its list out again
        self._wrong_tries: dict[str, set[tuple]] = {}  # wanted product -> the wrong cart states corrected
        self._names: NameIndex | None = None  # the viewed products' names, read in the agent's messages
        self._viewed_names: dict[str, str] = {}

    def slot_value(self, slot: str) -> str | None:
        for t in self.goal.targets:
            if slot == t.quantity_slot:
                return str(t.quantity)
            if slot == t.variant_slot:
                return t.variant_value
        return None

    # ----------------------------------------------------------- decisions
    def decide_opening(self) -> CustomerDecision:
        rng = self.rng("opening")
        items = [self._item_phrase(t, rng) for t in self.goal.targets]
        listing = (self.line("listing", rest=Speech(tuple(items[:-1]), sep="; "), last=items[-1])
                   if len(items) > 1 else items[0])
        text = self.line("opening", greeting=self.pick(rng, "greeting"), intro=self.pick(rng, "intro"),
                         listing=listing, closing=self.pick(rng, "closing"))
        told = [s for t in self.goal.targets for s in (t.quantity_slot, t.variant_slot)
                if self.told(s) and (s == t.quantity_slot and t.quantity > 1 or s == t.variant_slot and t.variant_required)]
        return self.decision(UserAct.OPENING, text, rng, convey=self.facts(told))

    def decide_reply(self, agent_text: str, world: World, last_turn: bool) -> CustomerDecision:
        rng = self.next_reply_rng()
        if last_turn:
            return self.goodbye(rng)
        self._read_names(world)
        strays = self._strays(world)
        if strays:
            return self._object_to_strays(strays, world, rng)
        others = self._named_others(agent_text, world)
        if others:
            return self._object_to_others(others, world, rng)
        if is_request(agent_text):
            revealed = self.to_disclose(self._asked_slots(agent_text))
            if revealed:
                return self.decision(UserAct.CLARIFY, _say(*(self._answer(slot) for slot in revealed)), rng, revealed)
            if (wrong := self._wrong_proposal(agent_text.lower(), world)) is not None:
                # a variant other than the one asked for costs patience, as it does in the cart:
                # free objections let an agent search the variants without reading the request
                if (goodbye := self.count_mistake(rng)) is not None:
                    return goodbye
                return self.decision(UserAct.CORRECT, wrong, rng)
            if free := self._free_variants_asked(agent_text):
                return self.decision(UserAct.CONTINUE, _say(*(
                    self.line("any_variant", name=t.short_name, label=attribute_label(t.variant_attribute))
                    for t in free)), rng)
        # a question about what they already said ("How many of the pens do you need?") is answered
        # again, before any correction: a person repeats their list; nothing withheld is in it
        again_slots = self._told_asked(agent_text) if is_request(agent_text) else []
        again = [self._answer(slot) for slot in again_slots]
        said = [(slot, v) for slot in again_slots if (v := self.slot_value(slot)) is not None]
        problems, missing = self._cart_problems(world)
        if problems and self._another_wrong_try(world) and (goodbye := self.count_mistake(rng)) is not None:
            return goodbye
        if problems or (missing and world.cart):
            return self.decision(UserAct.CORRECT, _say(*again, *problems, self._missing_sentence(missing)), rng,
                                 convey=said)
        if missing:
            return self.decision(UserAct.CONTINUE, _say(*again, self._missing_sentence(missing, first=True)), rng,
                                 convey=said)
        return self.decision(UserAct.CONFIRM, _say(*again, self.pick(rng, "confirm")), rng, convey=said)

    # ------------------------------------------------------------ opening
    def _item_phrase(self, t: CartTarget, rng: random.Random) -> Phrase:
        qty_told = self.told(t.quantity_slot)
        var_told = self.told(t.variant_slot)
        noun = product_noun(self.products[t.product_id])
        if t.quantity > 1 and not qty_told:
            head = self.pick(rng, "some_of", name=t.short_name)
        elif t.quantity > 1:
            head = self.pick(rng, "count_of", name=t.short_name, qty=t.quantity)
        else:
            head = self.pick(rng, "one_of", name=t.short_name, a_name=a_named(t.short_name, noun),
                             one_name=a_named(t.short_name, noun, one=True))
        label = attribute_label(t.variant_attribute)
        tail: Phrase | str = ""
        if t.variant_required and var_told:
            tail = self.pick(rng, "in_variant", value=t.variant_value, label=label)
        elif t.variant_required:
            tail = self.pick(rng, "in_some_variant", label=label)
        return self.line("item", head=head, tail=tail)

    # ---------------------------------------------------------- questions
    def _mentions(self, t: CartTarget, text_l: str, said: set[str]) -> bool:
        name_words = {w for w in words(t.short_name) if len(w) >= 3}  # "the oil", "the set"
        return bool(name_words & said) or t.product_id.lower() in text_l

    def _named_in_full(self, t: CartTarget, text_l: str) -> bool:
        """The agent names the item by one of its names (the customer's, its title or a cut of it
        that no viewed look-alike's longer name takes), or its id."""
        if t.product_id.lower() in text_l:
            return True
        assert self._names is not None, "reply() reads the names first"
        return any(t.product_id in m.ids for m in self._names.mentions(text_l))

    def _slot_cues(self, t: CartTarget) -> dict[str, tuple[str, ...]]:
        values = tuple(v.value for v in self.products[t.product_id].variants if len(v.value) > 1)
        label = (attribute_label(t.variant_attribute),) if t.variant_attribute else ()  # "edition"
        variant = ATTRIBUTE_KEYWORDS.get(t.variant_attribute or "", ()) + label + GENERIC_VARIANT_WORDS + values
        return {t.variant_slot: variant, t.quantity_slot: QUANTITY_WORDS}

    def _asked_slots(self, text: str) -> set[str]:
        """The slots each request sentence asks about; a request naming no withheld one asks for all.

        Item names narrow to those items, variant/quantity words to that kind of detail;
        neither decides *whether* the customer answers (`Customer.to_disclose`).
        """
        hidden = set(self.withheld())
        asked: set[str] = set()
        for sentence in [s for s in sentences(text) if is_request(s)] or [text]:
            low, said = sentence.lower(), words(sentence)
            named = [t for t in self.goal.targets if self._mentions(t, low, said)] or list(self.goal.targets)
            slots: set[str] = set()
            for t in named:
                cues = self._slot_cues(t)
                slots.update(topics_asked(sentence, cues) or cues)
            asked |= slots if slots & hidden else hidden
        return asked

    def _named_items(self, sentence_l: str, text_l: str) -> list[CartTarget]:
        """The items a question is about: those it names in full, else those the message names in
        full ("The sunscreen comes in Gel or Lotion. Which one do you need?"). Only full names:
        answering for an item named by a word would name it, and single words of many viewed
        products told wanted ones apart."""
        return ([t for t in self.goal.targets if self._named_in_full(t, sentence_l)]
                or [t for t in self.goal.targets if self._named_in_full(t, text_l)])

    def _told_asked(self, text: str) -> list[str]:
        """The told quantities and required variants that a request sentence asks about by their cues,
        for the items it names in full (a word of a name, or no name, restates nothing: read back to
        an agent that never read the request, the list would be the request itself)."""
        out: list[str] = []
        for sentence in (s for s in sentences(text) if is_request(s)):
            for t in self._named_items(sentence.lower(), text.lower()):
                for slot in topics_asked(sentence, self._slot_cues(t)):
                    if self.told(slot) and (slot == t.quantity_slot or t.variant_required) and slot not in out:
                        out.append(slot)
        return out

    def _free_variants_asked(self, text: str) -> list[CartTarget]:
        """Items whose variant the agent asks about although any one will do ("Which piece count
        for the puzzle?"): the tools make it pick one, so the customer says any is fine (it used
        to ignore the question and repeat the list)."""
        out: list[CartTarget] = []
        for sentence in [s for s in sentences(text) if is_request(s)]:
            for t in self._named_items(sentence.lower(), text.lower()):
                if (not t.variant_required and t.variant_attribute and t not in out
                        and t.variant_slot in topics_asked(sentence, self._slot_cues(t))):
                    out.append(t)
        return out

    def _answer(self, slot: str) -> Phrase:
        t = next(t for t in self.goal.targets if slot in (t.variant_slot, t.quantity_slot))
        if slot == t.variant_slot:
            return self.line("which_variant", name=t.short_name, value=t.variant_value)
        return self.line("how_many", qty=t.quantity, name=t.short_name)

    def _wrong_proposal(self, text_l: str, world: World) -> Phrase | None:
        """The agent proposes a variant the user does not want ("Shall I add the Lightning one?").

        Only for items not in the cart yet, and only when the agent names
        another of the product's variant values (as whole words) and not the wanted one.
        """
        in_cart = {ln.product_id for ln in world.cart}
        for t in self.goal.targets:
            # an item already in the cart is the cart correction's (a first slip is free there,
            # also when the agent's summary names the wrong variant it added)
            if not t.variant_required or t.product_id in in_cart or not self._named_in_full(t, text_l):
                continue
            if t.variant_value is None or says(text_l, t.variant_value):
                continue
            p = self.products[t.product_id]
            if any(says(text_l, v.value) for v in p.variants if v.value != t.variant_value):
                return self.line("not_that_variant", name=t.short_name, label=attribute_label(t.variant_attribute),
                                 want=self._want(t.variant_slot))
        return None

    # --------------------------------------------------------- corrections
    def _strays(self, world: World) -> list[str]:
        """Products in the cart the customer never asked for, in cart order, each once."""
        return list(dict.fromkeys(ln.product_id for ln in world.cart if self.goal.target(ln.product_id) is None))

    def _object_to_strays(self, strays: list[str], world: World, rng: random.Random) -> CustomerDecision:
        """One stray is named (with the other corrections); several get one general objection.

        Either costs patience. A mess itemises nothing: not what to remove, not which
        lines were right, not what is missing.
        """
        if (goodbye := self.count_mistake(rng)) is not None:
            return goodbye
        if len(strays) > 1:
            self._saw_mess = True
            return self.decision(UserAct.CORRECT, self.pick(rng, "mess"), rng)
        p = world.product(strays[0])
        text = self.line("stray", title=p.title if p else strays[0])
        problems, missing = self._cart_problems(world)
        return self.decision(UserAct.CORRECT, _say(text, *problems, self._missing_sentence(missing)), rng)

    def _read_names(self, world: World) -> None:
        """Learn the names of the products the customer viewed (and asked for), once."""
        if self._names is not None:
            return
        viewed = [p for r in world.visit_history if (p := world.catalog.get(r.product_id)) is not None]
        products = {p.id: p for p in viewed} | self.products
        forms = {pid: name_forms(p) for pid, p in products.items()}
        for t in self.goal.targets:  # the name the customer gave, also when a generator chose another
            forms[t.product_id] = (*forms[t.product_id], t.short_name)
        self._names = NameIndex(forms)
        self._viewed_names = {p.id: short_name(p) for p in viewed}

    def _named_others(self, text: str, world: World) -> list[str]:
        """Products the message names (by product or variant id, or a viewed product's name) that
        the customer never asked for, each once.

        Each phrase is read as the product it names longest (`NameIndex`), so a wanted item's
        full title is that item even when it begins with a look-alike's name, and a name that
        several viewed products share is taken for the wanted one among them.
        """
        catalog = world.catalog
        index = catalog_lookups(catalog)
        out: list[str] = []
        for token in dict.fromkeys(_id_tokens(text)):
            row = catalog.index_of(token)
            if row is None and len(token) <= catalog.id_width + 8:
                row = index.variant_owner(catalog, token)
            if row is not None and (pid := catalog.id_at(row)) not in out and self.goal.target(pid) is None:
                out.append(pid)
        assert self._names is not None, "reply() reads the names first"
        mentions = self._names.mentions(text)
        wanted = {t.product_id for t in self.goal.targets}
        for m in mentions:
            if not m.ids & wanted:
                out.extend(pid for pid in sorted(m.ids) if pid not in out)
        # or two words of its name that no other name, nor a wanted item's title, has (its brand and
        # line: a pile of every viewed product's name words named them all; "the water bottle"
        # names none)
        said = words(without_mentions(text, mentions))
        names = {**self._viewed_names, **{t.product_id: t.short_name for t in self.goal.targets}}
        seen = Counter(w for name in names.values() for w in set(words(name)))
        for p in self.products.values():
            seen.update(words(p.title))
        for pid, name in self._viewed_names.items():
            if pid in out or pid in wanted:
                continue
            own = {w for w in words(name) if len(w) >= 3 and seen[w] == 1}
            if len(own & said) >= 2:
                out.append(pid)
        return out

    def _object_to_others(self, others: list[str], world: World, rng: random.Random) -> CustomerDecision:
        """The agent asks about or proposes products the customer never asked for.

        One objection, the same whichever and however many they are and whether a wanted item
        is named beside them, and it costs patience as a product in the cart it never asked for
        does. Naming every viewed product at once, or a pile of their name words, drew answers
        or objections for exactly the wanted ones; an objection that named the unwanted one of a
        pair told the other apart; and free objections made asking about one viewed product per
        turn a search (up to 80% success without reading the request). The price: a
        "did you mean A, B or C?" naming products the customer never mentioned costs patience too.
        """
        if (goodbye := self.count_mistake(rng)) is not None:
            return goodbye
        self._saw_mess = True
        return self.decision(UserAct.CORRECT, self.pick(rng, "unasked"), rng)

    def _missing_sentence(self, missing: list[CartTarget], first: bool = False) -> Phrase | None:
        """That something on the list is missing, never which (the request said it)."""
        if not missing:
            return None
        if self._saw_mess:
            return self.alternative("already_listed", self._replies % len(self.alternatives("already_listed")))
        return self.line("missing_first" if first else "missing_some")

    def _cart_problems(self, world: World) -> tuple[list[Phrase], list[CartTarget]]:
        """Corrections of listed items (wrong variant, wrong quantity) and the listed items not in the cart."""
        problems: list[Phrase] = []
        missing: list[CartTarget] = []
        have = self.goal.cart_units(world.cart)
        for t in self.goal.targets:
            lines = [ln for ln in world.cart if ln.product_id == t.product_id]
            if not lines:
                missing.append(t)
                continue
            p = self.products[t.product_id]
            label = attribute_label(t.variant_attribute)
            if len({ln.variant_id for ln in lines}) > 1:  # several variants: which one is right goes unsaid
                problems.append(self.line("several_variants", name=t.short_name, label=label,
                                          want=self._want(t.variant_slot)))
                continue
            for ln in lines:
                if self.goal.line_key(ln) != t.key:
                    v = p.variant(ln.variant_id) if ln.variant_id else None
                    problems.append(self.line("wrong_variant", name=t.short_name,
                                              wrong=v.value if v else self.line("wrong"), label=label,
                                              want=self._want(t.variant_slot),
                                              **agreement(t.short_name, product_noun(p))))
            n = have.get(t.key, 0)
            if 0 < n != t.quantity:
                problems.append(self.line("wrong_quantity", name=t.short_name, want=self._want(t.quantity_slot)))
        return problems, missing

    def _another_wrong_try(self, world: World) -> bool:
        """Whether a wanted item is in the cart wrong again, in a state not corrected before.

        The first wrong variant or count of an item is corrected for free (an honest slip);
        a second different wrong one costs patience, so stepping through variants and counts
        against the corrections cannot find what the request said (a blind agent doing so
        reached twice the success of one that asks plainly)."""
        have = self.goal.cart_units(world.cart)
        again = False
        for t in self.goal.targets:
            mine = [ln for ln in world.cart if ln.product_id == t.product_id]
            if not mine or (have.get(t.key, 0) == t.quantity and all(self.goal.line_key(ln) == t.key for ln in mine)):
                continue
            state = tuple(sorted((ln.variant_id or "", ln.quantity) for ln in mine))
            tried = self._wrong_tries.setdefault(t.product_id, set())
            if state not in tried:
                again |= bool(tried)
                tried.add(state)
        return again

    def _want(self, slot: str) -> Phrase:
        return self.line("asked_for" if self.told(slot) else "need")
