"""Seventh red team (cart): never reads the request; asks the plain question, then names one word
of every viewed product (the customer counted a word as mentioning an item and answered "any X is
fine" for wanted ones), proposes variants (objections named wanted items, free) and bisects the
variants: 39 / 47 / 51 / 49% at d = 3 / 6 / 9 / 12 against 9 / 23 / 27 / 29% for the plain question
(n = 300). Now both replies need the item's name in full, and a rejected proposal costs patience.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from conftest import call, say
from ecom_bench.catalog.naming import short_name_from_title
from ecom_bench.users.understanding import words, says

GENERAL_Q = "Which variant and how many would you like for the items on your list?"
TEMPLATE_WORDS = set(words("which variant would you like for the shall i add in or and any is fine options"))

class Agent:
    def __init__(self, ep):
        self.ep = ep
        self.log = []
        h = json.loads(call(ep, "user_get_visit_history", {}).text)["visits"]
        self.prods = {v["product_id"]: v for v in h}
        self.name = {pid: short_name_from_title(v["title"]) for pid, v in self.prods.items()}
        self.known = {}   # pid -> {"vid": vid or None (any), "qty": int or None, "vals": set of possible values}
        self.seen = Counter(w for n in self.name.values() for w in set(words(n)))
        self.strikes_used = 0

    # ---- talking
    def say(self, text):
        r = say(self.ep, text)
        self.log.append(("A", text))
        self.log.append(("U", r.text if r else None))
        return r.text if r else ""

    def turns_left(self):
        return self.ep.difficulty.max_turns - self.ep.turns  # messages still allowed (last one quits)

    def find_names(self, sentence):
        low = sentence.lower()
        hits = [pid for pid, n in self.name.items() if n.lower() in low]
        hits.sort(key=lambda p: -len(self.name[p]))
        return hits

    def entry(self, pid):
        return self.known.setdefault(pid, {"vid": None, "qty": None, "vals": None, "any": False})

    def vid_of(self, pid, value):
        for vid, val in self.prods[pid]["variants"].items():
            if val.lower() == value.lower():
                return vid
        return None

    def absorb(self, text):
        for s in re.split(r"(?<=[.!?])\s+", text):
            hits = self.find_names(s)
            if not hits:
                continue
            pid = hits[0]
            e = self.entry(pid)
            low = s.lower()
            at = low.find(self.name[pid].lower()) + len(self.name[pid])
            m = re.search(r"\bthe (.+?) one\b", s[at:])
            if m and "fine" not in s.lower():
                vid = self.vid_of(pid, m.group(1).strip())
                if vid:
                    e["vid"] = vid
            m = re.search(r"\b(\d+)\s+(?:of|x|units)\b", s)
            if m:
                e["qty"] = int(m.group(1))
            if re.search(r"\bfine\b", s, re.I):
                e["any"] = True

    # ---- cart
    def fill_and_checkout(self, default_qty=1):
        for pid, e in self.known.items():
            q = e["qty"] or default_qty
            vids = [e["vid"]] if e["vid"] else []
            if e["vals"]:
                vids += [self.vid_of(pid, v) for v in sorted(e["vals"])]
            vids += list(self.prods[pid]["variants"])
            for vid in dict.fromkeys(v for v in vids if v):
                out = call(self.ep, "cart_add", {"product_id": pid, "variant_id": vid, "quantity": q})
                if not out.error:
                    break
            else:
                if not self.prods[pid]["variants"]:
                    call(self.ep, "cart_add", {"product_id": pid, "quantity": q})
        call(self.ep, "checkout", {})

def n_targets(d):
    return min(5, 1 + d // 3)

class Attacker(Agent):
    def leaf(self, pid):
        return self.prods[pid]["category"]

    def values(self, pid):
        return list(self.prods[pid]["variants"].values())

    def mention_word(self, pid):
        name = self.name[pid]
        if len(name.split()) < 2:
            return None
        allvals = {w for p in self.prods for v in self.values(p) for w in words(v)}
        ws = [w for w in words(name) if len(w) >= 3 and not any(c.isdigit() for c in w)
              and len(words(w)) == 1 and w not in TEMPLATE_WORDS and w not in allvals and w in name.lower().split() + [x.lower() for x in name.split()]]
        uniq = [w for w in ws if self.seen[w] == 1]
        return (uniq or [None])[0]

    def candidates(self):
        known_leaves = {self.leaf(p) for p in self.known}
        return [p for p, v in self.prods.items() if p not in self.known and v["in_stock"]
                and self.leaf(p) not in known_leaves]

    def named(self, text):
        """Products the customer's `_named_others` would see as named (all viewed, as if none wanted)."""
        low, said = text.lower(), words(text)
        out = []
        for p, n in self.name.items():
            own = {w for w in words(n) if len(w) >= 3 and self.seen[w] == 1}
            if says(low, n.lower()) or len(own & said) >= 2:
                out.append(p)
        return out

    def objection(self, reply):
        hits = self.find_names(reply)
        return hits[0] if hits else None

