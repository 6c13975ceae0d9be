"""Scripted E_CART agents.

`CartOracle` reads the hidden goal and plays perfectly through the ordinary tools
(proving each task solvable). `CartHeuristic` is an honest baseline: it uses only
what a model sees (the user's words and tool results): it searches the names the
customer wrote, matches titles and variant values by text, asks one plain question
when the customer left a detail open ("a few of the ...", "in a particular size"),
follows the customer's corrections (variants, quantities, a product it never asked
for: looked up again among the products the customer viewed), and checks out once
the customer confirms.
"""

from __future__ import annotations

import difflib
import json
import re
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any

from ecom_bench._seeding import seeded_rng
from ecom_bench.conversation import (AgentAction, EpisodeStatus, Message, ToolCallRequest, calls_since_last_message,
                                     tool_results)


def _call(name: str, n: int, **arguments: Any) -> ToolCallRequest:
    return ToolCallRequest(name, arguments, id=f"{name}-{n}")


class CartOracle:
    """Visit history (which holds every target) → cart_add each target → checkout."""

    name = "oracle"
    reads_hidden_goal = True

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        if hidden is None:
            raise ValueError("the oracle needs the hidden goal")
        budget = status.tool_budget
        calls: list[tuple[str, dict[str, Any]]] = [("user_get_visit_history", {})] + [
            ("cart_add", {"product_id": t["product_id"], "variant_id": t["variant_id"], "quantity": t["quantity"]})
            for t in hidden["goal"]["targets"]
        ]
        plan: list[AgentAction] = []
        for start in range(0, len(calls), budget):
            chunk = calls[start : start + budget]
            requests = tuple(_call(n, start + i, **a) for i, (n, a) in enumerate(chunk))
            if start + budget >= len(calls):
                requests += (_call("checkout", len(calls)),)
                plan.append(AgentAction(tool_calls=requests))
            else:
                plan.append(AgentAction(tool_calls=requests))
                plan.append(AgentAction(text="I'm adding your items to the cart now."))
        step = sum(1 for m in messages if m.role == "assistant")
        return plan[min(step, len(plan) - 1)]


# ---------------------------------------------------------------- heuristic
#: A count before the product name: "3 x", "3 units of the", "3 of the", "3".
_COUNT = re.compile(r"\b(\d{1,2})\s*(?:x|units?\s+of|of)?\s*(?:the\s+)?$", re.I)
#: "... of the <name>" with no count: the customer wants more than one but did not say how many.
_PARTITIVE = re.compile(r"\bof the\s*$", re.I)
#: A run of capitalised words (brand, line and product noun): how a shopper writes a product's name,
#: with figures ("10.25 Inch"), titles ("Mr. Coffee") and joining words ("Skillet with Assist Handle").
_NAME_WORD = r"(?:(?:Mr|Mrs|Ms|Dr|St|Jr|Sr)\.|[A-Z0-9][\w'\-]*(?:\.\d[\w'\-]*)*)"
_NAME_RUN = re.compile(rf"(?=[A-Z]){_NAME_WORD}(?:\s+(?:(?:&|with|for|and|of)\s+)?{_NAME_WORD})*")
#: Where a reply's sentences end (not after "Mr." in a name).
_REPLY_SENTENCE = re.compile(r"(?<=[.!?;])(?<!Mr\.)(?<!Mrs\.)(?<!Ms\.)(?<!Dr\.)(?<!St\.)(?<!Jr\.)(?<!Sr\.)"
                             r"\s+")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
#: A count in a reply: "I need 3 of the ...", "3 x ...", "need 3".
_HOW_MANY = re.compile(r"\b(\d{1,2})\s+(?:of|x|units?|pieces)\b|\bneed\s+(\d{1,2})\b", re.I)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^a-z0-9\-\s]", " ", text.lower())).strip()


_MIN_WORD_RATIO = 0.75


@lru_cache(maxsize=1 << 16)
def _word_ratio(a: str, b: str) -> float:
    """difflib's ratio of two words, 0 below the typo-tolerance threshold (cheap bounds first)."""
    if a == b:
        return 1.0
    m = difflib.SequenceMatcher(None, a, b)
    if m.real_quick_ratio() < _MIN_WORD_RATIO or m.quick_ratio() < _MIN_WORD_RATIO:
        return 0.0
    r = m.ratio()
    return r if r >= _MIN_WORD_RATIO else 0.0


def _similarity(a: str, b: str) -> float:
    """Fuzzy word overlap of `a` within `b`, tolerant of typos."""
    wa, wb = _norm(a).split(), _norm(b).split()
    if not wa or not wb:
        return 0.0
    return sum(max(_word_ratio(w, x) for x in wb) for w in wa) / len(wa)


