"""What the discovery and substitution agents share: reading the customer's requirements,
searching with the tool's filters, checking each product against every requirement literally,
and choosing the list to recommend."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .common import Session, fix_typos, words

VOCAB = """
budget spend cost under rated least stars star only buy things with needs ship within days day
delivered less like brand should from must please old one top options picks ones fit meet everything
fewer even matter requirements few well ask way usual stock out instead similar again wanted substitute
suggest help find looking new some pair need send recommend that's there couple other matters just
""".split()


@dataclass
class Reqs:
    noun: str | None = None
    original: str | None = None      # substitution: the sold-out product's name
    k: int = 3
    max_price: float | None = None
    min_rating: float | None = None
    max_ship: int | None = None
    brand: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)   # attribute name -> value
    more: bool = False                # the customer signalled more requirements

    def describe(self) -> str:
        out = []
        if self.max_price is not None:
            out.append(f"under ${self.max_price:g}")
        if self.min_rating is not None:
            out.append(f"rated {self.min_rating:g}+ stars")
        if self.max_ship is not None:
            out.append(f"shipping within {self.max_ship} days")
        if self.brand:
            out.append(f"from {self.brand}")
        for a, v in self.attrs.items():
            out.append(f"{a} {v}")
        return ", ".join(out)


def parse_reqs(text: str, reqs: Reqs | None = None) -> Reqs:
    r = reqs or Reqs()
    t = fix_typos(text, VOCAB)
    m = re.search(r"top (\d+)", t, re.I)
    if m:
        r.k = int(m.group(1))
    M = r"\$(\d[\d,]*(?:\.\d+)?)"
    for pat in [r"budget is " + M, r"spend more than " + M, r"cost under " + M,
                r"under " + M, r"no more than " + M, r"at most " + M,
                r"less than " + M, r"cost (?:up to|below) " + M]:
        for m in re.finditer(pat, t, re.I):
            r.max_price = float(m.group(1).replace(",", ""))
    for pat in [r"rated at least ([\d.]+\d|\d) stars", r"([\d.]+\d|\d)\+ stars", r"at least ([\d.]+\d|\d) stars"]:
        for m in re.finditer(pat, t, re.I):
            r.min_rating = float(m.group(1))
    for pat in [r"ship within (\d+) days?", r"delivered in (\d+) days? or less", r"arrive within (\d+) days?",
                r"delivered within (\d+) days?"]:
        for m in re.finditer(pat, t, re.I):
            r.max_ship = int(m.group(1))
    for pat in [r"I'd like the (.+?) brand", r"should be from ([A-Z][^.,;!?]*?)(?:[.,;!?]|$)", r"from the (.+?) brand",
                r"brand must be ([A-Z][^.,;!?]*?)(?:[.,;!?]|$)", r"only want ([A-Z][^.,;!?]*?) products"]:
        for m in re.finditer(pat, t):
            r.brand = m.group(1).strip()
    # attribute names are read from the customer's own words (a typo fixer would "fix" them)
    for m in re.finditer(r"[Tt]he ([A-Za-z][A-Za-z ]*?) m[a-z]{1,4}t?s? be (.+?)(?:,\s*(?:like|lke|liek|please|pls|plz|pleae|pleas|plase)[^.]*)?(?:\.(?:\s|$)|$|;|!)", text):
        attr = m.group(1).strip().lower()
        val = m.group(2).split(",")[0].strip()
        if attr in ("budget", "price", "brand"):
            continue
        r.attrs[attr.replace(" ", "_")] = val
    if re.search(r"not all I need|things that matter|matter to me|more requirements|a few more|there's more|other requirement|just ask|if you need them|not everything", t, re.I):
        r.more = True
    return r


def leaf(cat: str) -> str:
    return cat.split(" > ")[-1]


def singular(w: str) -> str:
    if w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith("ses") or w.endswith("xes") or w.endswith("ches") or w.endswith("shes"):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def noun_match(noun: str, title: str) -> bool:
    nw = [singular(w) for w in words(noun)]
    tw = [singular(w) for w in words(title)]
    return all(w in tw for w in nw[-2:])


MODIFIERS = set("""light dark deep pale rose sage ocean forest sky hot royal navy olive baby space midnight
brushed matte stainless polished oil-rubbed soft bright neon pastel off burnt charcoal heather slate extra super
ultra x-heavy medium""".split())


@dataclass
class Check:
    ok: bool
    why: list[str]
    variant_id: str | None = None
    unsure: bool = False      # the title/variants cannot settle an attribute: read the details


class Ranker:
    """Search, check and choose, with the tool budget of the episode."""

    def __init__(self, s: Session, reqs: Reqs):
        self.s = s
        self.reqs = reqs
        self.seen: dict[str, dict[str, Any]] = {}
        self.details: dict[str, dict[str, Any]] = {}
        self.leaf: str | None = None
        self.exclude: set[str] = set()
        self.fetched: dict[str, int] = {}   # product id -> the turn its stock was last read

    def call(self, name, **args):
        s = self.s
        if s.calls_left() <= 0:
            s.say(s.pick("I'm comparing a few options for you, one moment.",
                         "Still checking the details of the best matches, thanks for your patience.",
                         "Let me verify a couple more products before I recommend them."))
        return s.tool(name, **args)

    def search(self, query: str, **filters) -> list[dict[str, Any]]:
        ok, r = self.call("catalog_search", query=query, limit=20, **filters)
        if not ok or not isinstance(r, dict):
            return []
        res = r.get("results", [])
        if not res and r.get("similar_categories") and "category" in filters:
            return []
        for p in res:
            self.seen[p["product_id"]] = {**self.seen.get(p["product_id"], {}), **p}
            self.fetched[p["product_id"]] = self.s.status().turn
        return res

    def detail(self, pid: str) -> dict[str, Any] | None:
        ok, r = self.call("catalog_get_product", product_id=pid)
        if ok and isinstance(r, dict):
            self.details[pid] = r
            self.fetched[pid] = self.s.status().turn
            self.seen[pid] = {**self.seen.get(pid, {}), **{k: r[k] for k in r if k in ("price", "rating", "ship_days", "in_stock", "variants", "variant_prices", "title", "brand", "category")}}
            return r
        return None

    # ---------------------------------------------------------------- checking
    def variant_attr(self, p: dict[str, Any]) -> str | None:
        d = self.details.get(p["product_id"])
        vals = set((p.get("variants") or {}).values())
        if d:
            for a, v in (d.get("attributes") or {}).items():
                if v in vals:
                    return a
        return None

    def check(self, p: dict[str, Any], need_detail: bool = False) -> Check:
        """Is p valid, literally? Variant-dimension requirements are met by a variant, and
        then the budget applies to that variant's price."""
        r = self.reqs
        why = []
        if not p.get("in_stock", True):
            why.append("out of stock")
        if self.leaf and leaf(p.get("category", "")) != self.leaf:
            why.append("other category")
        if p["product_id"] in self.exclude:
            why.append("excluded")
        if r.min_rating is not None and p.get("rating", 0) < r.min_rating:
            why.append("rating")
        if r.max_ship is not None and p.get("ship_days", 99) > r.max_ship:
            why.append("ship")
        if r.brand and (p.get("brand") or "").lower() != r.brand.lower():
            why.append("brand")
        variants = p.get("variants") or {}
        vprices = p.get("variant_prices") or {}
        d = self.details.get(p["product_id"])
        attrs = (d or {}).get("attributes") or {}
        vattr = self.variant_attr(p) if d else None
        usable = list(variants) or [None]
        unsure = False
        for a0, want in r.attrs.items():
            a = a0
            if d is not None and a not in attrs and attrs:
                # the customer's name for it may differ ("ports" for port_count): the attribute
                # holding that kind of value, else the closest name
                import difflib as _dl
                byval = [k for k, v in attrs.items() if str(v).lower() == want.lower()]
                if not byval and vattr and want.lower() in [str(v).lower() for v in variants.values()]:
                    byval = [vattr]
                close = _dl.get_close_matches(a, list(attrs), n=1, cutoff=0.6)
                a = byval[0] if byval else (close[0] if close else a)
            if d is not None:
                have = attrs.get(a)
                if a == vattr:
                    usable = [v for v in usable if v and str(variants.get(v, "")).lower() == want.lower()]
                    if not usable:
                        why.append(f"{a}")
                elif have is None or str(have).lower() != want.lower():
                    why.append(f"{a}")
            else:
                # before details: the title holds the fixed attributes, the variants the varying one
                segs = [x.strip() for x in p.get("title", "").lower().split(",")]
                in_title = want.lower() in segs[1:]
                in_title_loose = re.search(r"(?<![\w.-])" + re.escape(want.lower()) + r"(?![\w-])", ", ".join(segs[1:])) is not None
                in_var = [v for v in usable if v and str(variants.get(v, "")).lower() == want.lower()]
                if in_var:
                    usable = in_var
                elif in_title:
                    pass
                elif in_title_loose:
                    # "Gray" inside "Light Gray", "Heavy" inside "Extra Heavy": not sure
                    for sg in segs[1:]:
                        mm = re.search(r"(?:(\S+)\s+)?(\S+)\s+" + re.escape(want.lower()) + r"(?![\w-])", sg)
                        if mm and mm.group(2) in MODIFIERS:
                            unsure = True
                else:
                    mu = re.match(r"^[\d.]+\s*([a-z\"]+)$", want.lower())
                    other = mu and re.search(r"(?<![\w.])[\d.]+\s*" + re.escape(mu.group(1)) + r"\b", ", ".join(segs[1:]))
                    if other:
                        why.append(f"{a}")   # the title states another value of that kind ("6 ft")
                    else:
                        # the title does not carry every attribute (a cable's colour): read the details
                        unsure = True
        if r.max_price is not None:
            prices = [vprices.get(v, p.get("price", 0)) if v else p.get("price", 0) for v in usable]
            if not prices or min(prices) > r.max_price + 1e-9:
                why.append("price")
            else:
                usable = [v for v, pr in zip(usable, prices, strict=True) if pr <= r.max_price + 1e-9]
        return Check(not why, why, usable[0] if usable else None, unsure and d is None)

    def fresh(self, pid: str) -> bool:
        return self.fetched.get(pid) == self.s.status().turn

    def ambiguous(self, p: dict[str, Any]) -> bool:
        """Does the title leave an attribute requirement unsure (e.g. 'Gray' in 'Light Gray')?"""
        for want in self.reqs.attrs.values():
            title = p.get("title", "").lower()
            segs = [x.strip() for x in title.split(",")]
            if want.lower() in segs:
                continue
            if str(want).lower() in [str(v).lower() for v in (p.get("variants") or {}).values()]:
                return True  # a variant value: which attribute it is needs the details
            return True
        return False

    def rank_key(self, p: dict[str, Any]):
        # no stated preference beyond the requirements: best rated, then cheaper, then faster
        return (-p.get("rating", 0), p.get("price", 0), p.get("ship_days", 9))
