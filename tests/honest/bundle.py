"""Honest agent for E_BUNDLE: get the full list, the budget and the requirements, pick one
in-stock product per item that meets them, keep the total within budget, submit."""
from __future__ import annotations

import collections
import re

from .common import Session, fix_typos
from .ranking import VOCAB, leaf, noun_match

EXTRA = "need needs also budget total note please products rated stars higher arrive within days everything only requirement special fixed sensible".split()


def _strip_article(part: str) -> str:
    import difflib
    m = re.match(r"^(\S+)\s+(.+)$", part)
    if not m:
        return part
    w = m.group(1).lower()
    if w in ("a", "an", "some") or (len(w) <= 5 and difflib.SequenceMatcher(None, w, "some").ratio() >= 0.6):
        return m.group(2)
    if w == "a" and m.group(2).startswith("pair of "):
        return m.group(2)[8:]
    return part


def items_in(text: str) -> list[str]:
    out = []
    segs = []
    for m in re.finditer(r"(?:^|[.!?]\s+)[^.!?:]{0,60}?:\s*(.+?)(?:\.(?:\s|$))", text):
        segs.append(m.group(1))
    for m in re.finditer(r"\bI \w{2,5} n[a-z]{2,4}\s+(.+?)(?:\.(?:\s|$))", text):
        segs.append(m.group(1))
    for seg in segs:
        for part in re.split(r";\s*|,\s*(?:and|&)\s+", seg):
            part = re.sub(r"^(?:and|&)\s+", "", part.strip())
            part = re.sub(r"^a pair of\s+", "", part)
            part = _strip_article(part).strip(" .")
            if part and len(part) < 60 and not re.search(r"\b(other|more|thing|things|thinggs|well|too|budget|requirement|rated|arrive|stars)\b", part, re.I):
                out.append(part)
    seen = []
    for p in out:
        if p.lower() not in [x.lower() for x in seen]:
            seen.append(p)
    return seen