def _name_of(title: str) -> str:
    return title.split(",")[0]


def _values_named(text: str, variants: dict[str, str]) -> list[str]:
    """Variant ids whose value `text` names (whole words, not the "s" of "Women's"), in the order
    they appear."""
    low, found = text.lower(), []
    for vid, value in variants.items():
        m = re.search(rf"(?<![a-z0-9'\u2019]){re.escape(value.lower())}(?![a-z0-9])", low)
        if m:
            found.append((m.start(), vid))
    return [vid for _, vid in sorted(found)]


@dataclass
class _Item:
    """One thing the customer listed: what they called it, what they said around the name."""

    phrase: str
    query: str  # the product's name as the customer wrote it
    head: str  # the words before the name ("3 of the", "a few of the", "one")
    tail: str  # the words after it ("(size: M)", "in a particular colour")
    quantity: int | None = 1  # None: more than one, number not said
    candidates: list[dict[str, Any]] = field(default_factory=list)
    searched: bool = False
    rejected: set[str] = field(default_factory=set)  # products the customer said it never asked for
    choice: dict[str, Any] | None = None
    variant: str | None = None  # a variant id the customer named

    def choose(self) -> None:
        """The candidate whose name best matches what the customer wrote (symmetric, so
        "HearthPro Frying Pan" prefers itself over "HearthPro SE Frying Pan")."""
        pool = [c for c in self.candidates if c["product_id"] not in self.rejected]
        if self.choice is not None and self.choice["product_id"] not in self.rejected:
            return
        self.choice, self.variant = None, None
        if pool:
            def match(c: dict[str, Any]) -> tuple[float, int]:
                name = _name_of(c["title"])
                return (_similarity(self.query, name) + _similarity(name, self.query), -pool.index(c))
            self.choice = max(pool, key=match)
            named = _values_named(self.tail, self.choice.get("variants", {}))
            self.variant = named[-1] if named else None

    @property
    def variant_unknown(self) -> bool:
        """The customer said something about the variant but not which one (and there is a choice)."""
        if self.choice is None or self.variant is not None or len(self.choice.get("variants", {})) < 2:
            return False
        return any(len(w) > 2 and w not in ("the", "and", "one") for w in _norm(self.tail).split())

    def variant_id(self) -> str | None:
        if self.choice is None:
            return None
        return self.variant or next(iter(self.choice.get("variants", {})), None)

    def variant_note(self) -> str:
        vid = self.variant_id()
        value = (self.choice or {}).get("variants", {}).get(vid) if vid else None
        return f" ({value})" if value and len((self.choice or {}).get("variants", {})) > 1 else ""

    def label(self) -> str:
        return _name_of(self.choice["title"]) if self.choice else self.query


def _split_items(opening: str) -> list[str]:
    """The item phrases of the opening: after the intro's colon (outside parentheses), split on ';'."""
    depth, body = 0, opening
    for i, ch in enumerate(opening):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == ":" and depth == 0:
            body = opening[i + 1 :]
            break
    return [p.strip() for p in re.split(r";\s*(?:and\s+|&\s+)?", body) if p.strip()]


def _parse_item(phrase: str) -> _Item:
    """Split an item phrase around the product's name (its longest run of capitalised words)."""
    bare = re.sub(r"\([^)]*\)", lambda m: " " * len(m.group(0)), phrase)
    runs = list(_NAME_RUN.finditer(bare))
    if not runs:
        return _Item(phrase, _norm(phrase), "", "")
    run = max(runs, key=lambda m: (len(m.group(0).split()), m.start()))
    head, tail = phrase[: run.start()], phrase[run.end():]
    end = _SENTENCE_END.search(re.sub(r"\([^)]*\)", lambda m: " " * len(m.group(0)), tail))
    tail = tail[: end.start()] if end else tail
    item = _Item(phrase, run.group(0), head, tail)
    if m := _COUNT.search(head):
        item.quantity = int(m.group(1))
    elif _PARTITIVE.search(head):
        item.quantity = None
    return item


