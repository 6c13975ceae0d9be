"""Product names: what a shopper calls a product ("VoltEdge PowerPort Wall Charger").

Titles follow the marketplace convention "{name}, {specs}, {feature}": the part before
the first separator is the product's name, the rest is detail. Real titles often have no
separator ("Lodge 10.25 Inch Cast Iron Pre-Seasoned Skillet Black"): their name ends at
the kind's head noun or before a detail word ("with", "for", ...), never mid-phrase.
Simulated users refer to products by this short name, so the synthetic catalogue keeps it
unique; on a real catalogue look-alikes can share it, and a customer who must tell them
apart says the shortest longer form that is its own (`distinct_name`). `NameIndex` reads
product names back out of an agent's message, each phrase as the product it names longest.

`product_noun` says what a shopper calls a product's *kind* ("mouse" for the category
"Mice", "a pair of jeans", "some cookware"), with the article and verb agreement it takes,
so that customer text reads right on any catalogue's category names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ecom_bench.catalog.models import Product

if TYPE_CHECKING:
    from ecom_bench.catalog.catalog import Catalog

#: A separated head longer than this many words is not a name but a run-on title.
MAX_HEAD_WORDS = 12
#: Words kept from a run-on title in which nothing marks where the name ends.
FALLBACK_WORDS = 6
#: Words that start a title's detail rather than continue its name ("... Skillet with Assist Handle").
DETAIL_WORDS = frozenset({"with", "for", "featuring", "includes", "including", "compatible", "that", "w/",
                          "fits"})
#: Words a name never ends on ("... Computer Mouse for", "... Pot and").
_DANGLING = DETAIL_WORDS | {"and", "or", "&", "+", "the", "a", "an", "of", "in", "on", "by", "to", "x", "-",
                            "/"}
#: Words that stand between a title's name and its detail: a spaced dash or pipe.
_SEPARATOR_WORDS = frozenset({"-", "\u2013", "\u2014", "|"})
_EDGE_PUNCTUATION = " ,;:-|\u2013\u2014"


def _bare(word: str) -> str:
    return word.strip(_EDGE_PUNCTUATION + "()[]\"'.!?").lower()


def _separator_cuts(words: list[str]) -> list[int]:
    """Word counts at which a separator ends the name: after a word ending in ",", ":" or ";",
    before a spaced dash or pipe, before an opening bracket."""
    cuts = []
    for i, w in enumerate(words):
        if w in _SEPARATOR_WORDS or w[:1] in "([":
            cuts.append(i)
        elif w[-1:] in ",:;":
            cuts.append(i + 1)
    return [k for k in cuts if k >= 1]


def _is_head(word: str, heads: frozenset[str]) -> bool:
    """Whether `word` is the kind's head noun, also closed up in a compound ("Coffeemaker")."""
    w = _bare(word)
    return w in heads or any(len(h) >= 4 and w.endswith(h) for h in heads)


def _name_length(words: list[str], heads: frozenset[str]) -> int:
    """How many of a title's leading words name the product.

    The marketplace head (before the first separator) when there is one of at most
    MAX_HEAD_WORDS words. Otherwise the name ends where people stop reading a run-on
    title: after the kind's head noun ("Lodge 12 Inch Cast Iron Skillet" of "... Skillet
    with Assist Handle Black"), else before a detail word ("with", "for", ...) or the end
    when that leaves at most MAX_HEAD_WORDS words, else before the first figure past the
    third word; FALLBACK_WORDS only when nothing marks it.
    """
    cuts = _separator_cuts(words)
    if cuts and cuts[0] <= MAX_HEAD_WORDS:
        return cuts[0]
    end = cuts[0] if cuts else len(words)
    detail = next((i for i in range(2, end) if _bare(words[i]) in DETAIL_WORDS), end)
    head = next((i + 1 for i in range(1, detail) if _is_head(words[i], heads)), None)
    if head is not None:
        return head
    if detail <= MAX_HEAD_WORDS:
        return detail
    figure = next((i for i in range(3, detail) if any(c.isdigit() for c in words[i])), None)
    return figure if figure is not None and figure <= MAX_HEAD_WORDS else FALLBACK_WORDS


