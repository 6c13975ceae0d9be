"""Scripted E_CART agents.

`CartOracle` reads the hidden goal and plays perfectly through the ordinary tools
(proving each task solvable). `CartHeuristic` is an honest baseline: it uses only
what a model sees (the user's words and tool results): it searches the user's
phrases, matches titles and variant values by text, asks when a detail is missing,
follows the user's corrections, and checks out once the user confirms.
"""

from __future__ import annotations

import difflib
import json
import re
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any

from ecom_bench._seeding import seeded_rng
from ecom_bench.agents.base import AgentAction, Message, ToolCallRequest, calls_since_last_message, tool_results
from ecom_bench.difficulty import Difficulty


def _call(name: str, n: int, **arguments: Any) -> ToolCallRequest:
    return ToolCallRequest(name, arguments, id=f"{name}-{n}")


class CartOracle:
    """Visit history (which holds every target) → cart_add each target → checkout."""

    name = "oracle"
    reads_hidden_goal = True

    def act(self, messages: list[Message], hidden: dict[str, Any] | None) -> AgentAction:
        if hidden is None:
            raise ValueError("the oracle needs the hidden goal")
        budget = Difficulty.from_level(hidden["difficulty"]).tool_budget
        calls = [("user_get_visit_history", {})] + [
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
_QTY = re.compile(r"\b(\d{1,2})\s*(?:x|units? of|of)\b")
_VALUE_PATTERNS = (re.compile(r"\(([^():]+):\s*([^()]+)\)"),)
_NEED_VARIANT = re.compile(r"specific|particular|matters")
_FEW = re.compile(r"\b(a few|some of|several)\b")
_FILLER = re.compile(
    r"\b(hi|hello|hey|there|please|pls|add|these|to|my|cart|could|you|put|the|following|in|i'd|like|order|"
    r"shopping|list|can|one|a|an|few|some|several|of|units?|x|and|need|specific|particular|right|matters|"
    r"thanks|thank|that's|all|i)\b"
)


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


@dataclass
class _Item:
    phrase: str
    query: str
    quantity: int | None = 1
    value: str | None = None
    needs_variant: bool = False
    candidates: list[dict[str, Any]] = field(default_factory=list)
    searched: bool = False
    choice: dict[str, Any] | None = None

    def variant_id(self) -> str | None:
        if self.choice is None:
            return None
        variants: dict[str, str] = self.choice.get("variants", {})
        if self.value:
            for vid, val in variants.items():
                if val.lower() == self.value.lower():
                    return vid
            for vid, val in variants.items():
                if _similarity(self.value, val) > 0.8:
                    return vid
        return next(iter(variants), None)


def _split_items(opening: str) -> list[str]:
    """The item phrases of the opening: after the intro's colon (outside parentheses), split on ';'."""
    depth, body = 0, opening
    for i, ch in enumerate(opening):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == ":" and depth == 0:
            body = opening[i + 1 :]
            break
    return [p.strip() for p in re.split(r";\s*(?:and\s+)?", body) if p.strip()]


def _parse_item(phrase: str) -> _Item:
    low = phrase.lower()
    item = _Item(phrase=phrase, query="")
    m = _QTY.search(low)
    if m:
        item.quantity = int(m.group(1))
    elif _FEW.search(low):
        item.quantity = None
    for pat in _VALUE_PATTERNS:
        vm = pat.search(phrase)
        if vm:
            item.value = vm.group(2).strip()
    if item.value is None:
        vm = re.search(r"\bin ([A-Za-z0-9][\w\- ]*?)(?:[.;]|$)", phrase) or re.search(r", the (.+?) one\b", phrase)
        if vm and not _NEED_VARIANT.search(low):
            item.value = vm.group(1).strip()
    if _NEED_VARIANT.search(low) and item.value is None:
        item.needs_variant = True
    name = re.sub(r"\([^)]*\)", " ", phrase)
    name = re.split(r",| - | in a particular| in (?=[A-Za-z0-9])", name)[0]
    item.query = " ".join(w for w in _FILLER.sub(" ", _norm(name)).split() if not w.isdigit()) or _norm(phrase)
    return item


class CartHeuristic:
    name = "heuristic"
    reads_hidden_goal = False

    def act(self, messages: list[Message], hidden: dict[str, Any] | None) -> AgentAction:
        # Reads only the conversation; `hidden` is deliberately ignored.
        system = next((m.text for m in messages if m.role == "system"), "")
        bm = re.search(r"at most (\d+) tool call", system)
        budget = int(bm.group(1)) if bm else 1
        users = [m for m in messages if m.role == "user"]
        if not users:
            return AgentAction(text="Hello! What would you like to add to your cart?")
        items = [_parse_item(p) for p in _split_items(users[0].text)]
        by_query = {it.query: it for it in items}
        cart: list[dict[str, Any]] = []
        asked = False
        for call, result in tool_results(messages):
            data = result.json() or {}
            if call.name == "catalog_search" and call.arguments.get("query") in by_query:
                it = by_query[call.arguments["query"]]
                it.searched = True
                it.candidates = data.get("results", [])
            if isinstance(data, dict) and "cart" in data and isinstance(data["cart"], dict):
                cart = data["cart"].get("lines", [])
            if isinstance(data, dict) and "lines" in data:
                cart = data["lines"]
        # Replies after the opening carry answers and corrections.
        confirmed = False
        for m in messages[1:]:
            if m.role == "assistant" and not m.tool_calls and "?" in m.text:
                asked = True
        for u in users[1:]:
            confirmed = self._absorb_reply(u.text, items) or confirmed
        last_user = users[-1].text.lower() if len(users) > 1 else ""
        for it in items:
            if it.candidates:
                # Symmetric fuzzy match, so "HearthPro Frying Pan" prefers itself over "HearthPro SE Frying Pan".
                def match(c: dict[str, Any], q: str = it.query) -> tuple[float, int]:
                    name = c["title"].split(",")[0]
                    return (_similarity(q, name) + _similarity(name, q), -it.candidates.index(c))
                it.choice = max(it.candidates, key=match)
        failed = {(c.name, json.dumps(c.arguments, sort_keys=True)) for c, r in tool_results(messages) if r.error}
        used = calls_since_last_message(messages)
        room = max(0, budget - used)
        n = len(messages)
        # 1. search what is not found yet
        pending = [it for it in items if not it.searched]
        if pending:
            if room == 0:
                return AgentAction(text="I'm looking up your items now.")
            return AgentAction(tool_calls=tuple(_call("catalog_search", n + i, query=it.query)
                                                for i, it in enumerate(pending[:room])))
        # 2. ask for what is missing (once)
        unknown = [it for it in items if it.quantity is None or (it.needs_variant and it.value is None)]
        if unknown and not asked:
            return AgentAction(text=self._question(unknown))
        # 3. make the cart match what we believe the user wants
        all_ops = self._cart_ops(items, cart, n)
        ops = [op for op in all_ops if (op.name, json.dumps(op.arguments, sort_keys=True)) not in failed]
        if all_ops and not ops:  # everything left has failed once: say so rather than retry
            return AgentAction(text="Sorry, I could not update part of your cart (a tool reported an error). "
                               "Should I place the order with what is in the cart?")
        if ops:
            if room == 0:
                return AgentAction(text="I'm updating your cart now.")
            return AgentAction(tool_calls=tuple(ops[:room]))
        # 4. confirm, then check out
        if confirmed and ("check out" in last_user or "place the order" in last_user):
            return AgentAction(tool_calls=(_call("checkout", n),))
        return AgentAction(text="I've added everything to your cart: "
                           + "; ".join(f"{it.quantity or 1} x {it.choice['title'].split(',')[0]}"
                                       for it in items if it.choice)
                           + ". Is that everything, shall I place the order?")

    @staticmethod
    def _question(unknown: list[_Item]) -> str:
        parts = []
        for it in unknown:
            options = ""
            if it.choice and it.needs_variant and it.value is None:
                options = " (" + ", ".join(it.choice.get("variants", {}).values()) + ")"
            what = []
            if it.needs_variant and it.value is None:
                what.append(f"which option{options}")
            if it.quantity is None:
                what.append("how many")
            name = it.choice["title"].split(",")[0] if it.choice else it.query
            parts.append(f"for the {name}, {' and '.join(what)} do you need?")
        return "Quick question: " + " Also, ".join(parts)

    @staticmethod
    def _match_item(text: str, items: list[_Item]) -> _Item | None:
        scored = [(_similarity(it.choice["title"].split(",")[0] if it.choice else it.query, text), i)
                  for i, it in enumerate(items)]
        best = max(scored, default=(0.0, -1))
        return items[best[1]] if best[0] > 0.3 else (items[0] if len(items) == 1 else None)

    def _absorb_reply(self, text: str, items: list[_Item]) -> bool:
        """Update beliefs from one user reply; True if it confirms the order."""
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            low = sentence.lower()
            m = re.search(r"i need the (.+?) one", sentence, re.I) or re.search(r"but i need (.+?)\.?$", sentence, re.I)
            if m:
                it = self._match_item(sentence, items)
                if it:
                    it.value = m.group(1).strip()
                    it.needs_variant = True
            q = re.search(r"i need (\d+) of the", low)
            if q:
                it = self._match_item(sentence, items)
                if it:
                    it.quantity = int(q.group(1))
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

    def act(self, messages: list[Message], hidden: dict[str, Any] | None) -> AgentAction:
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