class CartHeuristic:
    name = "heuristic"
    reads_hidden_goal = False

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        # Reads only the conversation; `hidden` is deliberately ignored.
        users = [m for m in messages if m.role == "user"]
        if not users:
            return AgentAction(text="Hello! What would you like to add to your cart?")
        items = [_parse_item(p) for p in _split_items(users[0].text)]
        by_query = {it.query: it for it in items}
        cart: list[dict[str, Any]] = []
        carted: dict[str, dict[str, Any]] = {}  # every product that was ever in the cart, by id
        history: list[dict[str, Any]] | None = None
        for call, result in tool_results(messages):
            data = result.json() or {}
            if call.name == "catalog_search" and call.arguments.get("query") in by_query:
                it = by_query[call.arguments["query"]]
                it.searched = True
                it.candidates = data.get("results", [])
            if call.name == "user_get_visit_history" and not result.error:
                history = data.get("visits", [])
            if isinstance(data, dict) and "cart" in data and isinstance(data["cart"], dict):
                cart = data["cart"].get("lines", [])
            if isinstance(data, dict) and "lines" in data:
                cart = data["lines"]
            carted.update((ln["product_id"], ln) for ln in cart if "product_id" in ln)
        said = [m.text for m in messages if m.role == "assistant" and not m.tool_calls]
        asked = any("?" in t for t in said)
        for it in items:
            it.choose()
        # a product refused once stays refused, even after it left the cart
        confirmed = self._absorb_replies(users[1:], items, list(carted.values()))
        if history is not None and any(it.rejected for it in items):
            # look for a refused item among what the customer viewed: choose afresh from all of it (the
            # first pick after the refusal saw only the search results), then bind the customer's
            # variants and counts to the new choice
            for it in items:
                if it.rejected:
                    it.candidates = [c for c in it.candidates if c["product_id"] not in it.rejected] + history
                    it.choice = None
                    it.choose()
            confirmed = self._absorb_replies(users[1:], items, list(carted.values()))
        failed = {(c.name, json.dumps(c.arguments, sort_keys=True)) for c, r in tool_results(messages) if r.error}
        room = max(0, status.calls_left)
        n = len(messages)
        # 1. search what is not found yet (and, once something is rejected, the visit history)
        pending = [_call("catalog_search", n + i, query=it.query)
                   for i, it in enumerate(it for it in items if not it.searched)]
        if history is None and any(it.rejected for it in items):
            pending.append(_call("user_get_visit_history", n + len(pending)))
        if pending:
            if room == 0:
                return AgentAction(text="I'm looking up your items now.")
            return AgentAction(tool_calls=tuple(pending[:room]))
        # 2. one plain question when the customer left a detail open
        unknown = [it for it in items if it.quantity is None or it.variant_unknown]
        if unknown and not asked:
            return AgentAction(text=self._question(unknown))
        # 3. make the cart match what we believe the customer wants
        all_ops = self._cart_ops(items, cart, n)
        ops = [op for op in all_ops if (op.name, json.dumps(op.arguments, sort_keys=True)) not in failed]
        if all_ops and not ops:  # everything left has failed once: say so rather than retry
            return self._say_once(messages, said, "Sorry, I could not update part of your cart (a tool "
                                  "reported an error). Should I place the order with what is in the cart?")
        if ops:
            if room == 0:
                return AgentAction(text="I'm updating your cart now.")
            return AgentAction(tool_calls=tuple(ops[:room]))
        # 4. check out once the customer confirms (or when nothing we can change has changed)
        summary = ("I've added everything to your cart: "
                   + "; ".join(f"{it.quantity or 1} x {it.label()}{it.variant_note()}" for it in items if it.choice)
                   + ". Is that everything, shall I place the order?")
        if confirmed:
            return AgentAction(tool_calls=(_call("checkout", n),))
        return self._say_once(messages, said, summary)

    @staticmethod
    def _say_once(messages: list[Message], said: list[str], text: str) -> AgentAction:
        """Say `text`, unless it was our last message and nothing changed since: then place the order
        (repeating ourselves until the customer leaves helps no one)."""
        if said and said[-1] == text and calls_since_last_message(messages) == 0:
            return AgentAction(tool_calls=(_call("checkout", len(messages)),))
        return AgentAction(text=text)

    @staticmethod
    def _question(unknown: list[_Item]) -> str:
        parts = []
        for it in unknown:
            what = []
            if it.variant_unknown and it.choice:
                what.append("which one (" + ", ".join(it.choice.get("variants", {}).values()) + ")")
            if it.quantity is None:
                what.append("how many")
            parts.append(f"for the {it.label()}, {' and '.join(what)} would you like?")
        return "Quick question: " + " Also, ".join(parts)

    @staticmethod
    def _match_item(text: str, items: list[_Item]) -> _Item | None:
        # the customer's own name for the item, or the title it was matched to
        scored = [(max(_similarity(it.query, text), _similarity(it.label(), text)), i)
                  for i, it in enumerate(items)]
        best = max(scored, default=(0.0, -1))
        return items[best[1]] if best[0] > 0.3 else (items[0] if len(items) == 1 else None)

    def _absorb_replies(self, replies: list[Message], items: list[_Item], carted: list[dict[str, Any]]) -> bool:
        """Absorb the customer's replies in order; True if one confirms the order."""
        confirmed = False
        for reply in replies:
            confirmed = self._absorb_reply(reply.text, items, carted) or confirmed
        return confirmed

    def _absorb_reply(self, text: str, items: list[_Item], carted: list[dict[str, Any]]) -> bool:
        """Update beliefs from one customer reply; True if it confirms the order.

        A sentence about an item that names one of its variants sets the variant (the
        last one named: "it's the Red one, but I need Blue"); a number in it sets the
        quantity ("I need 4 of them, not 1"); a sentence quoting the full title of a
        product that was in the cart (`carted`: then, not only now) and refusing it ("I
        didn't ask for the X; please remove it") rejects that product for its item. A
        correction of a wanted item ("that's not how many of the X") does not, also when
        the customer's name for it is its full title. Matching against the current cart
        alone made the agent swap a refused product back in whenever it had just removed it.
        """
        for sentence in _REPLY_SENTENCE.split(text):
            low = sentence.lower()
            refused = re.search(r"didn't ask|never asked|\bremove\b|don't want", low)
            line = max(carted, key=lambda ln: _similarity(str(ln.get("title", "")), sentence), default=None)
            if line is not None and _similarity(str(line.get("title", "")), sentence) < 0.8:
                line = None
            if line is not None and refused:
                for item in items:
                    if item.choice and item.choice["product_id"] == line["product_id"]:
                        item.rejected.add(line["product_id"])
                        item.choose()
                continue
            it = self._match_item(sentence, items)
            if it is None or it.choice is None:
                continue
            named = _values_named(sentence, it.choice.get("variants", {}))
            if named:
                it.variant = named[-1]
            bare = sentence
            for value in it.choice.get("variants", {}).values():
                bare = re.sub(rf"(?<![a-z0-9]){re.escape(value)}(?![a-z0-9])", " ", bare, flags=re.I)
            if m := _HOW_MANY.search(bare):
                it.quantity = int(m.group(1) or m.group(2))
        low = text.lower()
        return any(k in low for k in ("check out", "place the order", "that's everything", "that's all"))

    @staticmethod
    def _cart_ops(items: list[_Item], cart: list[dict[str, Any]], n: int) -> list[ToolCallRequest]:
        ops: list[ToolCallRequest] = []
        wanted: dict[tuple[str, str | None], int] = {}
        for it in items:
            if it.choice is None:
                continue
            wanted[(it.choice["product_id"], it.variant_id())] = it.quantity or 1
        have = {(ln["product_id"], ln.get("variant_id")): ln["quantity"] for ln in cart}
        for (pid, vid), qty in have.items():
            if (pid, vid) not in wanted:
                ops.append(_call("cart_remove", n + len(ops), product_id=pid, variant_id=vid))
            elif wanted[(pid, vid)] != qty:
                ops.append(_call("cart_set_quantity", n + len(ops), product_id=pid, variant_id=vid,
                                 quantity=wanted[(pid, vid)]))
        for (pid, vid), qty in wanted.items():
            if (pid, vid) not in have:
                ops.append(_call("cart_add", n + len(ops), product_id=pid, variant_id=vid, quantity=qty))
        return ops


class CartRandom:
    """A floor: searches the opening's words once, carts one random hit in a random variant, checks out."""

    name = "random"
    reads_hidden_goal = False

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        users = [m for m in messages if m.role == "user"]
        opening = users[0].text if users else ""
        rng = seeded_rng("cart-random", opening)
        n = len(messages)
        results = tool_results(messages)
        tried = {c.name for c, _ in results}
        if "catalog_search" not in tried:
            return AgentAction(tool_calls=(_call("catalog_search", n, query=_norm(opening)[:200] or "product"),))
        if "cart_add" not in tried:
            if calls_since_last_message(messages) >= 1:
                return AgentAction(text="Let me add an item for you.")
            hits = next((r.json() or {} for c, r in results if c.name == "catalog_search" and not r.error), {})
            if hits.get("results"):
                pick = rng.choice(hits["results"])
                variants = sorted(pick.get("variants") or {})
                return AgentAction(tool_calls=(_call("cart_add", n, product_id=pick["product_id"],
                                                     variant_id=rng.choice(variants) if variants else None),))
        if "checkout" not in tried:
            return AgentAction(tool_calls=(_call("checkout", n),))
        return AgentAction(text="Sorry, that is all I can do.")
