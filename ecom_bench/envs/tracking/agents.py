"""Scripted E_TRACK agents, and the agent-side order mechanics E_RETURN reuses.

- `TrackingOracle` reads the hidden goal: order_list (which shows every id), then
  report_order_status, within B_tool.
- `TrackingHeuristic` is honest: it takes an order id the customer typed, or lists the
  orders and reads the description as a person would (`resolve_items`: words against
  titles, brands, variant values and notes; dates, with "3 days ago" / "last Tuesday"
  turned into a date with datetime_now; "my second-oldest X order" counted among the
  matching orders), asks one plain "which order do you mean?" when the match is not
  unique (a second time if still not), then reports.
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
from dataclasses import dataclass
from typing import Any

from ecom_bench._seeding import seeded_rng
from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, ToolCallRequest, tool_results
from ecom_bench.envs.tracking.references import ORDER_ID_RE

Call = tuple[str, dict[str, Any]]


# ------------------------------------------------------------ shared mechanics
def call(name: str, n: int, i: int = 0, **arguments: Any) -> ToolCallRequest:
    return ToolCallRequest(name, arguments, id=f"{name}-{n}-{i}")


def _key(name: str, arguments: dict[str, Any]) -> str:
    return name + json.dumps(arguments, sort_keys=True)


def follow_plan(messages: list[Message], status: EpisodeStatus, calls: list[Call], final: Call,
                wait_text: str = "I'm looking into this for you now.") -> AgentAction:
    """The next step of a fixed plan: its not-yet-successful calls within B_tool per turn, then `final`."""
    done = {_key(c.name, c.arguments) for c, r in tool_results(messages) if not r.error}
    remaining = [c for c in calls if _key(*c) not in done]
    n = len(messages)
    if not remaining:
        return AgentAction(tool_calls=(call(final[0], n, 0, **final[1]),))
    room = status.calls_left
    if room <= 0:
        return AgentAction(text=wait_text)
    chunk = remaining[:room]
    if len(chunk) == len(remaining):
        chunk = [*chunk, final]
    return AgentAction(tool_calls=tuple(call(name, n, i, **args) for i, (name, args) in enumerate(chunk)))


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


# ------------------------------------------------------------------ resolving a description
STOPWORDS = frozenset("""
a about after again ago all also am an and any anything are as at be because been but buy bought by can check
could current did do does dont don't for from get got happening has have hello hey hi how i i'd i'll i'm if in
into is it it's its just know like look looking me mean meant my need no not now of on one or order ordered
orders please pls recently said so some something status tell thanks thank thx that that's the their them then
there this to u ur wanna want was what what's when where which with wondering would yes you your 4 2 ok days
day today yesterday week i've last as said words other in-other
""".split())
MONTHS = {m: i + 1 for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july",
                                          "august", "september", "october", "november", "december"))}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DATE = re.compile(r"\bon ([a-z]+) (\d{1,2})\b")
_DAYS_AGO = re.compile(r"\b(\d{1,3}) days ago\b")
_LAST_WEEKDAY = re.compile(r"\blast (" + "|".join(WEEKDAYS) + r")\b")
#: "my oldest / second-oldest / most recent / second most recent ... order": a place in time among
#: the orders of that kind (negative: from the newest).
_ORDINAL = re.compile(r"\b(?:(first|second|third)[- ])?(oldest|earliest|most recent|latest|newest)\b")
_NTH = {None: 0, "first": 0, "second": 1, "third": 2}


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9][a-z0-9'\-.]*[a-z0-9]|[a-z0-9]", text.lower())


def content_words(text: str) -> list[str]:
    text = _ORDINAL.sub(" ", ORDER_ID_RE.sub(" ", text.lower()))
    return [w for w in words(text) if w not in STOPWORDS and w not in MONTHS and w not in WEEKDAYS]


@lru_cache(maxsize=1 << 15)
def word_match(a: str, b: str) -> bool:
    if a == b:
        return True
    if min(len(a), len(b)) <= 3:
        return False
    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.8


def needs_clock(text: str) -> bool:
    low = text.lower()
    return bool(_DAYS_AGO.search(low) or _LAST_WEEKDAY.search(low)) or "yesterday" in low or "today" in low


def mentioned_dates(text: str, today: date | None) -> set[tuple[int, int]]:
    """(month, day) pairs the customer named, absolute or relative to `today` ("3 days ago", "last Tuesday")."""
    low = text.lower()
    out = {(MONTHS[m], int(d)) for m, d in _DATE.findall(low) if m in MONTHS}
    if today is not None:
        days = [int(n) for n in _DAYS_AGO.findall(low)]
        days += [n for name in _LAST_WEEKDAY.findall(low) for n in range(2, 9)
                 if (today - timedelta(days=n)).strftime("%A").lower() == name]
        days += [n for word, n in (("yesterday", 1), ("today", 0)) if word in low]
        for n in days:
            day = today - timedelta(days=n)
            out.add((day.month, day.day))
    return out


def mentioned_ordinal(text: str) -> int | None:
    """The place in time the customer named (0 = oldest, -1 = most recent), if any."""
    m = next(reversed(list(_ORDINAL.finditer(text.lower()))), None)  # the last one named
    if m is None:
        return None
    nth = _NTH[m.group(1)]
    return nth if m.group(2) in ("oldest", "earliest") else -1 - nth


@dataclass(frozen=True)
class Item:
    """One line of one order as the agent sees it (order_list's item, or order_get's line)."""

    order_id: str
    index: int  # position among the order's lines
    label: str
    placed: str  # ISO date (order_list) or date-time (order_get)
    note: str
    listed: int  # position in the order list (newest first): orders of one day are listed newest first

    @property
    def when(self) -> tuple[str, int]:
        """Chronological sort key: the day placed, then the listing's order within that day."""
        return self.placed[:10], -self.listed


