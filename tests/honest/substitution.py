"""Honest agent for E_SUB: look the sold-out product up, ask for the requirements the customer
hinted at, recommend in-stock substitutes of the same kind that meet every requirement."""
from __future__ import annotations

import re

from .common import Session, fuzzy_in
from .discovery import pick_fresh
from .ranking import Ranker, Reqs, leaf, parse_reqs


def find_original(opening: str) -> str | None:
    for pat in [r"buy the (.+?),? (?:a+g+a*i+n+|agian|agan|aagin)\b", r"buy the (.+?),? (?:\w+ )?(?:but|bt|btu) (?:it|its|it's|it''s)\b", r"[Mm]y (?:usual|regular|old) (.+?) (?:is|are) (?:out of stock|sold out)",
                r"[Mm]y \w+ (.+?) (?:is|are) out of stock", r"the (.+?),? (?:is|are) out of stock"]:
        m = re.search(pat, opening)
        if m:
            return m.group(1).strip()
    return None


def short(title: str) -> str:
    return re.split(r",| - | \(| \[", title)[0].strip()


class SubstitutionAgent:
    def __init__(self, s: Session):
        self.s = s

    def text(self) -> str:
        return " ".join(self.s.customer_said)

    def run(self) -> None:
        s = self.s
        reqs = parse_reqs(s.opening)
        orig_name = find_original(s.opening)
        reqs.original = orig_name
        if reqs.more:
            s.say(s.pick(
                f"I'm sorry the {orig_name or 'item'} is out of stock! I'll find you a good substitute. You mentioned other requirements; what else matters to you?",
                "Sorry about that! Before I look for alternatives, could you tell me your other requirements (budget, brand, rating, delivery time, features)?",
                "Happy to find a replacement. Could you tell me your budget and whether you have a preferred brand, plus anything else that matters to you?",
            ))
            reqs = parse_reqs(self.text(), Reqs(k=reqs.k, original=orig_name))
        rk = Ranker(s, reqs)
        # the original: its kind, and what it is like
        orig = None
        res = rk.search(orig_name or "product")
        for p in res:
            if orig_name and short(p["title"]).lower() == orig_name.lower():
                orig = p
        if orig is None:
            for p in res:
                if orig_name and fuzzy_in(short(p["title"]), orig_name, 0.9):
                    orig = p
        if orig is not None:
            rk.leaf = leaf(orig["category"])
            rk.exclude.add(orig["product_id"])
        elif res:
            rk.leaf = leaf(res[0]["category"])
        filt = {}
        if reqs.max_price is not None:
            filt["max_price"] = reqs.max_price
        if reqs.min_rating is not None:
            filt["min_rating"] = reqs.min_rating
        if reqs.max_ship is not None:
            filt["max_ship_days"] = reqs.max_ship
        if reqs.brand:
            filt["brand"] = reqs.brand
        if reqs.max_price is not None and reqs.attrs:
            # as the tool describes max_price: the variant the customer needs is priced when named
            filt["features"] = list(reqs.attrs.values())
        noun = rk.leaf or "product"
        reqs.noun = noun
        attr_words = " ".join(reqs.attrs.values())
        picks = pick_fresh(s, rk, reqs, f"{attr_words} {noun}".strip(), filt)
        picks = [p for p in picks if p not in rk.exclude]
        if not picks:
            near = sorted((p for p in rk.seen.values() if p.get("in_stock", True) and p["product_id"] not in rk.exclude),
                          key=lambda p: (len(rk.check(p).why), rk.rank_key(p)))
            picks = [p["product_id"] for p in near[:1]]
        s.final("recommend_products", product_ids=picks[: reqs.k])
