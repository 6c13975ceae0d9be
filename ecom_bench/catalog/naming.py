"""Product short names: what a shopper calls a product ("VoltEdge PowerPort Wall Charger").

Titles follow the marketplace convention "{name}, {specs}, {feature}": the part before
the first separator is the product's name, the rest is detail. Simulated users refer
to products by this short name, so the synthetic catalogue keeps it unique; loaders of
real catalogues use the same rule (uniqueness is then not guaranteed).

`product_noun` says what a shopper calls a product's *kind* ("mouse" for the category
"Mice", "a pair of jeans", "some cookware"), with the article and verb agreement it takes,
so that customer text reads right on any catalogue's category names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ecom_bench.catalog.models import Product

#: Words kept when a title has no separator (or an implausibly long head).
FALLBACK_WORDS = 6
#: A head longer than this many words is not a name but a run-on title.
MAX_HEAD_WORDS = 12

# The first comma, or a spaced dash / pipe, or an opening bracket ends the name.
_SEPARATOR = re.compile(r",|\s[-\u2013\u2014|]\s|\s\(|\s\[")


def short_name_from_title(title: str) -> str:
    """The text before the first separator, stripped; for titles without one (or whose
    head runs past MAX_HEAD_WORDS words), the first FALLBACK_WORDS words."""
    title = " ".join(str(title).split())
    m = _SEPARATOR.search(title)
    if m is not None:
        head = title[: m.start()].strip()
        if head and len(head.split()) <= MAX_HEAD_WORDS:
            return head
    words = [w for w in re.split(r"[\s,]+", title) if w]
    return " ".join(words[:FALLBACK_WORDS])


def short_name(product: Product) -> str:
    """A product's short name (see `short_name_from_title`)."""
    return short_name_from_title(product.title)


# ------------------------------------------------------------------ category nouns
#: Head words sold in pairs and always plural: "a pair of jeans", "the jeans are".
PAIR_NOUNS = frozenset({
    "jeans", "pants", "trousers", "shorts", "leggings", "tights", "pajamas", "overalls", "chinos", "joggers",
    "sweatpants", "slacks", "sunglasses", "glasses", "eyeglasses", "goggles", "headphones", "earphones",
    "earbuds", "headsets", "earmuffs", "shoes", "sneakers", "boots", "sandals", "slippers", "loafers", "heels",
    "flats", "clogs", "socks", "gloves", "mittens", "scissors", "shears", "pliers", "tongs", "tweezers",
    "binoculars", "skis", "skates", "cleats", "trainers",
})
#: Head words that take no article and no plural: "some cookware", "the luggage is".
MASS_NOUNS = frozenset({
    "food", "coffee", "tea", "oil", "pasta", "granola", "parfum", "sunscreen", "shampoo", "wash", "moisturizer",
    "litter", "luggage", "bedding", "jewelry", "jewellery", "furniture", "clothing", "apparel", "equipment",
    "software", "lighting", "decor", "storage", "makeup", "skincare", "haircare", "cereal", "rice", "flour",
    "sugar", "candy", "chocolate", "soap", "lotion", "conditioner", "toothpaste", "detergent", "paint", "glue",
    "yarn", "fabric", "cologne", "perfume", "music", "hardware", "seating", "audio", "gear", "cutlery",
    "flatware", "dinnerware", "cookware", "bakeware", "drinkware", "glassware", "silverware", "tableware",
    "footwear", "eyewear", "outerwear", "sleepwear", "swimwear", "underwear", "activewear", "loungewear",
})


@dataclass(frozen=True)
class Noun:
    """How a shopper names a product's kind, with the agreement it takes.

    kind: "count" (a mouse / two mice), "pair" (a pair of jeans; plural verb), "plural"
    (some gel pens: sold as a set; plural verb) or "mass" (some cookware; singular verb).
    `one` is the word for a single item ("mouse", "jeans", "gel pens", "cookware"),
    `many` the plural ("mice"; the same word for the other kinds).
    """

    one: str
    many: str
    kind: str

    @property
    def plural(self) -> bool:
        """Whether the noun takes a plural verb ("the jeans are", "the mouse is")."""
        return self.kind in ("pair", "plural")

    @property
    def be(self) -> str:
        return "are" if self.plural else "is"

    @property
    def it(self) -> str:
        return "them" if self.plural else "it"

    def a(self, adjective: str = "") -> str:
        """"a mouse", "a new mouse", "an air fryer", "a pair of jeans", "some new gel pens", "some cookware"."""
        head = f"{adjective} {self.one}".strip()
        if self.kind == "count":
            return _article(head)
        if self.kind == "pair":
            return f"{_article(adjective) + ' ' if adjective else 'a '}pair of {self.one}"
        return f"some {head}"

    def count(self, n: int) -> str:
        """"1 mouse", "2 mice", "2 pairs of jeans", "3 packs of gel pens", "2 units of cookware"."""
        if self.kind == "count":
            return f"{n} {self.one if n == 1 else self.many}"
        unit = {"pair": "pair", "plural": "pack"}.get(self.kind, "unit")
        return f"{n} {unit if n == 1 else unit + 's'} of {self.one}"


