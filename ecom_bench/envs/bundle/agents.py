"""Scripted E_BUNDLE agents.

* `BundleOracle` reads the hidden goal (a feasible in-stock product per required
  category) and shows each one with `catalog_get_product` before submitting, B_tool
  calls per turn: ⌈n/B_tool⌉ ≤ 3 turns for n = 3+⌊d/2⌋, B_tool = 1+⌊d/2⌋, always
  within T_max = 4+⌊d/2⌋.
* `BundleHeuristic` is honest: it parses the project's items and the budget from the
  user's words, asks one plain question when the opening hints at more than it says (a
  remark after the list with nothing to act on), searches each item,
  takes the cheapest in-stock decent hit of the item's category meeting the stated
  requirements, searches the category again (filtered) when nothing fits or the bundle
  is over budget, drops what the user says sold out, and submits (no proposal round).
* `BundleRandom` searches once or twice with words of the opening and submits a few
  random retrieved ids.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ecom_bench._seeding import seeded_rng
from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, ToolCallRequest, tool_results

FINAL_TOOL = "submit_bundle"
DECENT_RATING = 3.5
SEARCH_LIMIT = 20


def _call(name: str, n: int, **arguments: Any) -> ToolCallRequest:
    return ToolCallRequest(name, arguments, id=f"{name}-{n}")


def _own_steps(messages: list[Message]) -> int:
    return sum(1 for m in messages if m.role == "assistant")


class BundleOracle:
    """catalog_get_product for each planned choice (B_tool per turn) → submit_bundle."""

    name = "oracle"
    reads_hidden_goal = True

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        if hidden is None:
            raise ValueError("the oracle needs the hidden goal")
        budget = status.tool_budget
        ids = [item["product_id"] for item in hidden["goal"]["items"]]
        plan: list[AgentAction] = []
        for start in range(0, len(ids), budget):
            calls = tuple(_call("catalog_get_product", start + i, product_id=pid)
                          for i, pid in enumerate(ids[start:start + budget]))
            if start + budget >= len(ids):
                plan.append(AgentAction(tool_calls=calls + (_call(FINAL_TOOL, len(ids), product_ids=ids),)))
            else:
                plan.append(AgentAction(tool_calls=calls))
                plan.append(AgentAction(text="I'm putting your bundle together now."))
        return plan[min(_own_steps(messages), len(plan) - 1)]


# ---------------------------------------------------------------- heuristic
_ARTICLE = re.compile(r"^(?:and\s+|&\s+)?(?:a|an|s\w{1,4})\s+", re.I)
_MONEY = re.compile(r"\$\s?(\d+(?:\.\d+)?)")
_ID_IN_PARENS = re.compile(r"\(([A-Za-z0-9][\w\-]*)\)")
_RATING = re.compile(r"([1-5](?:\.\d)?) st\w*", re.I)
_NEED = re.compile(r"\bne+d\b")
_SHIP = re.compile(r"within (\d+) days", re.I)


def _items_of(text: str) -> list[str]:
    """The item phrases of "...: a X; a Y; and some Z." (the part after a colon, or after "need")."""
    m = re.search(r":\s*(.+?)(?:\.(?:\s|$)|$)", text) or re.search(r"need\s+(.+?)(?:\.(?:\s|$)|$)", text)
    if not m:
        return []
    out = []
    for part in re.split(r";", m.group(1)):
        phrase = _ARTICLE.sub("", part.strip(" :,")).strip()
        if phrase:
            out.append(phrase.lower())
    return out


def _open_remarks(opening: str) -> list[str]:
    """Sentences after the opening's item list that state nothing we can act on (no amount, no
    number) and are more than a thank-you: the customer hinting at something not said yet."""
    m = re.search(r":\s*(.+?)(?:\.(?:\s|$)|$)", opening)
    rest = opening[m.end():] if m else ""
    return [s for s in re.split(r"(?<=[.!?])\s+", rest)
            if len(s.split()) >= 4 and not re.search(r"\d", s)]


def _leaf_of(hit: dict[str, Any]) -> str:
    return str(hit["category"]).split(" > ")[-1]


@dataclass
class _Item:
    query: str
    leaf: str | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    searched: bool = False
    refined: bool = False
    choice: dict[str, Any] | None = None


@dataclass
class _Beliefs:
    """What the heuristic has understood from the conversation so far."""

    items: dict[str, _Item]
    budget: float | None = None
    filters: dict[str, float] = field(default_factory=dict)  # search filters: min_rating, max_ship_days
    excluded: set[str] = field(default_factory=set)

    def absorb(self, text: str, items: bool = True) -> None:
        """Update from one user message (the opening, whose items are already parsed, or a reply)."""
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            low = sentence.lower()
            if items and _NEED.search(low) and not re.search(r"\b(?:don't|only)\b", low):
                for q in _items_of(_NEED.sub("need:", low, count=1)):
                    self.items.setdefault(q, _Item(q))
            m = _MONEY.search(sentence)
            if m and "budget" in low:
                self.budget = float(m.group(1))
            if m := _RATING.search(sentence):
                self.filters["min_rating"] = float(m.group(1))
            if m := _SHIP.search(sentence):
                self.filters["max_ship_days"] = int(m.group(1))
            if re.search(r"sold out|out of stock|drop the", low):
                self.excluded.update(_ID_IN_PARENS.findall(sentence))

    def fits(self, hit: dict[str, Any]) -> bool:
        return (hit.get("rating", 0) >= self.filters.get("min_rating", 0)
                and hit.get("ship_days", 99) <= self.filters.get("max_ship_days", 99))


class BundleHeuristic:
    name = "heuristic"
    reads_hidden_goal = False

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        # Reads only the conversation; `hidden` is deliberately ignored.
        patience = status.max_turns
        users = [m.text for m in messages if m.role == "user"]
        if not users:
            return AgentAction(text="Hello! What project are you shopping for?")
        said = [m for m in messages if m.role == "assistant" and not m.tool_calls]
        turn = 1 + len(said)
        asked = any("?" in m.text for m in said)
        beliefs = _Beliefs({q: _Item(q) for q in _items_of(users[0])})
        beliefs.absorb(users[0], items=False)
        for text in users[1:]:
            beliefs.absorb(text)
        stock = self._read_searches(messages, beliefs)
        for it in beliefs.items.values():
            self._choose(it, beliefs, stock)

        n = len(messages)
        room = max(0, status.calls_left)
        if _open_remarks(users[0]) and not asked and turn < patience:
            return AgentAction(text="Happy to help! What else do you need for this? Do you have a budget, "
                               "and any requirements for the products?")
        searches = self._searches(beliefs)
        if searches and room:
            return AgentAction(tool_calls=tuple(_call("catalog_search", n + i, **args)
                                                for i, args in enumerate(searches[:room])))
        if searches and turn < patience:
            return AgentAction(text="I'm searching for the right products now.")
        ids = list(dict.fromkeys(it.choice["product_id"] for it in beliefs.items.values() if it.choice))
        if not ids or any(c.name == FINAL_TOOL for c, r in tool_results(messages) if r.error):
            return AgentAction(text="Sorry, I couldn't find anything yet. Which items do you need?")
        return AgentAction(tool_calls=(_call(FINAL_TOOL, n, product_ids=ids),))

    @staticmethod
    def _read_searches(messages: list[Message], beliefs: _Beliefs) -> dict[str, bool]:
        """File every search's hits under its item; return the latest stock flag of every product seen."""
        stock: dict[str, bool] = {}
        for call, result in tool_results(messages):
            data = result.json()
            if call.name != "catalog_search" or not isinstance(data, dict):
                continue
            hits = data.get("results", [])
            for h in hits:
                stock[h["product_id"]] = bool(h.get("in_stock"))
            it = beliefs.items.get(str(call.arguments.get("query", "")))
            if it is not None:
                it.searched = True
                it.refined = it.refined or bool(call.arguments.get("category"))
                it.results.extend(hits)
        return stock

    @staticmethod
    def _choose(it: _Item, beliefs: _Beliefs, stock: dict[str, bool]) -> None:
        """The cheapest in-stock, decently rated hit meeting the requirements, in the item's category."""
        if not it.results:
            return
        if it.leaf is None:  # the top hits' majority leaf
            it.leaf = Counter(_leaf_of(h) for h in it.results[:5]).most_common(1)[0][0]
        ok = [h for h in it.results if _leaf_of(h) == it.leaf and stock.get(h["product_id"], False)
              and h["product_id"] not in beliefs.excluded and beliefs.fits(h)]
        decent = [h for h in ok if h.get("rating", 0) >= DECENT_RATING] or ok
        it.choice = min(decent, key=lambda h: (h["price"], h["product_id"])) if decent else None

    @staticmethod
    def _searches(beliefs: _Beliefs) -> list[dict[str, Any]]:
        """Searches still to run: unsearched items, then (once each) a filtered search in the item's
        category for items with no fitting hit, or the priciest items while the bundle is over budget."""
        out: list[dict[str, Any]] = [{"query": it.query, "limit": SEARCH_LIMIT, **beliefs.filters}
                                     for it in beliefs.items.values() if not it.searched]
        if out:
            return out
        chosen = [it for it in beliefs.items.values() if it.choice]
        total = sum(it.choice["price"] for it in chosen)  # type: ignore[index]
        over = beliefs.budget is not None and total > beliefs.budget
        for it in sorted(beliefs.items.values(), key=lambda i: -(i.choice or {"price": 1e9})["price"]):
            if it.refined or it.leaf is None or (it.choice and not over):
                continue
            args: dict[str, Any] = {"query": it.query, "category": it.leaf, "limit": SEARCH_LIMIT,
                                    **beliefs.filters}
            if it.choice and over:
                excess = total - beliefs.budget  # type: ignore[operator]
                cap = it.choice["price"] - excess / max(len(chosen), 1)
                args["max_price"] = max(round(cap, 2), 0.01)
            out.append(args)
        return out


class BundleRandom:
    """One or two searches with words of the opening, then a few random retrieved ids."""

    name = "random"
    reads_hidden_goal = False

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        opening = next((m.text for m in messages if m.role == "user"), "")
        rng = seeded_rng("bundle-random", opening)
        words = [w for w in re.findall(r"[A-Za-z]{4,}", opening)] or ["gift"]
        retrieved: list[str] = []
        for _, result in tool_results(messages):
            data = result.json()
            if isinstance(data, dict):
                retrieved += [h["product_id"] for h in data.get("results", [])
                              if h["product_id"] not in retrieved]
        searches = sum(1 for c, _ in tool_results(messages) if c.name == "catalog_search")
        n = len(messages)
        if retrieved and searches >= 1:
            k = min(len(retrieved), rng.randint(3, 6))
            return AgentAction(tool_calls=(_call(FINAL_TOOL, n, product_ids=rng.sample(retrieved, k)),))
        if searches >= 2:
            return AgentAction(text="Sorry, I couldn't find anything for you.")
        if status.calls_left < status.tool_budget:
            return AgentAction(text="Let me keep looking.")
        query = " ".join(rng.sample(words, min(2, len(words))))
        return AgentAction(tool_calls=(_call("catalog_search", n, query=query),))
