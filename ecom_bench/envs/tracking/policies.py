"""Scripted E_TRACK agents, and the agent-side order mechanics E_RETURN reuses.

- `TrackingOracle` reads the hidden goal: order_list (which shows every id), then
  report_order_status, within B_tool.
- `TrackingHeuristic` is honest: it takes an order id the customer typed, or lists the
  orders and ranks them by fuzzy word overlap with what the customer said (titles,
  variant values, notes, and dates, turning "3 days ago" into a date with
  datetime_now), asks once when the best match is not unique, then reports.
- `TrackingRandom`: order_list, then a random order (seeded by the opening) and its
  listed status.
All three are pure functions of the conversation, so they also run inside E_JOURNEY.
"""

from __future__ import annotations

import difflib
import json
import re
from datetime import date, timedelta
from functools import lru_cache
from typing import Any

from ecom_bench._seeding import seeded_rng
from ecom_bench.agents.base import AgentAction, Message, ToolCallRequest, calls_since_last_message, tool_results
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.tracking.references import ORDER_ID_RE

Call = tuple[str, dict[str, Any]]


# ------------------------------------------------------------ shared mechanics
def call(name: str, n: int, i: int = 0, **arguments: Any) -> ToolCallRequest:
    return ToolCallRequest(name, arguments, id=f"{name}-{n}-{i}")


def _key(name: str, arguments: dict[str, Any]) -> str:
    return name + json.dumps(arguments, sort_keys=True)


def follow_plan(messages: list[Message], budget: int, calls: list[Call], final: Call,
                wait_text: str = "I'm looking into this for you now.") -> AgentAction:
    """The next step of a fixed plan: its not-yet-successful calls within B_tool per turn, then `final`."""
    done = {_key(c.name, c.arguments) for c, r in tool_results(messages) if not r.error}
    remaining = [c for c in calls if _key(*c) not in done]
    n = len(messages)
    if not remaining:
        return AgentAction(tool_calls=(call(final[0], n, 0, **final[1]),))
    room = budget - calls_since_last_message(messages)
    if room <= 0:
        return AgentAction(text=wait_text)
    chunk = remaining[:room]
    if len(chunk) == len(remaining):
        chunk = [*chunk, final]
    return AgentAction(tool_calls=tuple(call(name, n, i, **args) for i, (name, args) in enumerate(chunk)))


def budget_from_prompt(messages: list[Message]) -> int:
    """B_tool as the system prompt states it (what an honest agent knows)."""
    system = next((m.text for m in messages if m.role == "system"), "")
    m = re.search(r"at most (\d+) tool call", system)
    return int(m.group(1)) if m else 1


def user_texts(messages: list[Message]) -> list[str]:
    return [m.text for m in messages if m.role == "user"]


def asked_before(messages: list[Message]) -> int:
    """How many questions the agent has put to the customer so far."""
    n = sum(1 for m in messages if m.role == "assistant" and not m.tool_calls and "?" in m.text)
    return n + sum(1 for m in messages for c in m.tool_calls if c.name == "ask_user")


def listed_orders(messages: list[Message]) -> dict[str, dict[str, Any]]:
    """Order rows from order_list results (merged with order_get details), by order id."""
    rows: dict[str, dict[str, Any]] = {}
    for c, r in tool_results(messages):
        data = r.json() if not r.error else None
        if c.name == "order_list" and isinstance(data, dict):
            for row in data.get("orders", []):
                rows.setdefault(row["order_id"], {}).update(row)
        if c.name == "order_get" and isinstance(data, dict) and "order_id" in data:
            rows.setdefault(data["order_id"], {}).update(data)
    return rows


def today_from(messages: list[Message]) -> date | None:
    for c, r in tool_results(messages):
        data = r.json() if not r.error else None
        if c.name == "datetime_now" and isinstance(data, dict):
            return date.fromisoformat(data["date"])
    return None


def said_order_ids(texts: list[str]) -> list[str]:
    return [m.upper() for t in texts for m in ORDER_ID_RE.findall(t)]


# ------------------------------------------------------------------ ranking
STOPWORDS = frozenset("""
a about after again ago all also am an and any anything are as at be because been but buy bought by can check
could current did do does dont don't for from get got happening has have hello hey hi how i i'd i'll i'm if in
into is it it's its just know like look looking me mean meant my need no not now of on one or order ordered
orders please pls recently said so some something status tell thanks thank thx that that's the their them then
there this to u ur wanna want was what what's when where which with wondering would yes you your 4 2 ok days
day today yesterday week i've
""".split())
MONTHS = {m: i + 1 for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july",
                                          "august", "september", "october", "november", "december"))}