def _prefix(words: list[str], k: int) -> str:
    """The first `k` words, without trailing punctuation or a dangling connector ("... Mouse for")."""
    kept = list(words[:k])
    while len(kept) > 1 and _bare(kept[-1]) in _DANGLING:
        kept.pop()
    return " ".join(kept).strip(_EDGE_PUNCTUATION)


@lru_cache(maxsize=16384)
def name_forms_from_title(title: str, noun: Noun | None = None) -> tuple[str, ...]:
    """The ways a shopper can name a product from its title, shortest first: its short name
    (`_name_length`), then each longer cut at a natural boundary (a separator, a detail word,
    another head noun), then the whole title. A name that a look-alike's title also holds
    moves up this ladder (`distinct_name`); a mention of any rung names the product."""
    title = " ".join(str(title).split()).strip(_EDGE_PUNCTUATION)
    words = title.split(" ") if title else []
    if not words:
        return ("",)
    heads = _head_words(noun) if noun is not None else frozenset()
    base = _name_length(words, heads)
    marks = {base, len(words), *_separator_cuts(words)}
    marks.update(i for i in range(2, len(words)) if _bare(words[i]) in DETAIL_WORDS)
    marks.update(i + 1 for i in range(1, len(words)) if _is_head(words[i], heads))
    forms = (_prefix(words, k) for k in sorted(k for k in marks if k >= base))
    return tuple(dict.fromkeys(f for f in forms if f)) or (title,)


def short_name_from_title(title: str, noun: Noun | None = None) -> str:
    """What a shopper calls the product of this title: the first of `name_forms_from_title`.

    `noun` (the product's kind, `product_noun`) lets a title without separators be cut
    after its head noun; without it such a title is cut at a detail word or figure."""
    return name_forms_from_title(title, noun)[0]


def short_name(product: Product) -> str:
    """A product's short name (see `short_name_from_title`)."""
    return short_name_from_title(product.title, product_noun(product))


def name_forms(product: Product) -> tuple[str, ...]:
    """A product's names, shortest first (see `name_forms_from_title`)."""
    return name_forms_from_title(product.title, product_noun(product))


def short_name_at(catalog: Catalog, row: int) -> str:
    """`short_name` of a catalogue row, without making its Product (order listings name ~100)."""
    path = catalog.category_paths[int(catalog.category_codes[row])]
    return short_name_from_title(catalog.title_at(row), category_noun(path))


def distinct_name(product: Product, others: Iterable[str]) -> str:
    """The shortest of the product's names that none of `others` (the titles of the products
    it must be told apart from) also holds.

    "Levi's Men's 505 Regular Fit Jeans" names both the Dark Stonewash and the Rinse
    listings; told apart from each other they are "... Jeans Dark Stonewash" and "... Jeans
    Rinse". A look-alike with the very same title cannot be told apart by name: the full
    title is returned.
    """
    forms = name_forms(product)
    # a title can hold one of the names only if it holds their first word: a cheap first pass
    first = name_tokens(forms[0])[:1]
    rivals = [name_tokens(t) for t in others if first and first[0] in t.lower()]
    for form in forms:
        needle = name_tokens(form)
        if not any(_holds(t, needle) for t in rivals):
            return form
    return forms[-1]


def catalogue_name(catalog: Catalog, product: Product) -> str:
    """The product's name told apart from every other product of its leaf category: how a
    customer names it with nothing else in view, where the agent will look through its kind."""
    import pyarrow as pa
    import pyarrow.compute as pc

    leaf = catalog.leaf_rows.get(product.leaf_category)
    rows = leaf[leaf != catalog.index_of(product.id)] if leaf is not None else None
    if rows is None or not len(rows):
        return name_forms(product)[0]
    first = name_tokens(name_forms(product)[0])[:1]
    if not first:
        return name_forms(product)[0]
    titles = catalog.table.column("title").take(pa.array(rows))
    # a title can hold one of the product's names only if it holds their first word (`distinct_name`)
    near = titles.filter(pc.match_substring(titles, first[0], ignore_case=True))
    return distinct_name(product, near.to_pylist())


