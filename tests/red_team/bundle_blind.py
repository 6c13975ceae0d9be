"""bundle_blind (E_BUNDLE): never reads the opening. Names one arbitrary catalogue id
(P0000001, ids are sequential) in a message; the customer's review reads out every
missing category ("You're still missing a X; a Y; and some Z"), then the budget and
requirements as violations. Search each named item, propose, fix what the review
names, submit."""
from __future__ import annotations
import re
from typing import Any
from ecom_bench.catalog.taxonomy import LEAVES
from ecom_bench.envs.bundle.goal import item_name
from red_team.common import Conv

_MISSING = re.compile(r"(?:missing|need) (.+?)\.(?:\s|$)")
_ARTICLE = re.compile(r"^(?:and\s+)?(?:a|an|some)\s+", re.I)
NOUN2LEAF = {item_name(leaf.name): leaf.name for leaf in LEAVES}


def _items(text: str) -> list[str]:
    """Known item nouns (never noised) named in "... missing a X; a Y; and some Z." sentences."""
    out = []
    for m in _MISSING.finditer(text):
        if "don't need" in text[max(0, m.start() - 8):m.start() + 6] or "only need" in text[max(0, m.start() - 8):m.start() + 6]:
            continue
        for part in m.group(1).split(";"):
            low = part.lower()
            hits = [n for n in NOUN2LEAF if re.search(rf"(?<![a-z]){re.escape(n.lower())}(?![a-z])", low)]
            if hits:
                out.append(max(hits, key=len))
    return out


class BundleBlind:
    name = "bundle_blind"
    reads_hidden_goal = False

    def __init__(self, env: str = "bundle") -> None:
        pass

    def act(self, messages, hidden, status):
        v = Conv(messages)
        replies = v.replies()
        items: list[str] = []
        filters: dict[str, Any] = {}
        drop: set[str] = set()
        for r in replies:
            for it in _items(r):
                if it not in items:
                    items.append(it)
            if m := re.search(r"I want ([\d.]+) stars or higher", r):
                filters["min_rating"] = float(m.group(1))
            if m := re.search(r"within ([\d.]+) days", r):
                filters["max_ship_days"] = int(float(m.group(1)))
            for s in re.split(r"(?<=[.!?])\s+", r):
                if re.search(r"drop|out of stock|sold out|but I", s):
                    drop.update(re.findall(r"\((P\d+)\)", s))
        if not items and not v.last_turn:  # an arbitrary id, no reading of the request
            return v.say(f"How about P{v.turn:07d} to start?")
        # searches: one per item (+ filters), by the item's leaf
        stock: dict[str, dict] = {}
        by_item: dict[str, list[dict]] = {}
        done: set[str] = set()
        for c, res in v.results:
            if c.name != "catalog_search" or res.error:
                continue
            key = c.arguments.get("category", "") + "|" + repr(sorted((k, c.arguments[k]) for k in c.arguments if k in ("min_rating", "max_ship_days")))
            done.add(key)
            for h in (res.json() or {}).get("results", []):
                stock[h["product_id"]] = h
                by_item.setdefault(h["category"].split(" > ")[-1], []).append(h)
        def ok(h):
            return (h.get("in_stock") and h["product_id"] not in drop
                    and h.get("rating", 0) >= filters.get("min_rating", 0)
                    and h.get("ship_days", 99) <= filters.get("max_ship_days", 99))
        todo = []
        for it in items:
            leaf = NOUN2LEAF.get(it.lower())
            if leaf is None:
                continue
            key = leaf + "|" + repr(sorted(filters.items()))
            if key not in done and not any(ok(h) for h in by_item.get(leaf, [])):
                todo.append(("catalog_search", {"query": it, "category": leaf, "limit": 20, **filters}))
        if todo and v.room:
            return v.calls(todo[: v.room])
        if todo and not v.last_turn:
            return v.say("Still looking, one moment.")
        picks = []
        for it in items:
            leaf = NOUN2LEAF.get(it.lower())
            hits = [h for h in by_item.get(leaf, []) if h.get("in_stock") and h["product_id"] not in drop
                    and h.get("rating", 0) >= filters.get("min_rating", 0)
                    and h.get("ship_days", 99) <= filters.get("max_ship_days", 99)]
            if hits:
                picks.append(min(hits, key=lambda h: h["price"])["product_id"])
        confirmed = bool(replies) and re.search(r"looks perfect|that's everything I need|list works for me", replies[-1])
        proposals = [x.text for x in messages if x.role == "assistant" and not x.tool_calls and "Proposed list" in x.text]
        last_prop = proposals[-1] if proposals else None
        msg = "Proposed list: " + ", ".join(picks) + "."
        if picks and not v.last_turn and not (confirmed and last_prop == msg) and v.turn < v.patience - 0:
            if last_prop != msg or not confirmed:
                if v.turn < v.patience - 1 or last_prop != msg:
                    return v.say(msg)
        return v.calls([("submit_bundle", {"product_ids": picks or ["P0000001"]})])
