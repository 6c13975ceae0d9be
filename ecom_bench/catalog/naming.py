"""Product short names: what a shopper calls a product ("VoltEdge PowerPort Wall Charger").

Titles follow the marketplace convention "{name}, {specs}, {feature}": the part before
the first separator is the product's name, the rest is detail. Simulated users refer
to products by this short name, so the synthetic catalogue keeps it unique; loaders of
real catalogues use the same rule (uniqueness is then not guaranteed).
"""

from __future__ import annotations

import re

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
