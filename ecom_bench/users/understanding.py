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

A customer that maps questions to facts more finely (E_POLICY's) reads a message part by
part (`request_parts`: each question of "How heavy is it, and are you a member?"), tells a
check-in ("Does that sound good?") from a request for facts (`is_check_in`), and may back
its rules with `Paraphrases`, a nearest-prototype match on the static sentence embedding.
"""

from __future__ import annotations

import dataclasses
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
    r"(?:i|we)(?:'ll| will|'d| would)?(?: just| also| still| only| really)? need (?:to know|to ask|to confirm|to check|your|the|a few|some|a bit|a little|"
    r"more|you to (?:tell|confirm|share|let)|(?:two|three|a couple of|a few|some) (?:things|details|facts))|"
    r"i need (?:a few|some) details|mind (?:telling|sharing|letting)|"
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


# ------------------------------------------------------------------ parts of a message
#: Where one question of a compound ends and the next begins: ";", ":", or a comma / "and" /
#: "or" followed by a word that opens a question ("How big is it, and how much does it weigh?").
_OPENERS = (r"what|what's|which|how|when|where|why|who|whose|do|does|did|is|are|was|were|have|has|had|can|"
            r"could|would|will|should|any|if so|if not|please|also|roughly|approximately|and if|whether|if it|if you")
_CLAUSE_BREAK = re.compile(rf"\s*[;:]\s+|\s*,\s*(?:(?:and|or|but|plus|also)\s+)?(?=(?:{_OPENERS})\b)"
                           rf"|\s+(?:and|or|but|plus)\s+(?=(?:{_OPENERS})\b)"
                           r"|[\s,]*(?:\band\s+)?\((?:[a-h]|\d{1,2})\)\s*")  # a list: "(a) ..., (b) ..."


@dataclasses.dataclass(frozen=True)
class Part:
    """One question (or statement) of an agent's message, lower-cased."""

    text: str
    request: bool  # asks the customer for something (or belongs to a sentence that does)


def request_parts(text: str) -> list[Part]:
    """The message split into sentences and each request sentence into its questions.

    "Can you tell me about the order: what it was, when you bought it and what it cost?"
    gives four parts, so a reader can answer each or say which one it could not place.
    Statements stay whole (they may name what a bare "Could you share that?" refers to).
    """
    out = []
    for sentence in sentences(text.replace("\u2019", "'")):
        low = sentence.lower()
        if not is_request(sentence):
            out.append(Part(low, False))
            continue
        out.extend(Part(p.strip(" ,.?!"), True) for p in _CLAUSE_BREAK.split(low) if p.strip(" ,.?!"))
    return out


#: A check-in: asks whether the customer is satisfied or wants more help, not for any fact.
_CHECK_IN = re.compile(
    r"\b(?:(?:does|did|would|will) (?:that|this|it|everything)(?: all)? (?:sound|work|help|make sense|answer|cover|"
    r"resolve|suit|do)|(?:sound|sounds) (?:good|ok|okay|right|alright|all right|fair|fine|great)|"
    r"(?:is|was|are) (?:that|this|everything|we|you|it) (?:ok|okay|alright|all right|fine|clear|good|helpful|"
    r"all set|set|happy|satisfied|settled|sorted)|are we (?:good|done|all set|set)|"
    r"(?:happy|satisfied|okay|ok) with|make(?:s)? sense|all set|"
    r"(?:anything|something) (?:else|more|further)(?! (?:about|regarding|i should|i need|i'd need|you can tell|"
    r"you could tell|that might|that could|that may|that would|that matters|to know|worth))|"
    r"any other (?:questions?|way|help)|how else|can i help|could i help|may i help|help (?:you )?with anything|"
    r"(?:have|did) i (?:covered|answered)|leave it there|anything i can do|is that all|is that everything|"
    r"(?:will|would) (?:that|this) be (?:all|everything)|"
    # offers and sign-offs: the agent offers more help or closes, it asks for no fact
    r"(?:want|like) (?:me|us) to|(?:shall|should) (?:i|we)|"
    r"(?:other|any|more|further) questions|if you have (?:any |other |more )?questions|hope (?:that|this|it) helps|feel free|reach out|"
    r"have a (?:great|good|nice|lovely) (?:day|one|evening)|happy to help|glad (?:i could|to) help|"
    r"thanks? (?:you )?for (?:shopping|your patience|contacting|reaching|choosing|waiting)|"
    r"(?:anything|something) (?:else|more|further)\b.*\b(?:help|assist|do for you))\b")


def is_check_in(part: str) -> bool:
    """Does this part only check in ("Does that sound good?", "Anything else?") rather than ask for a fact?"""
    return _CHECK_IN.search(part) is not None


#: Words that carry no topic of their own: a part made only of these ("What was it?") asks about
#: whatever the message around it names.
_FUNCTION_WORDS = frozenset("""
a about above after again all also am an and any anything are as at be been before being but by can could
did do does doing done for from had has have having he her here hers him his how i i'd i'll i'm if in into
is it it's its just kindly let like me mind more much my need no not now of off ok okay on once only or
other our out over please quick quickly roughly so some something sure tell than thanks thank that that's the
their them then there these they this those to too up us very was we well were what what's when where which
while who whom why will with would yes you you'd you're your yours yourself approximately exactly share
give know confirm let's help assist question questions thing things one two three couple few great got perfect
alright understood noted right
""".split())


def content_words(part: str) -> list[str]:
    """The words of a part that are not function words (what a question is about)."""
    return [w for w in _WORD.findall(part.lower()) if w not in _FUNCTION_WORDS]


class Paraphrases:
    """Nearest-prototype reading of paraphrases the rules miss, on the static sentence embedding.

    Each topic has a few prototype questions; a text is mapped to the topic of its nearest
    prototype (cosine over the content words, so "what / your / the" do not dominate a static
    embedding) when that similarity reaches `threshold` and beats every other topic's best by
    `margin`; otherwise to nothing. Deterministic; the model loads on first use (wordllama,
    shipped in its wheel, ~0.5 s), and one lookup costs well under a millisecond.
    """

    def __init__(self, prototypes: Mapping[str, Iterable[str]], *, threshold: float, margin: float,
                 embedder: str = "wordllama") -> None:
        self._topics = [t for t, texts in prototypes.items() for _ in texts]
        self._texts = [" ".join(content_words(p)) for texts in prototypes.values() for p in texts]
        self.threshold = threshold
        self.margin = margin
        self._embedder_spec = embedder
        self._matrix = None

    def _encode(self, texts: list[str]):  # noqa: ANN202 (numpy array)
        from ecom_bench.catalog.embedders import get_embedder

        return get_embedder(self._embedder_spec).encode(texts)

    def scores(self, text: str) -> dict[str, float]:
        """Each topic's best cosine similarity to the text's content words."""
        if self._matrix is None:
            self._matrix = self._encode(self._texts)
        words = " ".join(content_words(text))
        if not words:
            return {}
        sims = self._matrix @ self._encode([words])[0]
        best: dict[str, float] = {}
        for topic, sim in zip(self._topics, sims.tolist(), strict=True):
            best[topic] = max(best.get(topic, -1.0), sim)
        return best

    def nearest(self, text: str) -> str | None:
        """The topic the text paraphrases, or None when no topic is near enough and clearly nearest."""
        ranked = sorted(self.scores(text).items(), key=lambda kv: (-kv[1], kv[0]))
        if not ranked or ranked[0][1] < self.threshold:
            return None
        if len(ranked) > 1 and ranked[0][1] - ranked[1][1] < self.margin:
            return None
        return ranked[0][0]


__all__ = ["Paraphrases", "Part", "content_words", "is_check_in", "is_request", "request_parts", "says",
           "sentences", "topics_asked", "words"]