def _inflect() -> Any:
    """inflect's engine, imported without typeguard's instrumentation.

    inflect wraps its methods in typeguard's `@typechecked`, which re-parses inflect's own
    source at import: 1.7 s in every process that generates an episode (measured), for
    argument-type checks on strings we already pass. Under `python -O` typeguard skips the
    instrumentation itself; we do the same for this one import.
    """
    import importlib
    import sys

    if "inflect" in sys.modules:
        return sys.modules["inflect"].engine()
    import typeguard

    instrument = typeguard.typechecked
    typeguard.typechecked = lambda target=None, **_: target if target is not None else (lambda t: t)
    try:
        return importlib.import_module("inflect").engine()
    finally:
        typeguard.typechecked = instrument


_ENGINE: Any = None


def _engine() -> Any:
    global _ENGINE
    if _ENGINE is None:
        _ENGINE = _inflect()
    return _ENGINE


@lru_cache(maxsize=4096)
def _article(phrase: str) -> str:
    """"a mouse", "an air fryer", "a USB hub", "an HDMI cable" (inflect's a/an rules)."""
    return _engine().a(phrase)


def indefinite(phrase: str) -> str:
    """`phrase` with "a" or "an": "an Anker PowerCore", "a Logitech M185 Wireless Mouse"."""
    return _article(" ".join(phrase.split()))


def _shopper_case(text: str) -> str:
    """Lower-case, except acronyms and codes ("USB", "AA", "4K") that shoppers write as they are."""
    return " ".join(w if (w.isupper() and len(w) > 1) or any(c.isdigit() for c in w) else w.lower()
                    for w in text.split())


@lru_cache(maxsize=4096)
def noun_from(name: str, *, title_noun: bool = False) -> Noun:
    """The Noun of a category name ("Mice", "Kitchen Knives", "Jeans", "Cookware") or, with
    `title_noun`, of a synthetic leaf's title noun ("Wall Charger", "Gel Pens": singular
    unless it ends in "s").

    Singular/plural forms come from `inflect`; whether a head word is a pair noun or a
    mass noun (which no inflection library knows) from PAIR_NOUNS / MASS_NOUNS.
    """
    phrase = _shopper_case(" ".join(str(name).replace("&", "and").split())) or "item"
    *lead, head = phrase.split()
    stem = " ".join(lead)

    def joined(word: str) -> str:
        return f"{stem} {word}".strip()

    low = head.lower()
    if low in PAIR_NOUNS:
        return Noun(phrase, phrase, "pair")
    if low in MASS_NOUNS or low.endswith("ware"):
        return Noun(phrase, phrase, "mass")
    if not head.islower():  # an acronym or code as the head ("Cables USB", "4K"): say it as written
        return Noun(phrase, phrase, "count")
    eng = _engine()
    if title_noun:
        if low.endswith("s"):
            return Noun(phrase, phrase, "plural")
        return Noun(phrase, joined(eng.plural_noun(head)), "count")
    single = eng.singular_noun(head)
    if single and single != head and eng.plural_noun(single) == head:  # a plural: "mice" -> "mouse"
        return Noun(joined(single), phrase, "count")
    if single == head:  # uninflected ("series", "luggage"): no article
        return Noun(phrase, phrase, "mass")
    return Noun(phrase, joined(eng.plural_noun(head)), "count")  # already singular: "Coffee Maker"


def product_noun(product: Product) -> Noun:
    """The Noun of a product's kind: its taxonomy leaf's title noun, else its leaf category's name."""
    from ecom_bench.catalog.taxonomy import LEAF_BY_PATH

    leaf = LEAF_BY_PATH.get(tuple(product.category))
    if leaf is not None:
        return noun_from(leaf.noun, title_noun=True)
    return noun_from(product.leaf_category or "item")


@lru_cache(maxsize=1024)
def _plural_word(word: str) -> str:
    return _engine().plural_noun(word)


def counted(n: float, word: str) -> str:
    """"1 day", "2 days", "1.5 days": a number with its (singular) noun in the agreeing form."""
    num = f"{n:g}" if isinstance(n, float) else str(n)
    return f"{num} {word if n == 1 else _plural_word(word)}"
