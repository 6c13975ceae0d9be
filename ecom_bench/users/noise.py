"""Input noise at rate p_noise(d): typos and chat slang, applied word by word.

Protected tokens (quantities, variant values) are never touched and no noise makes a
digit, so noise makes a request harder to read but never changes what is asked for.
"""

from __future__ import annotations

import random
import re

SLANG = {
    "please": "pls",
    "you": "u",
    "your": "ur",
    "thanks": "thx",
    "thank": "thx",
    "want": "wanna",
    "going": "gonna",
    "because": "cuz",
    "really": "rly",
    "okay": "ok",
    "and": "&",
    "with": "w/",
}  # never a digit ("for" -> "4"): "4 the gel pens" reads as a quantity the customer never asked for

_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")


def _typo(word: str, rng: random.Random) -> str:
    if len(word) < 4:
        return word
    i = rng.randrange(1, len(word) - 1)
    kind = rng.randrange(3)
    if kind == 0:  # swap two neighbours
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if kind == 1:  # drop one
        return word[:i] + word[i + 1 :]
    return word[:i] + word[i] + word[i:]  # double one


def add_noise(text: str, p: float, rng: random.Random, protect: frozenset[str] = frozenset()) -> str:
    """Return `text` with each word (outside `protect`) noised with probability p."""
    if p <= 0:
        return text
    protected = {w.lower() for phrase in protect for w in _WORD.findall(phrase)}

    def swap(m: re.Match[str]) -> str:
        word = m.group(0)
        if word.lower() in protected or rng.random() >= p:
            return word
        slang = SLANG.get(word.lower())
        if slang is not None and rng.random() < 0.5:
            return slang
        return _typo(word, rng)

    return _WORD.sub(swap, text)