_DATE = re.compile(r"\bon ([a-z]+) (\d{1,2})\b")
_DAYS_AGO = re.compile(r"\b(\d{1,3}) days ago\b")


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9][a-z0-9'\-.]*[a-z0-9]|[a-z0-9]", text.lower())


def content_words(text: str) -> list[str]:
    return [w for w in words(ORDER_ID_RE.sub(" ", text)) if w not in STOPWORDS and w not in MONTHS]


@lru_cache(maxsize=1 << 15)
def word_match(a: str, b: str) -> bool:
    if a == b:
        return True
    if min(len(a), len(b)) <= 3:
        return False
    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.8


def needs_clock(text: str) -> bool:
    low = text.lower()
    return bool(_DAYS_AGO.search(low)) or "yesterday" in low or "today" in low


def mentioned_dates(text: str, today: date | None) -> set[tuple[int, int]]:
    """(month, day) pairs the customer named, absolute or relative to `today`."""
    low = text.lower()
    out = {(MONTHS[m], int(d)) for m, d in _DATE.findall(low) if m in MONTHS}
    if today is not None:
        for n in _DAYS_AGO.findall(low):
            day = today - timedelta(days=int(n))
            out.add((day.month, day.day))
        for word, n in (("yesterday", 1), ("today", 0)):
            if word in low:
                day = today - timedelta(days=n)
                out.add((day.month, day.day))
    return out


def item_labels(row: dict[str, Any]) -> list[str]:
    if "lines" in row:
        labels = []
        for ln in row["lines"]:
            extra = " ".join(str(v) for k, v in ln.items() if k not in ("line_id", "product_id", "variant_id",
                                                                         "quantity", "unit_price", "category",
                                                                         "return_state", "title"))
            labels.append(f"{ln['title']} {extra}")
        return labels
    return list(row.get("items", []))


def score_order(row: dict[str, Any], cue_words: list[str], dates: set[tuple[int, int]]) -> float:
    """Fuzzy overlap of the customer's words with one order: best item + note, plus a date match."""
    best_item = 0
    for label in item_labels(row):
        lw = set(words(label))
        best_item = max(best_item, sum(1 for w in cue_words if any(word_match(w, x) for x in lw)))
    note_w = set(words(row.get("note") or ""))
    note = sum(1 for w in cue_words if any(word_match(w, x) for x in note_w))
    placed = date.fromisoformat(str(row.get("placed_on") or row.get("placed_at"))[:10])
    return best_item + note + (3 if (placed.month, placed.day) in dates else 0)


def rank_orders(rows: dict[str, dict[str, Any]], text: str, today: date | None) -> list[tuple[float, str]]:
    """Orders by score (best first; ties newest first)."""
    cue = content_words(text)
    dates = mentioned_dates(text, today)
    scored = [(score_order(r, cue, dates), str(r.get("placed_on") or r.get("placed_at")), oid)
              for oid, r in rows.items()]
    scored.sort(reverse=True)
    return [(s, oid) for s, _, oid in scored]


def unique_best(ranked: list[tuple[float, str]]) -> str | None:
    if not ranked or ranked[0][0] <= 0:
        return None
    if len(ranked) > 1 and ranked[1][0] >= ranked[0][0]:
        return None
    return ranked[0][1]


WHICH_ORDER = ("Which order do you mean? Could you give me the order number, or tell me when you placed it, "
               "the brand, or what it was for?")


# ------------------------------------------------------------------ policies
class TrackingOracle:
    name = "oracle"
    reads_hidden_goal = True

    def act(self, messages: list[Message], hidden: dict[str, Any] | None) -> AgentAction:
        if hidden is None:
            raise ValueError("the oracle needs the hidden goal")
        g = hidden["goal"]
        budget = Difficulty.from_level(hidden["difficulty"]).tool_budget
        return follow_plan(messages, budget, [("order_list", {})],
                           ("report_order_status", {"order_id": g["order_id"], "status": g["status"]}))


class TrackingHeuristic:
    name = "heuristic"
    reads_hidden_goal = False

    def act(self, messages: list[Message], hidden: dict[str, Any] | None) -> AgentAction:
        n = len(messages)
        room = budget_from_prompt(messages) - calls_since_last_message(messages)
        texts = user_texts(messages)
        text = " ".join(texts)
        rows = listed_orders(messages)
        wait = AgentAction(text="Let me look up your orders.")
        ids = said_order_ids(texts)
        if ids:
            oid = ids[-1]
            if oid in rows and "status" in rows[oid]:
                return AgentAction(tool_calls=(call("report_order_status", n, 0, order_id=oid,
                                                    status=rows[oid]["status"]),))
            failed = any(c.name == "order_get" and c.arguments.get("order_id") == oid and r.error
                         for c, r in tool_results(messages))
            if not failed:
                return AgentAction(tool_calls=(call("order_get", n, 0, order_id=oid),)) if room > 0 else wait
        if not rows:
            return AgentAction(tool_calls=(call("order_list", n),)) if room > 0 else wait
        today = today_from(messages)
        if today is None and needs_clock(text):
            return AgentAction(tool_calls=(call("datetime_now", n),)) if room > 0 else wait
        ranked = rank_orders(rows, text, today)
        best = unique_best(ranked)
        if best is None and not asked_before(messages):
            return AgentAction(text=WHICH_ORDER)
        oid = best or ranked[0][1]
        return AgentAction(tool_calls=(call("report_order_status", n, 0, order_id=oid, status=rows[oid]["status"]),))


class TrackingRandom:
    name = "random"
    reads_hidden_goal = False

    def act(self, messages: list[Message], hidden: dict[str, Any] | None) -> AgentAction:
        rows = listed_orders(messages)
        if not rows:
            return AgentAction(tool_calls=(call("order_list", len(messages)),))
        rng = seeded_rng("tracking-random", next(iter(user_texts(messages)), ""))
        oid = rng.choice(sorted(rows))
        return AgentAction(tool_calls=(call("report_order_status", len(messages), 0, order_id=oid,
                                            status=rows[oid]["status"]),))
