"""Scripted E_PD agents: the shared oracle and random agent, and an honest heuristic.

`RankingHeuristic` uses only the conversation. It asks as a person would: when the
customer says there is more than they have told ("That's not all I need"), one plain
general question (`QUESTION`), and again only if the answer says there is still more.
It parses the customer's constraints from their sentences (budget, stars, days, brand,
"the <feature> must be <value>"), searches with the matching filters, checks the
details of products whose features it cannot see in the results, re-checks stock of
anything it saw before the customer last spoke, and recommends the best
constraint-satisfying in-stock hits, ranked by the dimensions the customer stated. A
budget is checked on what the customer would pay: the price of the variant with a value
they asked for (`variant_prices`), else the listed price.
E_SUB subclasses it (`subject`, `excluded`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, ToolCallRequest
from ecom_bench.envs._ranking import RecommendOracle, RecommendRandom, requested_k

_PRICE = re.compile(r"\$(\d+(?:\.\d+)?)")
_STARS = re.compile(r"(\d(?:\.\d)?)\+? stars")
_DAYS = re.compile(r"(\d+) days?\b")
_ATTR = re.compile(r"\bthe ([a-z][a-z ]*?) (?:must|has to) be ([^,]+?)(?:,[^.]*)?(?:\.(?:\s|$)|$)", re.I)
_NAME = r"[A-Z][\w'\-]*(?: (?:&|[A-Z][\w'\-]*))*"
#: "from Anker", "the Anker brand" (the last word may carry a typo: "brnad").
_BRAND = re.compile(rf"\bfrom ({_NAME})|\bthe ({_NAME}) b\w*d\b")
#: A customer sentence (with no figures in it) saying there is more to tell.
_MORE = re.compile(r"\b(?:more|other|else|not all(?! of)|just ask|if you (?:need|want))\b", re.I)
#: Questions asked at most, however often the customer says there is more.
MAX_QUESTIONS = 2
#: What the customer shops for: "looking for a mouse", "need some new gel pens", "find a pair of jeans".
_NOUN = re.compile(r"(?:looking for|need|help me find) (?:an?|some) (?:new )?(?:pair of )?([a-z][a-z '\-]*?)[.?!]", re.I)

QUESTION = ("Before I search, is there anything else that matters to you: price, brand, ratings, "
            "delivery, features?")


#: The grammar words the parser leans on; a customer's typo of one ("mst", "frm", "brnad")
#: is read as the word, as a person reading chat would.
_VOCAB = ("must", "from", "brand", "stars", "rated", "least", "days", "like", "please", "other", "more",
          "else", "need", "want", "just", "ask", "not", "all", "have", "has", "be")
_WORDS = re.compile(r"[A-Za-z][A-Za-z'\-]*")


def _one_typo(token: str, word: str) -> bool:
    """Whether `token` is `word` with one letter dropped, doubled, or two neighbours swapped."""
    if len(token) == len(word) - 1:
        return any(word[:i] + word[i + 1:] == token for i in range(len(word)))
    if len(token) == len(word) + 1:
        return any(token[:i] + token[i + 1:] == word and token[i] == token[i - 1] for i in range(1, len(token)))
    if len(token) == len(word) and len(word) > 1:
        return any(word[:i] + word[i + 1] + word[i] + word[i + 2:] == token for i in range(len(word) - 1))
    return False


def mend(text: str) -> str:
    """`text` with typos of the parser's grammar words mended (capitalised names are left alone)."""
    def fix(m: re.Match[str]) -> str:
        token = m.group(0)
        if token[0].isupper() and m.start() > 0 or token.lower() in _VOCAB or len(token) < 2:
            return token
        return next((w for w in _VOCAB if len(w) >= 3 and _one_typo(token.lower(), w)), token)
    return _WORDS.sub(fix, text)


def signals_more(text: str) -> bool:
    """Does the customer say they have more to tell? (Sentences with figures are requirements.)"""
    return any(_MORE.search(s) and not re.search(r"\d", s) for s in re.split(r"(?<=[.!?;])\s+", mend(text)))


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


@dataclass
class Wants:
    """What the heuristic believes the customer asked for."""

    subject: str
    budget: float | None = None
    min_rating: float | None = None
    max_days: int | None = None
    brand: str | None = None
    attrs: list[tuple[str, str]] = field(default_factory=list)
    k: int = 3

    @property
    def head(self) -> str:
        words = re.findall(r"[a-z]+", self.subject.lower())
        return _stem(words[-1]) if words else ""

    def search_args(self, with_features: bool, filtered: bool = True) -> dict[str, Any]:
        query = " ".join([self.subject] + ([v for _, v in self.attrs] if with_features else []))
        args: dict[str, Any] = {"query": query[:400], "limit": 20}
        if not filtered:
            return args
        for key, value in (("max_price", self.budget), ("min_rating", self.min_rating),
                           ("max_ship_days", self.max_days), ("brand", self.brand)):
            if value is not None:
                args[key] = value
        if with_features and self.attrs:  # the values it must come in: also what the budget prices
            args["features"] = [v for _, v in self.attrs]
        return args


