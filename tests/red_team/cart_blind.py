"""Cart, opening-blind: identify the wanted products, variants and quantities purely from the
customer's reactions to questions that name visit-history product ids.

Never reads the opening (messages[1]) nor the hidden goal. Oracles used:
 * "Which variant and how many for P1, P2, ...?" (all visit-history ids in one sentence):
   withheld details come back naming the item; once nothing is withheld, every listed target whose
   variant does not matter answers "Any <label> is fine for the <name>." (NEW) and non-targets are silent.
 * "Shall I add P1 in <v>, P2 in <v'>, ...?": a target whose required variant is not among the named
   values objects "No, that's not the <label> I need for the <name>" (non-targets never object).
 * cart corrections (free, no strike): "The X in my cart is the v one" / "That's not how many of the X".
Fifth red team: 47 / 44 / 39 / 27% at d = 3 / 6 / 9 / 12 (n = 200, 20k catalogue); a message
naming several products the customer never asked for is now a mess (`CartUser._object_to_others`).
"""
from __future__ import annotations

import json
import math
import re

from conftest import call, say
from ecom_bench.envs import get_env

NO_PROPOSAL = False  # the red team's ablation switches (all channels on)
NO_ANY = False

ANY_RE = re.compile(r"any ([a-z ]+?) is \w+ for the (.+?)\.", re.I)
NEED_V_RE = re.compile(r"for the (.+?), i need the (.+?) one\.", re.I)
NEED_Q_RE = re.compile(r"i need (\d+) of the (.+?)\.", re.I)
NOPE_RE = re.compile(r"no, that's not the ([a-z ]+?) i .+? for the (.+?)\.", re.I)
WRONGV_RE = re.compile(r"the (.+?) in my cart is the (.+?) one; that's not", re.I)
WRONGQ_RE = re.compile(r"that's not how \w+ of the (.+?) i ", re.I)


def wilson(k, n, z=1.96):
    if n == 0:
        return (0, 0)
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0, c - h), min(1, c + h)


