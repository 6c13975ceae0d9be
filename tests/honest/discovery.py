"""Honest agent for E_PD: ask for the requirements the customer hinted at, search with the
filters, check every requirement, recommend the best k valid in-stock products."""
from __future__ import annotations

import collections
import re

from .common import Session, fix_typos
from .ranking import VOCAB, Ranker, Reqs, leaf, noun_match, parse_reqs


def find_noun(opening: str) -> str | None:
    # the product kind is one of the values the customer states exactly: read it as written
    m = re.search(r"\b(?:for|find|need)\s+(?:a new |some new |new )?(?:a pair of |an? |s+o+m+e+ )(.+?)(?:\?|\.|!|,)", opening, re.I)
    if m:
        return m.group(1).strip()
    t = fix_typos(opening, VOCAB)
    for pat in [r"(?:help me find|looking for|I need|find me|shopping for|searching for|want)\s+(?:a new |some new |new )?(?:a pair of |pairs of |an? |some )?(.+?)(?:\?|\.|!|,| that | with | under )"]:
        m = re.search(pat, t, re.I)
        if m:
            n = m.group(1).strip()
            n = re.sub(r"^(new|pair of)\s+", "", n)
            return n
    return None


class DiscoveryAgent:
    def __init__(self, s: Session):
        self.s = s

    def text(self) -> str:
        return " ".join(self.s.customer_said)

    def ask_more(self, reqs: Reqs) -> None:
        s = self.s
        have = reqs.describe()
        q = s.pick(
            f"I'd be happy to help you find the right {reqs.noun or 'product'}! You mentioned a few more requirements. What else matters to you?",
            f"Sure! So far I have: {have or 'no specific requirements'}. Could you tell me your other requirements (for example budget, brand, rating, delivery time or features)?",
            "Happy to help. Before I search, could you list everything else that matters to you, like your budget, a preferred brand, minimum rating, delivery time, or specific features?",
            "Could you tell me your budget and whether you have a preferred brand, plus anything else that matters to you?",
        )
        s.say(q)

    def run(self) -> None:
        s = self.s
        reqs = parse_reqs(s.opening)
        reqs.noun = find_noun(s.opening)
        if reqs.more:
            self.ask_more(reqs)
            reqs = parse_reqs(self.text(), Reqs(noun=reqs.noun, k=reqs.k))
        self.reqs = reqs
        rk = Ranker(s, reqs)
        picks = self.search_and_pick(rk)
        if not picks and s.turns_left() > 1:
            # widen: the requirement words in the query too
            picks = self.search_and_pick(rk, wide=True)
        if not picks:
            # nothing passes every check: the closest in-stock matches rather than nothing
            near = sorted((p for p in rk.seen.values() if p.get("in_stock", True)),
                          key=lambda p: (len(rk.check(p).why), rk.rank_key(p)))
            picks = [p["product_id"] for p in near[:1]]
        s.final("recommend_products", product_ids=picks[: reqs.k])

    def search_and_pick(self, rk: Ranker, wide: bool = False) -> list[str]:
        s = self.s
        reqs = self.reqs
        noun = reqs.noun or "product"
        filt = {}
        if reqs.max_price is not None:
            filt["max_price"] = reqs.max_price
        if reqs.min_rating is not None:
            filt["min_rating"] = reqs.min_rating
        if reqs.max_ship is not None:
            filt["max_ship_days"] = reqs.max_ship
        if reqs.brand:
            filt["brand"] = reqs.brand
        if reqs.attrs:
            filt["features"] = list(reqs.attrs.values())  # "Only products available with every one of these values"
        attr_words = " ".join(v for v in reqs.attrs.values())
        if rk.leaf is None:
            res = rk.search(noun if not wide else f"{attr_words} {noun}".strip(), **filt)
            leaves = collections.Counter(leaf(p["category"]) for p in res if noun_match(noun, p["title"]))
            if not leaves and s.turns_left() > 2:
                # the filters hid the kind: look at the kind alone
                if s.calls_left() <= 0:
                    s.say("Let me make sure I search the right product category.")
                res = rk.search(noun)
                leaves = collections.Counter(leaf(p["category"]) for p in res if noun_match(noun, p["title"]))
            if not leaves:
                leaves = collections.Counter(leaf(p["category"]) for p in res)
            if leaves:
                rk.leaf = leaves.most_common(1)[0][0]
        return pick_fresh(s, rk, reqs, f"{attr_words} {noun}".strip(), filt)


def pick_fresh(s: Session, rk: Ranker, reqs: Reqs, query: str, filt: dict, extra_queries=()) -> list[str]:
    """Choose k valid products whose stock was read in the final turn. Each turn starts with one
    filtered search (fresh stock for everything it lists), then reads details where the title
    cannot settle a requirement. A progress message (a turn) is spent only when short."""
    queries = [query] + list(extra_queries) + ([reqs.noun] if reqs.noun and reqs.noun != query else [])
    progress = 0
    turn_searches = 0
    searched = 0
    while True:
        if s.calls_left() > 0:
            q = queries[turn_searches % len(queries)]
            turn_searches += 1
            searched += 1
            rk.search(q, category=rk.leaf, **filt) if rk.leaf else rk.search(q, **filt)

        def pool():
            return sorted((p for p in rk.seen.values() if rk.check(p).ok), key=rk.rank_key)
        if len(pool()) < reqs.k and s.calls_left() > 0 and turn_searches < len(queries):
            q = queries[turn_searches % len(queries)]
            turn_searches += 1
            rk.search(q, category=rk.leaf, **filt) if rk.leaf else rk.search(q, **filt)
        picks = []
        for p in pool():
            if len(picks) >= reqs.k:
                break
            pid = p["product_id"]
            c = rk.check(rk.seen[pid])
            if c.unsure or not rk.fresh(pid):
                if s.calls_left() <= 0:
                    continue
                rk.detail(pid)
                c = rk.check(rk.seen[pid])
            if c.ok and not c.unsure:
                picks.append(pid)
        pending = [p for p in pool() if p["product_id"] not in picks]
        if len(picks) >= reqs.k or s.turns_left() <= 1 or progress >= 3 or (not pending and searched):
            picks.sort(key=lambda pid: rk.rank_key(rk.seen[pid]))
            return picks
        progress += 1
        s.say(s.pick("I'm comparing a few options for you, one moment.",
                     "Still checking the details of the best matches, thanks for your patience.",
                     "I've found some good candidates and I'm double-checking them against everything you asked for."))
