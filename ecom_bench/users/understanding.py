"""Reading the agent's words: is it asking, and about which of the customer's slots.

Why this is small on purpose: a customer that only understands its own keywords fails
careful agents who ask in plain English (measured: "Is that everything?" got "go
ahead" while constraints were still withheld). So no customer decides *whether* to
answer from topic words. The rule every customer follows (`Customer.to_disclose`):

* a request for information (`is_request`: a question, or "tell me / let me know /
  please list ...") is always answered;
* topic words (`topics_asked`) only narrow the answer: a request that names withheld
  slots gets those; any other request (general, about something already said, or
  phrased in words we do not know) gets every withheld slot.

So missing a paraphrase can only make the customer say more, never stonewall.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

#: A sentence that opens like a question ("Which order ...", "Could you ...", "Any ...").
_INTERROGATIVE = re.compile(
    r"^(?:(?:and|so|also|ok|okay|great|thanks|sure|just|now|then|first|finally|lastly|roughly|approximately|"
    r"about|quickly|briefly|out of interest|by the way|and roughly|and approximately),? ){0,2}"
    r"(?:what|what's|which|how|when|where|why|who|whose|do|does|did|is|isn't|are|aren't|was|were|can|could|"
    r"would|will|should|shall|may|might|have|has|any|anything|is there|are there)\b")
#: Imperative or indirect requests for information, with or without a question mark.
_REQUEST = re.compile(
    r"\b(?:tell me|let me know|remind me|fill me in|walk me through|i(?:'d| would) like to know|"
    r"i need to know|i'll need to know|i need (?:a few|some) details|mind (?:telling|sharing|letting)|"
    r"(?:please|kindly|can you|could you|would you) (?:share|list|describe|confirm|specify|provide|give|"
    r"clarify|explain|send|say|note|mention|spell out|point out|outline|detail)|"
    r"(?:share|list|describe|specify|outline) (?:your|the|any|all|what|which|how))\b")
#: A sentence that asks the customer to provide or choose something ("Name a brand you trust.").
_IMPERATIVE = re.compile(
    r"^(?:please |kindly |just |now )?(?:give|name|choose|pick|select|describe|list|share|explain|specify|"
    r"confirm|say|send|provide|tell|clarify|outline|mention|state|indicate)\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")


def says(text_l: str, phrase: str, *, prefix: bool = False) -> bool:
    """Whether lower-cased `text_l` holds `phrase` as whole words ("mint" is not in "peppermint").

    `prefix=True` lets the last word run on ("deliver" matches "delivered", "ship" "shipping").
    """
    phrase_l = phrase.lower()
    # most checks miss: a substring test rules them out before any pattern is looked up
    return phrase_l in text_l and _phrase_pattern(phrase_l, prefix).search(text_l) is not None


@functools.lru_cache(maxsize=4096)
def _phrase_pattern(phrase_l: str, prefix: bool) -> re.Pattern[str]:
    tail = "" if prefix else r"(?![a-z0-9])"
    return re.compile(rf"(?<![a-z0-9]){re.escape(phrase_l)}{tail}")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def is_request(text: str) -> bool:
    """Does the agent ask the customer for something (a question or an imperative request)?"""
    if "?" in text:
        return True
    low = text.lower()
    if _REQUEST.search(low):
        return True
    return any(_INTERROGATIVE.match(s) or _IMPERATIVE.match(s) for s in map(str.lower, sentences(text)))


def words(text: str) -> set[str]:
    """Lower-cased words, each also without a plural "s" ("speakers" → also "speaker")."""
    out = set()
    for w in _WORD.findall(text.lower()):
        out.add(w)
        if len(w) > 3 and w.endswith("s"):
            out.add(w[:-1])
    return out


def topics_asked(text: str, topics: Mapping[str, Iterable[str]]) -> list[str]:
    """The topics (slot names) whose cue phrases the text uses, in `topics` order.

    Cues are matched as word prefixes, so "deliver" covers "delivered" and "delivery".
    """
    low = text.lower()
    return [topic for topic, cues in topics.items() if any(says(low, c, prefix=True) for c in cues)]


__all__ = ["is_request", "says", "sentences", "topics_asked", "words"]