class Blind:
    def __init__(self, ep):
        self.ep = ep
        self.hist = {}
        self.tg = {}  # pid -> dict(req, vid, tried:set, qty, qty_known)
        self.log = []
        self.n_targets = get_env("cart").axis_values(ep.difficulty)["cart_items"]  # public schedule

    def name_to_pid(self, name):
        name_l = name.lower().strip()
        best, score = None, -1
        for pid, h in self.hist.items():
            t = h["title"].lower()
            s = 100 if t.startswith(name_l) else len(set(name_l.split()) & set(re.findall(r"[a-z0-9]+", t)))
            if s > score:
                best, score = pid, s
        return best

    def vid_of(self, pid, value):
        for vid, v in self.hist[pid]["variants"].items():
            if v.lower() == value.lower().strip():
                return vid
        return None

    def target(self, pid):
        return self.tg.setdefault(pid, {"req": None, "vid": None, "tried": set(), "qty": 1, "qty_known": False,
                                        "in_cart": None})

    def say(self, text):
        r = say(self.ep, text)
        self.log.append(("A", text))
        self.log.append(("U", r.text if r else None))
        return r.text if r else ""

    def parse(self, reply):
        got_info = False
        for m in NEED_V_RE.finditer(reply):
            pid = self.name_to_pid(m.group(1))
            t = self.target(pid)
            t["req"] = True
            t["vid"] = self.vid_of(pid, m.group(2))
            got_info = True
        for m in NEED_Q_RE.finditer(reply):
            pid = self.name_to_pid(m.group(2))
            t = self.target(pid)
            t["qty"] = int(m.group(1))
            t["qty_known"] = True
            got_info = True
        anys = False
        for m in ANY_RE.finditer(reply):
            pid = self.name_to_pid(m.group(2))
            t = self.target(pid)
            t["req"] = False
            t["vid"] = t["vid"] or next(iter(self.hist[pid]["variants"]))
            anys = True
        for m in NOPE_RE.finditer(reply):
            pid = self.name_to_pid(m.group(2))
            t = self.target(pid)
            t["req"] = True
            t["tried"] |= self.last_proposed.get(pid, set())
        for m in WRONGV_RE.finditer(reply):
            pid = self.name_to_pid(m.group(1))
            t = self.target(pid)
            t["req"] = True
            if t["in_cart"]:
                t["tried"].add(t["in_cart"])
                t["vid"] = None
        for m in WRONGQ_RE.finditer(reply):
            pid = self.name_to_pid(m.group(1))
            t = self.target(pid)
            if not t["qty_known"]:
                t["qty"] += 1
        return got_info, anys

    def cart_actions(self):
        calls = []
        for pid, t in self.tg.items():
            if t["req"] and t["vid"] is None:
                left = [v for v in self.hist[pid]["variants"] if v not in t["tried"]]
                if len(left) == 1:
                    t["vid"] = left[0]
            want = t["vid"] if t["vid"] else None
            if want is None:
                continue
            if t["in_cart"] and t["in_cart"] != want:
                calls.append(("cart_remove", {"product_id": pid, "variant_id": t["in_cart"]}))
                t["in_cart"] = None
                t["cart_qty"] = 0
            if t["in_cart"] is None:
                calls.append(("cart_add", {"product_id": pid, "variant_id": want, "quantity": t["qty"]}))
                t["in_cart"] = want
                t["cart_qty"] = t["qty"]
            elif t.get("cart_qty") != t["qty"]:
                calls.append(("cart_set_quantity", {"product_id": pid, "variant_id": want, "quantity": t["qty"]}))
                t["cart_qty"] = t["qty"]
        return calls

    def run(self):
        ep = self.ep
        hv = json.loads(call(ep, "user_get_visit_history", {}).text)
        for v in hv["visits"]:
            self.hist[v["product_id"]] = {"title": v["title"], "variants": v["variants"]}
        ids = list(self.hist)
        self.last_proposed = {}
        self.silent = {}
        self.nprobe = 0
        self.probe_kind = None
        stage = "flush"
        pending = []
        while not ep.done:
            # apply cart plan within the turn's budget
            budget = ep.difficulty.tool_budget - ep.calls_this_turn
            pending = pending or self.cart_actions()
            while pending and budget > 0:
                name, args = pending.pop(0)
                out = call(ep, name, args)
                budget -= 1
                self.log.append(("T", f"{name} {args} -> {out.text[:80]}"))
            last = ep.turns + 1 >= ep.difficulty.max_turns
            if last or (stage == "done" and not pending):
                call(ep, "checkout", {})
                break
            self.last_proposed = {}
            if stage == "flush":
                text = "Which variant and how many would you like for " + ", ".join(ids) + "?"
            elif stage == "probe" and NO_PROPOSAL:
                text = "Is the cart right now?"
            elif stage == "probe":
                unresolved = [p for p, t in self.tg.items() if t["req"] and t["vid"] is None]
                self.probe_kind = "resolve" if unresolved else "discover"
                if unresolved:
                    pool = unresolved
                else:
                    pool = [p for p in ids if p not in self.tg and len(self.hist[p]["variants"]) > 1
                            and len(self.silent.get(p, set())) < 2]
                    self.nprobe += 1
                parts = []
                for p in pool:
                    t = self.tg.get(p)
                    tried = (t["tried"] if t else set()) | self.silent.get(p, set())
                    vids = [v for v in self.hist[p]["variants"] if v not in tried]
                    if not vids:
                        continue
                    vid = vids[0]
                    self.last_proposed[p] = {vid}
                    parts.append(f"{p} in {self.hist[p]['variants'][vid]}")
                text = "Shall I add " + ", ".join(parts) + "?" if parts else "Is the cart right now?"
            else:
                text = "Is the cart right now?"
            reply = self.say(text)
            if ep.done:
                break
            got_info, anys = self.parse(reply)
            if stage == "probe" and self.last_proposed and not NOPE_RE.search(reply):
                for p, vs in self.last_proposed.items():
                    if self.probe_kind == "resolve":
                        self.tg[p]["vid"] = next(iter(vs))
                    else:
                        self.silent.setdefault(p, set()).update(vs)
            if stage == "flush" and (not got_info or NO_ANY):
                stage = "probe"
            if stage == "probe" and len(self.tg) >= self.n_targets and all(t["vid"] for t in self.tg.values()):
                stage = "check"
            if stage == "check" and any(s in reply for s in ("That's everything", "that's all I need", "Looks right")):
                stage = "done"
        return ep.result()