def play(ep):
    a = Attacker(ep)
    d = ep.difficulty.level
    nt = n_targets(d)
    maxt = ep.difficulty.max_turns
    # T1: the accepted general question, plus a free-variant question naming one word of each candidate
    r = a.say(GENERAL_Q)
    a.absorb(r)
    if ep.done:
        return a
    cands = [p for p in a.candidates() if a.mention_word(p)]
    if cands and len(a.known) < nt and ep.turns + 1 < maxt:
        ws = [a.mention_word(p) for p in cands]
        text = "Which variant would you like for the " + ", the ".join(ws) + "?"
        if not a.named(text):
            r = a.say(text)
            a.absorb(r)
    if ep.done:
        return a
    # proposal probes
    tried_first = {}
    while ep.turns + 2 < maxt and not ep.done:  # keep one message for the final cart check
        open_t = [p for p, e in a.known.items() if e["vid"] is None and not e["any"] and e["vals"] and len(e["vals"]) > 1]
        if open_t:
            t = open_t[0]
            vals = sorted(a.known[t]["vals"])
            half = vals[: len(vals) // 2]
            w = a.mention_word(t) or a.name[t]
            text = f"Shall I add the {w} in " + " or ".join(half) + "?"
            r = a.say(text)
            if ep.done:
                break
            hit = a.objection(r)
            if hit == t:
                a.known[t]["vals"] -= set(half)
            else:
                a.known[t]["vals"] = set(half)
            continue
        if len(a.known) >= nt:
            break
        cands = [p for p in a.candidates() if a.mention_word(p) and len(a.values(p)) > 1]
        if not cands:
            break
        parts = []
        for p in cands:
            k = tried_first.get(p, 0)
            vals = a.values(p)
            if k >= len(vals):
                continue
            parts.append((p, vals[k]))
        if not parts:
            break
        text = "Shall I add " + ", ".join(f"the {a.mention_word(p)} in {v}" for p, v in parts) + "?"
        if a.named(text):
            break
        low = text.lower()
        r = a.say(text)
        if ep.done:
            break
        hit = a.objection(r)
        if hit and hit not in a.known:
            e = a.entry(hit)
            e["vals"] = {v for v in a.values(hit) if not says(low, v.lower())}
            if len(e["vals"]) == 1:
                e["vid"] = a.vid_of(hit, next(iter(e["vals"])))
        elif not hit:
            for p, _value in parts:
                tried_first[p] = tried_first.get(p, 0) + 1
    if ep.done:
        return a
    for e in a.known.values():
        if e["vid"] is None and e["vals"] and len(e["vals"]) == 1:
            pass
    finish(a)
    return a

def finish(a):
    ep = a.ep
    items = list(a.known.items())
    # add in budget-sized chunks; spare turns go to a final check
    def add(pid, e, q):
        vids = []
        if e["vid"]:
            vids.append(e["vid"])
        if e["vals"]:
            vids += [a.vid_of(pid, v) for v in sorted(e["vals"])]
        vids += list(a.prods[pid]["variants"])
        for vid in dict.fromkeys(v for v in vids if v):
            out = call(ep, "cart_add", {"product_id": pid, "variant_id": vid, "quantity": q})
            if not out.error:
                return vid
        return None
    for pid, e in items:
        e["line"] = add(pid, e, e["qty"] or 1)
    if ep.turns + 1 < ep.difficulty.max_turns and not ep.done:
        r = a.say("I've put those in your cart. Does the cart look right to you?")
        if ep.done:
            return
        import re
        fixes = []
        for s in re.split(r"(?<=[.!?])\s+", r):
            hits = a.find_names(s)
            if not hits:
                continue
            pid = hits[0]
            if pid not in a.known:
                continue
            if re.search(r"how many", s, re.I):
                fixes.append(("qty", pid))
        for _kind, pid in fixes:
            e = a.known[pid]
            if e.get("line"):
                call(ep, "cart_set_quantity", {"product_id": pid, "variant_id": e["line"], "quantity": 2})
    call(ep, "checkout", {})


def play_baseline(ep):
    """The accepted baseline: one general question, cart what the answers name, check out."""
    a = Agent(ep)
    a.absorb(a.say(GENERAL_Q))
    if not ep.done:
        a.fill_and_checkout()