# ------------------------------------------------------------------ names in text
#: A word of a product name as matched in text: "10.25", "pre-seasoned", "levi's", "2.4ghz".
_NAME_TOKEN = re.compile(r"[a-z0-9]+(?:['./+\-][a-z0-9]+)*")


def _tokens_with_spans(text: str) -> list[re.Match[str]]:
    return list(_NAME_TOKEN.finditer(text.lower().replace("\u2019", "'")))


def _key(token: str) -> str:
    """A word as names are compared: without a possessive or plural "s" ("chargers", "levi's")."""
    if token.endswith("'s"):
        return token[:-2]
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def name_tokens(text: str) -> tuple[str, ...]:
    """The words of a name or message as names are matched: lower-cased, whole words, without
    a plural or possessive "s"."""
    return tuple(_key(m.group(0)) for m in _tokens_with_spans(text))


def _holds(hay: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i:i + n] == needle for i in range(len(hay) - n + 1))


@dataclass(frozen=True)
class Mention:
    """A phrase of a message that names products: its character span and the products
    whose name it is (several only when they share that exact name)."""

    start: int
    end: int
    ids: frozenset[str]


class NameIndex:
    """Which of a set of products a message names, by any of their names (`name_forms`).

    Each phrase is read as the *longest* name it matches: the full title of the "Lodge
    10.25 Inch Cast Iron Pre-Seasoned Skillet Black" names that skillet, not the
    look-alike whose shorter name "Lodge 10.25 Inch Cast Iron Pre-Seasoned Skillet" it
    begins with. Matching is on whole words (`name_tokens`: "the Acme Wall Chargers" names the
    "Acme Wall Charger").
    """

    def __init__(self, forms: Mapping[str, Iterable[str]]) -> None:
        table: dict[tuple[str, ...], set[str]] = {}
        for pid, names in forms.items():
            for name in names:
                if toks := name_tokens(name):
                    table.setdefault(toks, set()).add(pid)
        self._table = {toks: frozenset(ids) for toks, ids in table.items()}
        self._lengths = sorted({len(t) for t in self._table}, reverse=True)

    @classmethod
    def of(cls, products: Iterable[Product]) -> NameIndex:
        return cls({p.id: name_forms(p) for p in products})

    def mentions(self, text: str) -> list[Mention]:
        """The non-overlapping longest name phrases of `text`, in text order."""
        spans = _tokens_with_spans(text)
        toks = [_key(m.group(0)) for m in spans]
        found = [(n, i) for n in self._lengths for i in range(len(toks) - n + 1)
                 if tuple(toks[i:i + n]) in self._table]
        taken = [False] * len(toks)
        out = []
        for n, i in sorted(found, key=lambda f: (-f[0], f[1])):
            if any(taken[i:i + n]):
                continue
            taken[i:i + n] = [True] * n
            out.append(Mention(spans[i].start(), spans[i + n - 1].end(), self._table[tuple(toks[i:i + n])]))
        return sorted(out, key=lambda m: m.start)


def without_mentions(text: str, mentions: Iterable[Mention]) -> str:
    """`text` with the mentioned phrases blanked out (what else the message says)."""
    chars = list(text)
    for m in mentions:
        chars[m.start:m.end] = " " * (m.end - m.start)
    return "".join(chars)


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
#: Nouns whose plural "-ies" comes from "-ie", not "-y" (inflect reads "hoodies" as "hoody").
IE_NOUNS = frozenset({
    "hoodie", "cookie", "beanie", "brownie", "smoothie", "movie", "pie", "tie", "bootie", "onesie", "selfie",
    "rookie", "calorie", "lingerie", "goalie", "coolie", "necktie", "bowtie", "zombie", "sweetie", "veggie",
    "auntie", "birdie", "genie", "hippie", "newbie", "prairie", "doggie",
})
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
    # a pass-through stand-in for the decorator (restored below), not its overloaded signature
    typeguard.typechecked = lambda target=None, **_: target if target is not None else (lambda t: t)  # type: ignore[assignment]
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
    if low.endswith("ies") and low[:-1] in IE_NOUNS:  # "hoodies" -> "hoodie", not "hoody"
        single = head[:-1]
    if single and single != head and eng.plural_noun(single) == head:  # a plural: "mice" -> "mouse"
        return Noun(joined(single), phrase, "count")
    if single == head:  # uninflected ("series", "luggage"): no article
        return Noun(phrase, phrase, "mass")
    return Noun(phrase, joined(eng.plural_noun(head)), "count")  # already singular: "Coffee Maker"


