"""Reading a policy answer written as free text: the one amount or outcome it gives, or why none.

Agents answer the way they would tell the customer: "$24.46", "The shipping fee is $24.46.",
"With $382.09 as you told me, the policy gives $24.46", "two weeks", "a year and a half",
"store credit, not a full refund". `read_policy_answer` finds every quantity (with its
unit) or outcome the text names and sets aside, by the text's form, what is not the answer:
what it negates ("not $20", "rather than ground"), bounds ("under $50", "up to $50"), rates
("$0.80 per lb"), ages ("12 days ago"), the customer's amounts it cites ("as you told me"),
quantities of another kind than the question asks for (a percentage, a weight, months for
a count of days, the "two" of "two-day air"), and asides in brackets when something stands
outside them. A unit covers a whole range or list ("14 to 30 days", "$20-25").

Several different candidates left: alternatives ("$20 or $25", "between 0 and 32.38",
"ground / two-day air") and hedges ("probably 30 days, maybe 45", "depending on ...",
"otherwise ...") are refused. Otherwise it keeps, in turn, what the text names as its
answer ("the answer is ...", "$5, I mean $19.65"), what is not in a reason given first ("since
you've had it 4 months, ...") or a base ("starts from 3 days"), the last result of a line of
working ("= $24.51", "so ... $24.46", "which rounds to 12 days"), what is not one of the
customer's own facts (after the working's shape: an answer can equal a fact), what follows a contrast
("not eligible for a refund, but you can do an exchange only"), what the text presents as
its answer ("is", "gives", ":", a figure opening its sentence), what carries a unit, and
an answer stated first and then explained ("$0.00. Shipping is on us for orders over
$75"). Two different answers still left are refused: the message says why, and the agent
answers again.

Soundness: the reading depends only on the text, on the question's public form (the kind
and unit of answer it asks for, the outcomes its policy lists: the customer's question
names its topic) and on the customer's own facts, never on the answer. A refusal therefore
says nothing about which candidate is right, and an answer that hedges over several values
is refused, never scored as one of them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from itertools import pairwise
from dataclasses import dataclass, replace
from typing import Any

from ecom_bench.domains.policy.rules import OUTCOMES, PolicyQuestion


class AnswerRefused(ValueError):
    """The text gives no single answer of the kind the question asks for (the message says why)."""


@dataclass(frozen=True)
class PolicyAnswer:
    """What a policy answer records: an amount (in the question's unit) or an outcome."""

    value: float | None = None
    unit: str = ""  # "$", "day", "month"; "" for an outcome or a bare number to an unknown question
    option: str | None = None

    def arguments(self) -> dict[str, Any]:
        return {"option": self.option} if self.option is not None else {"value": self.value, "unit": self.unit}

    def text(self) -> str:
        if self.option is not None:
            return self.option
        return format_amount(self.unit, float(self.value or 0.0))


def format_amount(unit: str, value: float) -> str:
    """"$24.46", "14 days", "1.5 months", "3": exact, since a reading is echoed as it was recorded."""
    if unit == "$":
        return f"${value:,.2f}"
    if not unit:
        return f"{value:g}"
    return f"{value:g} {unit}{'' if value == 1 else 's'}"


# ------------------------------------------------------------------ text preparation
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_WORD = "|".join(sorted([*_NUMBER_WORDS, *_TENS, "hundred"], key=len, reverse=True))
#: A number written in words: "fourteen", "twenty-one", "one hundred and twenty".
_WORD_NUMBER = re.compile(rf"\b(?:{_WORD})(?:(?:[\s-]+|(?<=hundred)\s+and\s+)(?:{_WORD}))*\b")
_TIME_UNIT = r"(?:business |calendar )?(?:days?|weeks?|months?|years?|fortnights?)"
#: What follows a number in words that counts something: "fourteen days", "five to nine days".
_UNIT_AFTER_WORDS = re.compile(rf"(?:\s*(?:-|to|or|and|through)\s*(?:(?:{_WORD}|\d+)[\s-]*)+)?(?:\s+and\s+a\s+half)?"
                               rf"\s*-?\s*(?:{_TIME_UNIT}|dollars?|bucks|cents?|percent)\b")


def _word_value(words: str) -> int | None:
    """The value of a number in words ("twenty-one" 21, "one hundred and five" 105); None when the
    words are several numbers side by side ("five six")."""
    current, last = 0, ""
    for w in re.split(r"[\s-]+", words):
        if w == "and":
            if last != "hundred":
                return None
            continue
        if w == "hundred":
            if last not in ("unit", ""):
                return None
            current, last = max(current, 1) * 100, "hundred"
        elif w in _TENS:
            if last not in ("", "hundred"):
                return None
            current, last = current + _TENS[w], "tens"
        elif w in _NUMBER_WORDS:
            if last == "unit":
                return None
            current, last = current + _NUMBER_WORDS[w], "unit"
        else:
            return None
    return current


def _digits_for_words(text: str, *, only_before_units: bool) -> str:
    """Numbers in words as digits: every one, or (`only_before_units`) those counting a unit, so that
    "the one you bought" stays words while "fourteen days" and "five to nine days" read as digits."""
    def sub(m: re.Match[str]) -> str:
        if only_before_units and not _UNIT_AFTER_WORDS.match(text, m.end()) and m.group(0) != text.strip():
            return m.group(0)
        value = _word_value(m.group(0))
        if value is None:  # several numbers side by side: each on its own
            return re.sub(rf"\b(?:{_WORD})\b", lambda w: str(_word_value(w.group(0))), m.group(0))
        return str(value)

    return _WORD_NUMBER.sub(sub, text)


_CONTRACTIONS = ((r"\bwon't\b", "will not"), (r"\bcan't\b", "can not"), (r"\bshan't\b", "shall not"),
                 (r"n't\b", " not"), (r"\b(it|that|what|here|there|this|which|who)'s\b", r"\1 is"),
                 (r"'ll\b", " will"), (r"'re\b", " are"), (r"'ve\b", " have"), (r"'d\b", " would"))


def _prepare(text: str) -> str:
    """Lower case, one spelling of dashes, arrows and contractions; ids and dates masked."""
    t = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    t = re.sub(r"[\u2010-\u2015\u2212]", "-", t)
    t = re.sub(r"\u2192|\u21d2|=>|->", " = ", t)
    t = re.sub(r"[\u2248~]", " about ", t)
    t = re.sub(r"\b\d{4}-\d{2}-\d{2}\b", " date ", t)
    t = re.sub(r"\b[a-z]{2,}-\d+\b", " ref ", t)  # rule and order ids: "SHIP-1234", "ORD-123456"
    for pattern, repl in _CONTRACTIONS:
        t = re.sub(pattern, repl, t)
    return t


# ------------------------------------------------------------------ mentions and their context
@dataclass(frozen=True)
class _Mention:
    """One quantity or outcome the text names, with what its context says about it."""

    start: int
    end: int
    dim: str  # "$", "day", "month", "%", "other"; "" for a bare number; "option" for an outcome
    value: float | str
    explicit: bool = True  # carries a unit (an outcome always does)
    number: float = 0.0  # the number as written ...
    factor: float = 1.0  # ... times its unit's factor (7 for weeks, 12 for years) is `value`
    rank: int = 0  # the unit's size, for "1 year and 6 months"
    negated: bool = False
    bound: bool = False  # "under $50", "at least 30 days", "up to $50"
    rate: bool = False  # "$0.80 per lb"
    aside: bool = False  # inside brackets
    cited: bool = False  # the customer's amount cited: "12 days ago", "$382.09 as you told me"
    premise: bool = False  # a reason given first ("since you've had it 4 months, ..."), or a base ("starts from 3 days")
    named: bool = False  # named as the answer: "the answer is ...", "final answer: ..."
    cued: bool = False  # presented as the answer: "is $24.46", "gives ...", ": ...", a leading "$24.46"
    concluded: bool = False  # ends a line of working: after "=", "so", "therefore", "comes to", "total"


_NEGATORS = re.compile(r"\b(?:not|no|never|nor|neither|without|except|excluding|rather than|instead of|"
                       r"other than|as opposed to)\b(?:\s+\S+){0,3}\s*$")
_NEGATED_AFTER = re.compile(r"^\s*(?:[a-z]+\s+)?(?:is|are|was|would|will|does|do|did)\s+(?:not|never)\b|"
                            r"^\s*(?:is|was|would be)\s+(?:wrong|incorrect)\b")
_BOUNDS = (r"under|over|above|below|beyond|exceeds?|exceeding|at least|at most|more than|less than|greater than|"
           r"fewer than|lower than|higher than|no more than|no less than|upwards of|a minimum of|a maximum of")
_BOUND_BEFORE = re.compile(rf"(?:\b(?:{_BOUNDS})|<=?|>=?|\u2264|\u2265)\s*(?:\$\s*)?$")
#: "up to $50" bounds a fee; for a window or a coverage period it states the limit itself.
_UP_TO_BEFORE = re.compile(r"\b(?:up to|as much as|as many as|as long as)\s*(?:\$\s*)?$")
_BOUND_AFTER = re.compile(r"^\s*(?:or (?:more|less|fewer|under|over|higher|lower|above|below)|max(?:imum)?|"
                          r"min(?:imum)?|at (?:most|the most|least|the least)|tops)\b|^\s*\+")
_RATE_AFTER = re.compile(r"^\s*(?:per|/|an?|each|for each|for every|every)\s+(?:lb|lbs|pound|item|piece|day|week|"
                         r"month|year|dollar|order|unit)s?\b|^\s*each\b")
_CITED_AFTER = re.compile(r"^\s*(?:ago|old)\b|^[^,.;]{0,24}?\b(?:as you (?:told|said|mentioned|stated)|"
                          r"you (?:told|said|mentioned|stated|gave))\b")
_CITED_BEFORE = re.compile(r"\byou (?:told me|said|mentioned|stated|gave)(?: me)?(?: (?:it is|is|was|of))?\s*$")
_PREMISE = re.compile(r"^\s*(?:and\s+)?(?:since|because|as|given|with|for|considering|based on|according to|if|when|"
                      r"after|before)\b")
#: Where working starts rather than ends: "starts from 3 days", "the base is $10.00".
_BASE = re.compile(r"\b(?:starts?|starting|begins?|beginning)(?: out)? (?:from|at|with)\s*$|"
                   r"\bbase(?: figure| amount| value| fee| window| time| rate)?(?: is| of|:)?\s*$|\binitially\s*$")
_NAMED = re.compile(r"\b(?:answer|final)\b(?:\s+\S+){0,2}\s*$|"
                    r"\b(?:i mean|i meant|correction|make that|sorry|scratch that)\b[\s,:-]*(?:\s*it is)?\s*$")
_CUE = re.compile(r"(?:\b(?:is|are|was|were|be|been|being|equals?|equal to|comes? to|came to|come out to|works? out "
                  r"to|amounts? to|totals?|totaling|totalling|total of|gives?|gave|giving|get|gets|getting|receive|"
                  r"receives|pay|pays|owe|owes|charges?|costs?|have|has|answer|result|sets?|makes?|making|brings?|"
                  r"bringing|leaves?|leaving|so|therefore|thus|hence|via|by)\b|[:=])(?:\s+\S+){0,3}\s*$")
_CONCLUSION = re.compile(r"\b(?:so|therefore|thus|hence|in total|total|totals|totaling|totalling|comes? to|"
                         r"works? out to|comes? out to|amounts? to|which gives|giving|bringing|making it|finally|"
                         r"in the end|overall|final|after all|all in all|altogether|all told|resulting in|"
                         r"the result is|net|rounds? (?:up |down )?to|rounded(?: up| down)?(?: to)?|rounding (?:up|down) to)\b|=")
_CONTRAST = re.compile(r"\b(?:but|however|instead|rather|though|yet)\b")
_FILLER = re.compile(r"^(?:\s|\b(?:a|an|the|about|approximately|approx|around|roughly|exactly|just|only|it|that|this|"
                     r"yes|no|ok|okay|total|final|answer|it is|that is|so)\b|[\"'*,])*$")
#: Words that make two different candidates alternatives rather than an answer and its working.
_HEDGES = re.compile(r"\bif (?:you|your|it|they|the customer)\b|\bfor \w+ (?:members|customers)\b|"
                     r"\b(?:maybe|perhaps|possibly|probably|might|could|depending|depends|otherwise|either|unless|"
                     r"if not|or else|whichever|whether)\b")
_SENTENCE_END = re.compile(r"[!?;\n]|\.(?!\d)")
_CLAUSE_END = re.compile(r"[!?;\n,:()\[\]]|\.(?!\d)|\b(?:but|however|while|whereas)\b")
_STATEMENT_END = re.compile(r"[!?;:\n]|\.(?!\d)|\s[-\u2014]\s")


def _last_break(pattern: re.Pattern[str], text: str) -> int:
    """The index just after the last match of `pattern` in `text` (0 if none)."""
    ends = [m.end() for m in pattern.finditer(text)]
    return ends[-1] if ends else 0


def _in_brackets(t: str, pos: int) -> bool:
    depth = 0
    for ch in t[:pos]:
        if ch in "([":
            depth += 1
        elif ch in ")]" and depth:
            depth -= 1
    return depth > 0


def _annotate(t: str, mentions: list[_Mention], *, up_to_is_a_bound: bool = True) -> list[_Mention]:
    out = []
    for i, m in enumerate(mentions):
        head, tail = t[:m.start], t[m.end:]
        clause = head[_last_break(_CLAUSE_END, head):]
        sentence = head[_last_break(_SENTENCE_END, head):]
        since_prev = head[mentions[i - 1].end:] if i else head
        lead = sentence if len(sentence) < len(since_prev) else since_prev
        # a line of working reads on past percentages and weights ("so after 10% off it's $24.46")
        same_kind = [p for p in mentions[:i] if p.dim in (m.dim, "") or m.dim == ""]
        since_same = head[same_kind[-1].end:] if same_kind else head
        tail_clause = tail[:next((x.start() for x in _CLAUSE_END.finditer(tail)), len(tail))]
        number = m.dim != "option"
        out.append(replace(
            m,
            negated=bool(_NEGATORS.search(clause) or _NEGATED_AFTER.match(tail_clause)),
            bound=bool(_BOUND_BEFORE.search(clause) or _BOUND_AFTER.match(tail)
                       or up_to_is_a_bound and _UP_TO_BEFORE.search(clause)),
            rate=number and bool(_RATE_AFTER.match(tail)),
            aside=_in_brackets(t, m.start),
            cited=number and bool(_CITED_AFTER.match(tail) or _CITED_BEFORE.search(clause)),
            # a reason stated before the main clause: "since you've had it 4 months, ..."
            premise=bool(_PREMISE.match(clause)) and tail[len(tail_clause):].startswith(",")
            or bool(_BASE.search(lead[-40:])),
            named=bool(_NAMED.search(lead[-40:])),
            cued=bool(_CUE.search(lead[-60:]) or _FILLER.match(sentence)),
            concluded=bool(_CONCLUSION.search(since_same)),
        ))
    return out


# ------------------------------------------------------------------ quantities
#: unit word -> (dimension, factor to the dimension's base unit, rank: larger units first)
_UNITS: dict[str, tuple[str, float, int]] = {}
for _words, _dim, _factor, _rank in (
        (("usd", "dollars", "dollar", "bucks", "$"), "$", 1.0, 2), (("cents", "cent", "\u00a2"), "$", 0.01, 1),
        (("business days", "business day", "calendar days", "calendar day", "days", "day"), "day", 1.0, 1),
        (("fortnights", "fortnight"), "day", 14.0, 3), (("weeks", "week", "wks", "wk"), "day", 7.0, 2),
        (("years", "year", "yrs", "yr"), "month", 12.0, 2), (("months", "month", "mos", "mo"), "month", 1.0, 1),
        (("%", "percent", "per cent"), "%", 1.0, 1),
        (("lbs", "lb", "pounds", "pound", "kg", "items", "item", "pieces", "piece", "orders", "order", "units",
          "unit", "stars", "star"), "other", 1.0, 1)):
    for _w in _words:
        _UNITS[_w] = (_dim, _factor, _rank)
_UNIT_ALT = "|".join(re.escape(w) for w in sorted(_UNITS, key=len, reverse=True))
_QUANTITY = re.compile(
    rf"(?<![a-z0-9.,$])(?P<pre>(?:us\s?)?\$\s?|usd\s?)?"
    rf"(?P<num>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\d])"
    rf"(?P<unit>\s*-?\s*(?:{_UNIT_ALT}))?(?![a-z0-9])")
#: What a money question reads as "nothing to pay": "free", "no fee", "no restocking fee".
_ZERO_MONEY = re.compile(r"(?<![a-z-])free(?! to\b)(?!-)(?: of charge)?\b|\bno (?:shipping |restocking |return )?"
                         r"(?:fee|charge)s?\b")
#: What joins the members of a range or a list ("14 to 30 days", "$20-25", "6 or 12 months", "30, maybe 45").
_JOINER = (r"(?:\s|,|/|-|\$|\bor\b|\band\b|\bto\b|\bthrough\b|\bversus\b|\bvs\b|\bmaybe\b|\bperhaps\b|\bpossibly\b|"
           r"\bprobably\b|\ba\b|\ban\b|\bthe\b)*")
_JOINED = re.compile(rf"\s*{_JOINER}\s*")


def _quantities(t: str) -> list[_Mention]:
    out: list[_Mention] = []
    for m in _QUANTITY.finditer(t):
        number = float(m.group("num").replace(",", ""))
        start = m.start()
        if start >= 1 and t[start - 1] == "-" and (start < 2 or not t[start - 2].isalnum()):
            number, start = -number, start - 1
        unit = (m.group("unit") or "").strip(" -")
        dim, factor, rank = _UNITS[unit] if unit else (("$", 1.0, 2) if m.group("pre") else ("", 1.0, 0))
        if unit and m.group("pre") and dim != "$":  # "$5 items": the money sign wins
            dim, factor, rank = "$", 1.0, 2
        out.append(_Mention(start, m.end(), dim, number * factor, explicit=dim != "", number=number,
                            factor=factor, rank=rank))
    return _share_units(t, _merge_compounds(t, out))


def _merge_compounds(t: str, mentions: list[_Mention]) -> list[_Mention]:
    """"1 year and 6 months" is 18 months, "2 weeks 3 days" 17 days, "$24 and 46 cents" $24.46."""
    out: list[_Mention] = []
    for m in mentions:
        prev = out[-1] if out else None
        if (prev is not None and prev.explicit and m.explicit and prev.dim == m.dim
                and prev.dim in ("$", "day", "month") and prev.rank > m.rank
                and re.fullmatch(r"\s*(?:,|and|,\s*and|plus)?\s*", t[prev.end:m.start])
                and not re.search(r"\b(?:between|from)\s+$", t[max(0, prev.start - 12):prev.start])):
            out[-1] = replace(prev, end=m.end, value=float(prev.value) + float(m.value), rank=m.rank,
                              factor=m.factor)
        else:
            out.append(m)
    return out


def _share_units(t: str, mentions: list[_Mention]) -> list[_Mention]:
    """A unit covers the bare numbers of its range or list: "14 to 30 days", "$20-25", "6 or 12 months"."""
    out = list(mentions)
    for _ in range(2):  # both directions, through chains ("5, 6 or 7 days")
        for i, m in enumerate(out):
            if m.explicit:
                continue
            for j in (i + 1, i - 1):
                if 0 <= j < len(out) and out[j].explicit:
                    a, b = sorted((m, out[j]), key=lambda x: x.start)
                    if _JOINED.fullmatch(t[a.end:b.start]):
                        other = out[j]
                        out[i] = replace(m, dim=other.dim, value=m.number * other.factor, explicit=True,
                                         factor=other.factor, rank=other.rank)
                        break
    return out


# ------------------------------------------------------------------ choosing one
def _distinct(mentions: list[_Mention]) -> list[float | str]:
    values: list[float | str] = []
    for m in mentions:
        if not any(_same(m.value, v) for v in values):
            values.append(m.value)
    return values


def _same(a: float | str, b: float | str) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return abs(a - b) < 0.005


def _is_fact(m: _Mention, facts: list[tuple[str, float | str]]) -> bool:
    """Whether `m` restates one of the customer's own facts (a bare number matches a fact of any unit)."""
    return any(_same(m.value, value) and m.dim in ("", dim) for dim, value in facts)


def _alternatives(t: str, mentions: list[_Mention], facts: list[tuple[str, float | str]]
                  ) -> tuple[_Mention, _Mention] | None:
    """Two different candidates offered as alternatives: a range or a list joined only by "or", "to",
    "-", "/", "and" or a comma ("$20 or $25", "between 0 and 32.38"); or, the customer's own amounts
    aside ("you could get $24.46 back on your $382.09 item"), "or" anywhere between two of them or a
    hedge anywhere in the text ("probably 30 days, maybe 45", "full refund if unopened, store credit
    if not": an outcome is never set aside, though the customer may have paid by store credit)."""
    hedged = _HEDGES.search(t) is not None
    offered = [m for m in mentions if m.dim == "option" or not _is_fact(m, facts)]
    for group, loose in ((mentions, False), (offered, True)):
        ordered = sorted(group, key=lambda m: m.start)
        for a, b in pairwise(ordered):
            between = t[a.end:b.start]
            if not _same(a.value, b.value) and (_JOINED.fullmatch(between) or loose and (
                    hedged or re.search(r"\bor\b(?! so\b| not\b)", between))):
                return a, b
    return None


def _contrasted(t: str, mentions: list[_Mention]) -> list[_Mention]:
    """The candidates after the last "but", "however", "instead" that has candidates on both sides."""
    for c in reversed(list(_CONTRAST.finditer(t))):
        after = [m for m in mentions if m.start >= c.end()]
        if after and len(after) < len(mentions):
            return after
    return []


def _concluded(mentions: list[_Mention]) -> list[_Mention]:
    """The result a line of working ends in: the last candidate, when it follows "=", "so", "comes to"..."""
    last = max(mentions, key=lambda m: m.start)
    ends = [m for m in mentions if m.concluded]
    # "..., which rounds to 43 months: your coverage is 43 months" ends where its result is restated
    return [last] if last.concluded or ends and _same(max(ends, key=lambda m: m.start).value, last.value) else []


def _stated_first(t: str, mentions: list[_Mention]) -> list[_Mention]:
    """The answer stated first and then explained: the text's first statement (questions aside) holds
    one value, presented as the answer ("$0.00. Shipping is on us for orders over $75 ...")."""
    start = 0
    for end_m in [*_STATEMENT_END.finditer(t), None]:
        end = end_m.end() if end_m is not None else len(t)
        statement = t[start:end]
        start = end
        if not statement.strip(" \n.!;:-\u2014") or statement.rstrip().endswith("?"):
            continue
        inside = [m for m in mentions if end - len(statement) <= m.start < end]
        return inside if inside and len(_distinct(inside)) == 1 and all(m.cued for m in inside) else []
    return []


def _narrow(t: str, mentions: list[_Mention], facts: list[tuple[str, float | str]]) -> list[_Mention]:
    """Apply the preferences of the module docstring in turn, each only when it keeps some candidates."""
    steps: tuple[Callable[[list[_Mention]], list[_Mention]], ...] = (
        lambda ms: [m for m in ms if m.named],
        # where the working starts and where it ends come before the customer's facts: the answer
        # can equal one of them ("... which rounds to 12 days" with 12 days since delivery)
        lambda ms: [m for m in ms if not m.premise],
        _concluded,
        lambda ms: [m for m in ms if not _is_fact(m, facts)],
        lambda ms: _contrasted(t, ms),
        lambda ms: [m for m in ms if m.cued],
        lambda ms: [m for m in ms if m.explicit],
        lambda ms: _stated_first(t, ms),
    )
    for step in steps:
        if len(_distinct(mentions)) <= 1:
            break
        mentions = step(mentions) or mentions
    return mentions


def _choose(t: str, mentions: list[_Mention], facts: list[tuple[str, float | str]], what: str) -> _Mention:
    """The one candidate the text gives as its answer (see the module docstring), or AnswerRefused."""
    if any(m.aside for m in mentions) and any(not m.aside for m in mentions):
        # an aside is set aside unless it offers an alternative ("$5 (or $19.65 if you pay by card)")
        pair = _alternatives(t, mentions, facts)
        if pair is None:
            mentions = [m for m in mentions if not m.aside]
    if len(_distinct(mentions)) > 1:
        pair = _alternatives(t, mentions, facts)
        if pair is not None:
            first, second = (_shown(t, m) for m in pair)
            raise AnswerRefused(f"Your answer offers alternatives ({first!r}, {second!r}) or hedges between them; "
                                f"give the one {what} the policy sets for the customer's case.")
        mentions = _narrow(t, mentions, facts)
    if len(_distinct(mentions)) > 1:
        listed = ", ".join(repr(_shown(t, m)) for m in mentions[:4])
        raise AnswerRefused(f"Your answer gives several candidates ({listed}) and does not say which is the "
                            f"answer: give only the {what} the policy sets.")
    return mentions[0]


def _shown(t: str, m: _Mention) -> str:
    return t[m.start:m.end].strip()


# ------------------------------------------------------------------ amounts
_DIM_WORDS = {"$": "an amount of money", "day": "a number of days", "month": "a number of months",
              "%": "a percentage", "other": "a count or a weight"}
_EXAMPLES = {"$": "'$12.50'", "day": "'14 days'", "month": "'18 months'"}


def _label_pattern(label: str, *, number_words: bool) -> str:
    """A regex for an outcome's name, any hyphenation, "two" or "2" ("two-day air", "2 day air")."""
    def token(w: str) -> str:
        if number_words and w in _NUMBER_WORDS:
            return rf"(?:{w}|{_NUMBER_WORDS[w]})"
        return re.escape(w)

    return r"(?<![a-z0-9])" + r"[\s-]+".join(token(w) for w in re.split(r"[\s-]+", label.lower())) + r"(?![a-z0-9])"


_ANY_OUTCOME = re.compile("|".join(_label_pattern(o, number_words=True)
                                   for o in sorted(OUTCOMES, key=len, reverse=True)))


def _prepare_amounts(text: str, unit: str | None) -> str:
    t = _ANY_OUTCOME.sub(" outcome ", _prepare(text))  # "two-day air" counts no days
    t = _digits_for_words(t, only_before_units=True)
    t = re.sub(rf"\b(\d+(?:\.\d+)?) and a half ({_TIME_UNIT})",
               lambda m: f"{float(m.group(1)) + .5:g} {m.group(2)}", t)
    t = re.sub(rf"\b(?:an?|1) ({_TIME_UNIT}) and a half\b", r"1.5 \1", t)
    t = re.sub(rf"\bhalf an? ({_TIME_UNIT})", r"0.5 \1", t)
    t = re.sub(rf"(?<![\w$.])an? ({_TIME_UNIT}|dollar)\b", r"1 \1", t)
    if unit in (None, "$"):
        t = _ZERO_MONEY.sub("$0", t)
    return t


def _read_amount(text: str, question: PolicyQuestion | None) -> PolicyAnswer:
    unit = question.unit if question is not None else None
    t = _prepare_amounts(text, unit)
    limit = question is not None and question.fam.answer_is_limit
    mentions = _annotate(t, _quantities(t), up_to_is_a_bound=not limit)
    wanted = (unit,) if unit else ("$", "day", "month")
    kept = [m for m in mentions if not (m.negated or m.bound or m.rate or m.cited)]
    fits = [m for m in kept if m.dim in wanted or m.dim == ""]
    what = _DIM_WORDS[unit] if unit else "an amount, a number of days or months, or an outcome"
    example = _EXAMPLES.get(unit or "", "'$12.50', '14 days' or 'store credit'")
    if not fits:
        if kept:
            m = kept[0]
            raise AnswerRefused(f"This question asks for {what}; {_shown(t, m)!r} is {_DIM_WORDS[m.dim]}. "
                                f"Answer with {what}, e.g. {example}.")
        if any(m.bound for m in mentions):
            raise AnswerRefused(f"Your answer gives a bound, not {what}: give the exact figure the policy sets, "
                                f"e.g. {example}.")
        if mentions:
            raise AnswerRefused(f"Your answer only says what the answer is not, or names a rate or a fact of the "
                                f"customer's: give {what} the policy sets, e.g. {example}.")
        if unit and _ANY_OUTCOME.search(_prepare(text)):
            raise AnswerRefused(f"This question asks for {what}, not an outcome: give it as e.g. {example}.")
        raise AnswerRefused(f"Could not find {what} in your answer: give it as e.g. {example}.")
    facts = question.facts() if question is not None else []
    m = _choose(t, fits, facts, "figure")
    if not math.isfinite(float(m.value)):
        raise AnswerRefused(f"{_shown(t, m)[:40]!r}... is not a figure the policy can set: give {what}, e.g. {example}.")
    return PolicyAnswer(value=round(float(m.value), 6), unit=unit or m.dim)


# ------------------------------------------------------------------ outcomes
def _label_text(text: str) -> str:
    """The text as outcome names are looked for in it: "isn't eligible" reads "is not eligible"."""
    t = _prepare(text)
    t = re.sub(r"\bineligible\b", "not eligible", t)
    return re.sub(r"\bnot be\b", "not", t)


def _outcome_mentions(t: str, options: tuple[str, ...]) -> list[_Mention]:
    """Each outcome of `options` the text names. Every outcome name of the store is matched, longest
    first, so "mail-in repair" is not also "repair", nor "full refund" also "refund"."""
    taken: list[tuple[int, int, str]] = []
    for label in sorted(OUTCOMES, key=len, reverse=True):
        for m in re.finditer(_label_pattern(label, number_words=True), t):
            if all(m.end() <= a or m.start() >= b for a, b, _ in taken):
                taken.append((m.start(), m.end(), label))
    return sorted((_Mention(a, b, "option", label) for a, b, label in taken if label in options),
                  key=lambda m: m.start)


_DANGLING_OR = re.compile(r"^\s*(?:,\s*)?or\b(?! so\b| not\b)")


def _read_outcome(text: str, question: PolicyQuestion | None) -> PolicyAnswer:
    options = question.outcomes if question is not None else OUTCOMES
    t = _label_text(text)
    mentions = _annotate(t, _outcome_mentions(t, options))
    listed = ", ".join(options)
    kept = [m for m in mentions if not m.negated and not m.bound]
    if not kept:
        why = "only says which outcome it is not" if mentions else "names none of the outcomes"
        raise AnswerRefused(f"Your answer {why}. Name the one outcome the policy gives, as the policy lists it "
                            f"({listed}).")
    if any(not m.aside for m in kept):
        kept = [m for m in kept if not m.aside]
    for m in kept:  # "store credit or an exchange": an alternative the store does not list is still one
        if _DANGLING_OR.match(t[m.end:]) or re.search(r"\bor\s+(?:an?\s+|the\s+)?$", t[:m.start]):
            raise AnswerRefused(f"Your answer offers alternatives to {m.value!r}; name the one outcome the policy "
                                f"gives ({listed}).")
    facts = question.facts() if question is not None else []
    return PolicyAnswer(option=str(_choose(t, kept, facts, "outcome").value))


# ------------------------------------------------------------------ entry point
def read_policy_answer(text: str, question: PolicyQuestion | None) -> PolicyAnswer:
    """The answer `text` gives to `question` (None: the question is not known, any kind goes).

    Raises AnswerRefused, with a message for the agent, when the text gives no single answer of
    the kind the question asks for.
    """
    if question is not None:
        return _read_outcome(text, question) if question.kind == "choice" else _read_amount(text, question)
    t = _label_text(text)
    named = [m for m in _annotate(t, _outcome_mentions(t, OUTCOMES)) if not m.negated]
    if named and not _quantities(_prepare_amounts(text, None)):
        return _read_outcome(text, None)
    return _read_amount(text, None)