def listed_items(rows: dict[str, dict[str, Any]]) -> list[Item]:
    out = []
    for k, (oid, row) in enumerate(rows.items()):
        placed = str(row.get("placed_at") or row.get("placed_on"))
        for i, label in enumerate(item_labels(row)):
            out.append(Item(oid, i, label, placed, str(row.get("note") or ""), k))
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
    items = list(row.get("items", []))
    kinds = list(row.get("categories", [])) + [""] * len(items)
    return [f"{item} {kind}".strip() for item, kind in zip(items, kinds, strict=False)]  # kinds padded


def _overlap(cue: list[str], text: str) -> int:
    have = set(words(text))
    return sum(1 for w in cue if any(word_match(w, x) for x in have))


def resolve_items(rows: dict[str, dict[str, Any]], text: str, today: date | None) -> list[Item]:
    """The order lines that fit the customer's description best, as a person would read it.

    Words of the description are matched against each line's title, variant and its
    order's note; a named date (absolute, "3 days ago", "last Tuesday") must match the
    day placed; a place in time ("my second-oldest X order") picks among the best
    matches by date. Returns every line tied for best (empty: nothing matched).
    """
    cue = content_words(text)
    dates = mentioned_dates(text, today)
    scored = []
    for item in listed_items(rows):
        score = _overlap(cue, item.label) + _overlap(cue, item.note)
        placed = date.fromisoformat(item.placed[:10])
        if dates:
            score += 3 if (placed.month, placed.day) in dates else 0
        scored.append((score, item))
    best = max((s for s, _ in scored), default=0)
    if best <= 0:
        return []
    top = sorted((it for s, it in scored if s == best), key=lambda it: it.when)
    nth = mentioned_ordinal(text)
    if nth is not None and len(top) > 1:
        return [top[nth]] if -len(top) <= nth < len(top) else []
    return top


def unique_order(items: list[Item]) -> str | None:
    ids = {it.order_id for it in items}
    return next(iter(ids)) if len(ids) == 1 else None


#: One plain question, as a person would ask it.
WHICH_ORDER = ("Which order do you mean? Could you describe it for me: what it was, and roughly when you "
               "ordered it?")


# ------------------------------------------------------------------ policies
class TrackingOracle:
    name = "oracle"
    reads_hidden_goal = True

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        if hidden is None:
            raise ValueError("the oracle needs the hidden goal")
        g = hidden["goal"]
        return follow_plan(messages, status, [("order_list", {})],
                           ("report_order_status", {"order_id": g["order_id"], "status": g["status"]}))


class TrackingHeuristic:
    name = "heuristic"
    reads_hidden_goal = False
    #: Questions about which order before settling for the likeliest one.
    max_asks = 2

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        n = len(messages)
        room = status.calls_left
        texts = user_texts(messages)
        text = " ".join(texts)
        rows = listed_orders(messages)
        wait = AgentAction(text="Let me look up your orders.")
        ids = said_order_ids(texts)
        if ids:
            oid: str | None = ids[-1]
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
        items = resolve_items(rows, text, today)
        oid = unique_order(items)
        if oid is None and asked_before(messages) < self.max_asks:
            return AgentAction(text=WHICH_ORDER)
        if oid is None:
            pool = items or listed_items(rows)
            oid = max(pool, key=lambda it: it.when).order_id
        return AgentAction(tool_calls=(call("report_order_status", n, 0, order_id=oid, status=rows[oid]["status"]),))


class TrackingRandom:
    name = "random"
    reads_hidden_goal = False

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        rows = listed_orders(messages)
        if not rows:
            return AgentAction(tool_calls=(call("order_list", len(messages)),))
        rng = seeded_rng("tracking-random", next(iter(user_texts(messages)), ""))
        oid = rng.choice(sorted(rows))
        return AgentAction(tool_calls=(call("report_order_status", len(messages), 0, order_id=oid,
                                            status=rows[oid]["status"]),))
