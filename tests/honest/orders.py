"""Working out which order (and line) a customer means, from their own words and order_list.

What a careful human agent does: read every reference the customer gave (order id, product
name, brand, the variant they mention, the date or "N days ago", "last Wednesday", an
ordinal such as "my second-oldest X order", the note such as "for the holidays") and keep the
orders that fit all of them.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from .common import fuzzy_in, words

ORD_RE = re.compile(r"\bORD-\d+\b")
MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], 1)}
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
ORDINALS = {"": 1, "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
            "seventh": 7, "eighth": 8, "2nd": 2, "3rd": 3, "4th": 4, "5th": 5}


@dataclass
class Item:
    order_id: str
    placed_on: str
    status: str
    note: str
    text: str          # "Glowmint RadiantGlow Sunscreen (Spray) x1"
    name: str          # "Glowmint RadiantGlow Sunscreen"
    variant: str       # "Spray"
    index: int         # position in order_list (0 = newest)


def parse_items(order_list: dict[str, Any]) -> list[Item]:
    out = []
    for i, o in enumerate(order_list.get("orders", [])):
        for it in o.get("items", []):
            m = re.match(r"^(.*?)(?: \(([^)]*)\))?(?: x\d+)?$", it)
            name = m.group(1) if m else it
            var = (m.group(2) or "") if m else ""
            out.append(Item(o["order_id"], o.get("placed_on", ""), o.get("status", ""),
                            o.get("note") or "", it, name, var, i))
    return out


def singular(w: str) -> str:
    if w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith("ses") or w.endswith("xes"):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def type_phrase(text: str) -> str | None:
    """The kind of product the customer names ("the sunscreen I ordered", "my oldest X order")."""
    t = text.lower()
    pats = [
        r"(?:my|the)\s+(?:(?:second|third|fourth|fifth|2nd|3rd|4th)[- ]?)?(?:most recent|newest|latest|oldest|earliest)\s+(.+?)\s+order\b",
        r"(?:return|exchange|status of|where|with|about)\s+(?:the|my)\s+(.+?)\s+(?:i|that i|we)\s+(?:ordered|bought|got|purchased)",
        r"(?:the|my)\s+(.+?)\s+(?:i|that i)\s+(?:ordered|bought|purchased)",
        r"(?:return|exchange)\s+the\s+(.+?)\s+from my order",
    ]
    for p in pats:
        m = re.search(p, t)
        if m:
            ph = m.group(1).strip()
            ph = re.sub(r"^(a|an|the|some|my)\s+", "", ph)
            return ph
    return None


def matches_type(item: Item, phrase: str) -> bool:
    name_w = [singular(w) for w in words(item.name)]
    ph_w = [singular(w) for w in words(phrase)]
    if not ph_w:
        return False
    # the phrase's last words are the product noun: they must all be in the title
    joined = " ".join(name_w)
    return " ".join(ph_w) in joined or all(w in name_w for w in ph_w[-2:])


def parse_date_refs(text: str, today: dt.date | None) -> list[dt.date]:
    t = text.lower()
    out: list[dt.date] = []
    for m in re.finditer(r"\b(january|february|march|april|may|june|july|august|september|october|november|december)\s+(\d{1,2})\b", t):
        year = today.year if today else 2026
        try:
            out.append(dt.date(year, MONTHS[m.group(1)], int(m.group(2))))
        except ValueError:
            pass
    for m in re.finditer(r"\b(\d{4}-\d{2}-\d{2})\b", t):
        out.append(dt.date.fromisoformat(m.group(1)))
    if today:
        for m in re.finditer(r"\b(\d+)\s+days?\s+ago\b", t):
            out.append(today - dt.timedelta(days=int(m.group(1))))
        for m in re.finditer(r"\b(a|one|two|three|\d+)\s+weeks?\s+ago\b", t):
            n = {"a": 1, "one": 1, "two": 2, "three": 3}.get(m.group(1)) or int(m.group(1))
            out.append(today - dt.timedelta(days=7 * n))
        if re.search(r"\byesterday\b", t):
            out.append(today - dt.timedelta(days=1))
        if re.search(r"\btoday\b", t):
            out.append(today)
        for m in re.finditer(r"\blast\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", t):
            wd = WEEKDAYS.index(m.group(1))
            delta = (today.weekday() - wd) % 7
            if delta == 0:
                delta = 7
            out.append(today - dt.timedelta(days=delta))
        for m in re.finditer(r"\b(?:on|this)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", t):
            wd = WEEKDAYS.index(m.group(1))
            delta = (today.weekday() - wd) % 7
            out.append(today - dt.timedelta(days=delta))
    return out


def parse_ordinal(text: str) -> tuple[int, str] | None:
    """(n, 'new'|'old') for "my second-oldest X order", "my most recent X order"."""
    t = text.lower()
    m = re.search(r"\b(?:(second|third|fourth|fifth|sixth|2nd|3rd|4th|5th)[- ]?)?(most recent|newest|latest|oldest|earliest)\b", t)
    if not m:
        return None
    n = ORDINALS.get(m.group(1) or "", 1)
    end = "old" if m.group(2) in ("oldest", "earliest") else "new"
    return n, end


STOP = {"for", "the", "my", "our", "a", "an", "of", "to", "gift", "as"}


def note_said(note: str, text: str) -> bool:
    nw = [w for w in words(note) if w not in STOP]
    tw = set(words(text))
    return bool(nw) and all(w in tw for w in nw)


@dataclass
class Resolution:
    candidates: list[Item]
    type_set: list[Item]
    used: list[str]


def resolve(text: str, items: list[Item], today: dt.date | None,
            placed_at: dict[str, str] | None = None) -> Resolution:
    """Keep the order items that fit everything the customer said (all their messages)."""
    used: list[str] = []
    ids = ORD_RE.findall(text)
    if ids:
        c = [it for it in items if it.order_id in ids]
        if c:
            return Resolution(c, c, ["order id"])
    tp = None
    # Every type phrase the customer used; the last found is usually the most specific.
    for seg in re.split(r"(?<=[.!?;])\s+|; in other words, ", text):
        ph = type_phrase(seg)
        if ph:
            tp = ph if tp is None else tp
    # product names mentioned in full
    names = sorted({it.name for it in items}, key=len, reverse=True)
    named = [n for n in names if fuzzy_in(n, text, 0.9)]
    cands = list(items)
    if named:
        cands = [it for it in cands if it.name in named]
        used.append("name")
    if tp:
        typed = [it for it in items if matches_type(it, tp)]
        if not typed:
            # the type phrase may carry a brand or variant ("the Beef dog treats")
            wl = words(tp)
            for k in range(1, len(wl)):
                sub = " ".join(wl[k:])
                typed = [it for it in items if matches_type(it, sub)]
                if typed:
                    break
        if typed:
            type_set = typed
            cands = [it for it in cands if it in typed]
            used.append(f"type:{tp}")
        else:
            type_set = cands
    else:
        type_set = cands
    # brand / variant / note words
    def keep(pred, label):
        nonlocal cands
        k = [it for it in cands if pred(it)]
        if k and len(k) < len(cands):
            cands = k
            used.append(label)
    brands = {" ".join(it.name.split()[:n]) for it in type_set for n in (1, 2, 3)}
    said_brands = [b for b in brands if len(b) > 3 and re.search(r"\b" + re.escape(b.lower()) + r"\b", text.lower())]
    if said_brands and not named:
        keep(lambda it: any(it.name.lower().startswith(b.lower() + " ") for b in said_brands), "brand")
    keep(lambda it: bool(it.variant) and re.search(r"(?<![\w'-])" + re.escape(it.variant.lower()) + r"(?![\w'-])", text.lower()) is not None, "variant")
    keep(lambda it: bool(it.note) and note_said(it.note, text), "note")
    dates = parse_date_refs(text, today)
    if dates:
        ds = {d.isoformat() for d in dates}
        keep(lambda it: it.placed_on in ds, "date")
    ordn = parse_ordinal(text)
    if ordn and len(cands) > 1:
        n, end = ordn
        pool = sorted(type_set, key=lambda it: (placed_at or {}).get(it.order_id, it.placed_on) + f"{1000 - it.index:04d}")
        if end == "new":
            pool = pool[::-1]
        if len(pool) >= n:
            cands = [pool[n - 1]]
            used.append(f"ordinal:{n}-{end}")
    return Resolution(cands, type_set, used)