class BundleAgent:
    def __init__(self, s: Session):
        self.s = s

    def text(self) -> str:
        return " ".join(self.s.customer_said)

    def reqs(self):
        t = fix_typos(self.text(), VOCAB + EXTRA)
        budget = None
        m = re.findall(r"budget is \$(\d[\d,]*(?:\.\d+)?)", t)
        if m:
            budget = float(m[-1].replace(",", ""))
        rating = None
        m = re.findall(r"rated ([\d.]*\d) stars? or higher", t)
        if m:
            rating = float(m[-1])
        ship = None
        m = re.findall(r"arrive within (\d+) days?", t)
        if m:
            ship = int(m[-1])
        return budget, rating, ship

    def run(self) -> None:
        s = self.s
        op = fix_typos(s.opening, VOCAB + EXTRA)
        more = re.search(r"not everything|a bit more|few other things|more things|budget in mind|budget to stick|requirement", op, re.I)
        if more:
            s.say(s.pick(
                "Sounds like a fun project! What else do you need for it, what's your budget, and are there any requirements the products must meet?",
                "Happy to put that list together. Could you tell me the other items you need, your total budget, and any requirements (rating, delivery time, ...)?",
                "Great! Before I start: what are the remaining items on your list, what budget should I stay within, and is there anything every product must meet?",
            ))
        wanted = items_in(s.opening)
        for reply in s.customer_said[1:]:
            for it in items_in(reply):
                if it.lower() not in [w.lower() for w in wanted]:
                    wanted.append(it)
        budget, rating, ship = self.reqs()
        chosen: dict[str, dict] = {}
        cands: dict[str, list[dict]] = {}
        for noun in wanted:
            if s.calls_left() <= 0:
                s.say(s.pick("I'm still putting your list together, one moment.",
                             "Making good progress on your list; a few more items to find."))
            filt = {}
            if rating is not None:
                filt["min_rating"] = rating
            if ship is not None:
                filt["max_ship_days"] = ship
            ok, r = s.tool("catalog_search", query=noun, limit=20, **filt)
            res = r.get("results", []) if ok and isinstance(r, dict) else []
            good = [p for p in res if p.get("in_stock", True) and noun_match(noun, p["title"])
                    and (rating is None or p["rating"] >= rating) and (ship is None or p["ship_days"] <= ship)]
            if good:
                lf = collections.Counter(leaf(p["category"]) for p in good).most_common(1)[0][0]
                good = [p for p in good if leaf(p["category"]) == lf]
            cands[noun] = sorted(good, key=lambda p: p["price"])
            if cands[noun]:
                chosen[noun] = cands[noun][0]
        self.chosen, self.cands, self.filt = chosen, cands, (rating, ship)
        self.replace_sold_out()
        self.fit_budget(budget)
        ids = [p["product_id"] for p in chosen.values()]
        total = sum(p["price"] for p in chosen.values())
        if s.turns_left() > 2 and chosen:
            lines = "; ".join(f"{n}: {p['title'].split(',')[0]} (${p['price']:.2f})" for n, p in chosen.items())
            s.say(s.pick(
                f"Here's the list I put together: {lines}. Total ${total:.2f}" + (f", within your ${budget:g} budget" if budget else "") + ". Shall I finalize it?",
                f"Proposed list: {lines}. That comes to ${total:.2f}. Does this work for you?",
            ))
            self.replace_sold_out()
            self.fit_budget(budget)
        ids = [p["product_id"] for p in chosen.values()]
        s.final("submit_bundle", product_ids=ids)

    def fit_budget(self, budget) -> None:
        """Over budget: look for cheaper choices for the priciest items."""
        s = self.s
        if budget is None:
            return
        tried = set()
        rating, ship = self.filt
        while sum(p["price"] for p in self.chosen.values()) > budget and s.turns_left() > 1:
            noun, p = max(((n, q) for n, q in self.chosen.items() if n not in tried), key=lambda x: x[1]["price"], default=(None, None))
            if noun is None:
                return
            tried.add(noun)
            if s.calls_left() <= 0:
                s.say("The list is a little over your budget; let me find cheaper options.")
            filt = {"max_price": round(p["price"] - 0.01, 2)}
            if rating is not None:
                filt["min_rating"] = rating
            if ship is not None:
                filt["max_ship_days"] = ship
            ok, r = s.tool("catalog_search", query=noun, limit=20, category=leaf(p["category"]), **filt)
            res = r.get("results", []) if ok and isinstance(r, dict) else []
            alts = sorted((c for c in res if c.get("in_stock", True) and c["price"] < p["price"]), key=lambda c: c["price"])
            if alts:
                self.chosen[noun] = alts[0]

    def replace_sold_out(self) -> None:
        """The customer says when something sold out: swap in a fresh in-stock choice."""
        s = self.s
        gone = set()
        for said in s.customer_said[1:]:
            if re.search(r"sold out|out of stock", said, re.I):
                gone.update(re.findall(r"\bP\d{5,}\b", said))
        rating, ship = self.filt
        for noun, p in list(self.chosen.items()):
            if p["product_id"] not in gone:
                continue
            if s.calls_left() <= 0:
                if s.turns_left() <= 1:
                    alts = [c for c in self.cands[noun] if c["product_id"] not in gone]
                    if alts:
                        self.chosen[noun] = alts[0]
                    continue
                s.say(f"Thanks for letting me know, I'll find another {noun}.")
            filt = {}
            if rating is not None:
                filt["min_rating"] = rating
            if ship is not None:
                filt["max_ship_days"] = ship
            ok, r = s.tool("catalog_search", query=noun, limit=20, category=leaf(p["category"]), **filt)
            res = r.get("results", []) if ok and isinstance(r, dict) else []
            alts = sorted((c for c in res if c.get("in_stock", True) and c["product_id"] not in gone), key=lambda c: c["price"])
            if alts:
                self.chosen[noun] = alts[0]