def category_noun(category: tuple[str, ...]) -> Noun:
    """The Noun of a category path's kind: its taxonomy leaf's title noun, else its leaf's name."""
    from ecom_bench.catalog.taxonomy import LEAF_BY_PATH

    leaf = LEAF_BY_PATH.get(tuple(category))
    if leaf is not None:
        return noun_from(leaf.noun, title_noun=True)
    return noun_from(category[-1] if category else "item")


def product_noun(product: Product) -> Noun:
    """The Noun of a product's kind (`category_noun` of its category path)."""
    return category_noun(tuple(product.category))


@lru_cache(maxsize=1024)
def _head_words(noun: Noun) -> frozenset[str]:
    """The head word of a kind, singular and plural ("knife", "knives"; "jeans", "jean")."""
    heads = {noun.one.split()[-1].lower(), noun.many.split()[-1].lower()} - {""}
    eng = _engine()
    for h in [h for h in heads if h.isalpha()]:
        single = eng.singular_noun(h)
        if single and eng.plural_noun(single) == h:  # a plural ("jeans"): its singular too
            heads.add(single)
        elif not single:  # a singular ("skillet"): its plural too
            heads.add(eng.plural_noun(h))
    return frozenset(heads)


def _name_number(name: str, noun: Noun) -> str:
    """"pair", "plural" or "one": how a product *name* counts, from the kind's head noun in it
    ("Levi's 505 Regular Fit Jeans Rinse": a pair; "Duracell AA Batteries": plural)."""
    words = [_bare(w) for w in name.split()]
    plural_heads = {noun.many.split()[-1].lower()} if noun.many != noun.one else set()
    for w in reversed(words):
        if w in PAIR_NOUNS:
            return "pair"
        if w in _head_words(noun):
            if noun.kind in ("pair", "plural"):
                return noun.kind
            return "plural" if w in plural_heads else "one"
    return "one"


def a_named(name: str, noun: Noun, *, one: bool = False) -> str:
    """A product name with the article its kind takes: "a Logitech M185 Wireless Mouse",
    "an Anker PowerCore", "a pair of Levi's 505 Regular Fit Jeans", "a pack of Duracell AA
    Batteries"; with `one`, "one ..." ("one pair of ...")."""
    unit = {"pair": "pair of ", "plural": "pack of "}.get(_name_number(name, noun), "")
    if one:
        return f"one {unit}{name}"
    return f"a {unit}{name}" if unit else indefinite(name)


def name_is_plural(name: str, noun: Noun) -> bool:
    """Whether a product name takes a plural verb ("the Levi's 505 Jeans are")."""
    return _name_number(name, noun) != "one"


def agreement(name: str, noun: Noun) -> dict[str, str]:
    """Words that agree with a product name, for a template's placeholders: {is} ("is" /
    "are"), {isnt} ("isn't" / "aren't"), {its} ("it's" / "they're"), {s} (a verb's ending:
    "show{s}"), {one} ("the Grey {one}": "one" / "ones")."""
    if name_is_plural(name, noun):
        return {"is": "are", "isnt": "aren't", "its": "they're", "s": "", "one": "ones"}
    return {"is": "is", "isnt": "isn't", "its": "it's", "s": "s", "one": "one"}


@lru_cache(maxsize=1024)
def _plural_word(word: str) -> str:
    return _engine().plural_noun(word)


def counted(n: float, word: str) -> str:
    """"1 day", "2 days", "1.5 days": a number with its (singular) noun in the agreeing form."""
    num = f"{n:g}" if isinstance(n, float) else str(n)
    return f"{num} {word if n == 1 else _plural_word(word)}"