def _call(name: str, n: int, **arguments: Any) -> ToolCallRequest:
    return ToolCallRequest(name, arguments, id=f"{name}-{n}")


class RankingHeuristic:
    name = "heuristic"
    reads_hidden_goal = False

    # -------------------------------------------------------------- hooks
    def subject(self, opening: str) -> str:
        """What to search for: the product kind the customer named."""
        m = _NOUN.search(opening)
        if m:
            return m.group(1).strip()
        first = re.split(r"[.?!]", opening)[0]
        return " ".join(re.findall(r"[A-Za-z\-]+", first)[-3:]) or opening[:60]

    def excluded(self, wants: Wants, product: dict[str, Any]) -> bool:
        return False

    def should_ask(self, users: list[str], spoke: list[Message]) -> bool:
        """Ask when the customer's latest words say there is more, up to MAX_QUESTIONS times."""
        asked = sum(1 for m in spoke if m.text == QUESTION)
        return asked < MAX_QUESTIONS and signals_more(users[-1])

    # ------------------------------------------------------------- beliefs
    def parse(self, users: list[str]) -> Wants:
        wants = Wants(subject=self.subject(users[0]), k=requested_k(users[0]))
        for text in users:
            for raw in re.split(r"(?<=[.!?;])\s+", text):
                sentence = mend(raw)
                low = sentence.lower()
                if prices := _PRICE.findall(sentence):
                    wants.budget = float(prices[-1])
                if "star" in low or "rated" in low:
                    m = re.search(r"at least (\d(?:\.\d)?)", low) or _STARS.search(low)
                    if m:
                        wants.min_rating = float(m.group(1))
                if days := _DAYS.findall(low):
                    wants.max_days = int(days[-1])
                if m := _BRAND.search(sentence):
                    wants.brand = (m.group(1) or m.group(2)).strip()
                for label, value in _ATTR.findall(raw) or _ATTR.findall(sentence):
                    self._set_attr(wants, label, value)
        return wants

    @staticmethod
    def _set_attr(wants: Wants, label: str, value: str) -> None:
        label = label.strip().lower()
        wants.attrs = [(lab, v) for lab, v in wants.attrs if lab != label] + [(label, value.strip())]

    @staticmethod
    def price_of(wants: Wants, d: dict[str, Any]) -> float:
        """What the customer would pay: the price of the variant with a value they asked for
        (`variant_prices`, shown when variants are priced apart), else the listed price."""
        prices = d.get("variant_prices") or {}
        wanted = {value.lower() for _, value in wants.attrs}
        return next((prices[vid] for vid, value in (d.get("variants") or {}).items()
                     if vid in prices and str(value).lower() in wanted), d["price"])

    def _check(self, wants: Wants, d: dict[str, Any]) -> tuple[int, int]:
        """(constraints broken, constraints not yet checkable) for one product record."""
        bad = unknown = 0
        bad += wants.budget is not None and self.price_of(wants, d) > wants.budget
        bad += wants.min_rating is not None and d["rating"] < wants.min_rating
        bad += wants.max_days is not None and d["ship_days"] > wants.max_days
        bad += wants.brand is not None and d["brand"].lower() != wants.brand.lower()
        leaf = d["category"].split(">")[-1].lower()
        bad += bool(wants.head) and wants.head not in {_stem(w) for w in re.findall(r"[a-z]+", leaf)}
        values = {str(v).lower() for v in d.get("variants", {}).values()}
        values |= {str(v).lower() for v in d.get("attributes", {}).values()}
        for _, value in wants.attrs:
            v = value.lower()
            if v in values or v in d["title"].lower():
                continue
            if "attributes" in d:
                bad += 1
            else:
                unknown += 1
        return bad, unknown

    @staticmethod
    def _taste(wants: Wants, d: dict[str, Any]) -> float:
        """A stand-in for the unknown persona: the dimensions the customer stated weigh double."""
        paid = RankingHeuristic.price_of(wants, d)
        price = 1 - paid / wants.budget if wants.budget else 0.5 * (1 - min(paid, 200) / 200)
        rating = (d["rating"] - 1) / 4 * (2 if wants.min_rating else 1)
        speed = (10 - d["ship_days"]) / 9 * (2 if wants.max_days else 1)
        return 2 * price + rating + speed

    def next_search(self, wants: Wants, messages: list[Message], searches: set[str], n_ok: int,
                    any_graded: bool) -> dict[str, Any] | None:
        """The next catalog_search to make, or None: the request's words with the features, then
        without them while fewer than k products are known to fit, then unfiltered if nothing came back."""
        for with_features, filtered in ((True, True), (False, True), (False, False)):
            args = wants.search_args(with_features, filtered)
            if (json.dumps(args, sort_keys=True) not in searches and (with_features or n_ok < wants.k)
                    and (filtered or not any_graded)):
                return args
        return None

    # ----------------------------------------------------------------- act
    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        patience = status.max_turns
        users = [m.text for m in messages if m.role == "user"]
        if not users:
            return AgentAction(text="Hello! What are you looking for today?")
        spoke = [m for m in messages if m.role == "assistant" and not m.tool_calls]
        last_chance = len(spoke) >= patience - 1
        if self.should_ask(users, spoke) and not last_chance:
            return AgentAction(text=QUESTION)
        wants = self.parse(users)
        records, when, searches = self._read(messages)
        last_user = max(i for i, m in enumerate(messages) if m.role == "user")
        room = status.calls_left
        n = len(messages)

        def need(call: ToolCallRequest) -> AgentAction:
            if room > 0:
                return AgentAction(tool_calls=(call,))
            return AgentAction(text="Let me check a few more options for you.")

        usable = {pid: d for pid, d in records.items() if not self.excluded(wants, d)}
        graded = {pid: (*self._check(wants, d), -self._taste(wants, d)) for pid, d in usable.items()
                  if d["in_stock"]}
        ok = sorted((g[2], pid) for pid, g in graded.items() if g[0] == 0 and g[1] == 0)
        search = self.next_search(wants, messages, searches, len(ok), bool(graded))
        if search is not None and (room > 0 or not last_chance):
            return need(_call("catalog_search", n, **search))
        maybe = sorted((g[2], pid) for pid, g in graded.items() if g[0] == 0 and g[1] > 0)
        if len(ok) < wants.k and maybe and (room > 0 or not last_chance):
            if room <= 0:
                return AgentAction(text="Let me check the details of a few options.")
            picks = [pid for _, pid in maybe[: min(room, wants.k - len(ok))]]
            return AgentAction(tool_calls=tuple(_call("catalog_get_product", n + i, product_id=pid)
                                                for i, pid in enumerate(picks)))
        rest = sorted((g[0] + g[1], g[2], pid) for pid, g in graded.items() if g[0] + g[1] > 0)
        # Only products checked against every requirement; a best guess if none is.
        chosen = [pid for _, pid in ok][: wants.k] or [pid for *_, pid in rest][:1]
        stale = [pid for pid in chosen if when[pid] < last_user]
        if stale and not last_chance:
            if room <= 0:
                return AgentAction(text="Let me double-check that these are still in stock.")
            return AgentAction(tool_calls=tuple(_call("catalog_get_product", n + i, product_id=pid)
                                                for i, pid in enumerate(stale[:room])))
        if not chosen:
            return AgentAction(text="Sorry, I could not find a product that fits. Could you relax a requirement?")
        return AgentAction(tool_calls=(_call("recommend_products", n, product_ids=chosen),))

    @staticmethod
    def _read(messages: list[Message]) -> tuple[dict[str, dict[str, Any]], dict[str, int], set[str]]:
        """Latest record per product id, when it was read, and the searches already made."""
        calls: dict[str, ToolCallRequest] = {}
        records: dict[str, dict[str, Any]] = {}
        when: dict[str, int] = {}
        searches: set[str] = set()
        for i, m in enumerate(messages):
            for c in m.tool_calls:
                calls[c.id] = c
            if m.role != "tool" or m.error or m.tool_call_id not in calls:
                continue
            call, data = calls[m.tool_call_id], m.json()
            if not isinstance(data, dict):
                continue
            if call.name == "catalog_search":
                searches.add(json.dumps(call.arguments, sort_keys=True))
                rows = data.get("results", [])
            else:
                rows = [data] if "product_id" in data and "price" in data else []
            for row in rows:
                merged = {**records.get(row["product_id"], {}), **row}
                records[row["product_id"]] = merged
                when[row["product_id"]] = i
        return records, when, searches


DISCOVERY_POLICIES: dict[str, type] = {"oracle": RecommendOracle, "heuristic": RankingHeuristic,
                                       "random": RecommendRandom}
