"""Sixth red team (cart): "WordAsk" -- never reads the opening message. 40 / 80 / 80 / 80% at
d = 3 / 6 / 9 / 12 (n = 200, 20k catalogue) before a pile of viewed products' name words counted
as naming them and wrong cart lines cost patience; `Generic` asks the same with no product words.


1. user_get_visit_history; keep in-stock products.
2. Ask a generic question that names every *word* of the viewed products' short names as a
   sorted, comma-separated list ("Which variant and how many for: air, coffee, farms, ...?").
   No full short name appears, so `_named_others` sees nothing, but `_mentions` (any word of
   the name) matches every target: withheld slots are disclosed *with the product's name*
   ("For the X, I need the V one", "I need 3 of the Y").
3. Ask the same again: every non-required-variant target gets "Any <label> is fine for the Z".
4. Remaining (required variant told in opening): probe with the same word list plus one
   variant value per candidate -> `_wrong_proposal` names a target ("No, that's not the
   <label> I asked for for the W"). Cart every variant of it; the cart corrections name the
   wrong lines ("The W in my cart is the Red one") and quantities ("not how many").
5. Checkout on CONFIRM or on the last turn.
"""
from __future__ import annotations

import json
import re

from conftest import call, say

from ecom_bench.catalog.naming import short_name_from_title
from ecom_bench.users.understanding import says

CONFIRM_WORDS = ("that's everything", "that's all i need", "looks right")


class Agent:
    def __init__(self, ep):
        self.ep = ep
        self.d = ep.difficulty
        self.calls = 0
        self.cart = {}      # (pid, vid) -> qty   (what we believe is in the cart)
        self.want = {}      # pid -> {"vid": set of possible vids, "qty": int|None, "qty_tried": set}
        self.rejected = set()
        self.confirmed = False
        self.last_reply = ""
        self.probe_round = 0

    # ---------------------------------------------------------------- tools
    def tool(self, name, **args):
        if self.calls >= self.d.tool_budget:
            return None
        self.calls += 1
        out = call(self.ep, name, args)
        return out

    def msg(self, text):
        self.calls = 0
        r = say(self.ep, text)
        self.last_reply = r.text if r is not None else ""
        self.parse(self.last_reply)
        return self.last_reply

    # ---------------------------------------------------------------- parse
    def parse(self, reply):
        low = reply.lower()
        if any(c in low for c in CONFIRM_WORDS):
            self.confirmed = True
        for sent in re.split(r"(?<=[.!?])\s+", reply):
            sl = sent.lower()
            for pid, c in self.cands.items():
                if not says(sl, c["name"].lower()):
                    continue
                if "didn't ask for" in sl or "didn't ask" in sl:
                    self.rejected.add(pid)
                    self.want.pop(pid, None)
                    continue
                w = self.want.setdefault(pid, {"vid": set(c["variants"]), "qty": None, "qty_bad": set(),
                                               "qty_known": False})
                vals = [(vid, v) for vid, v in c["variants"].items() if says(sl, v.lower())]
                m = re.search(r"\b(\d{1,2})\b", sl)
                if "in my cart is the" in sl or "that's not the" in sl:
                    # a value named here is wrong
                    for vid, _value in vals:
                        if len(w["vid"]) > 1:
                            w["vid"].discard(vid)
                elif "how many" in sl:
                    if w["qty"] is not None:
                        w["qty_bad"].add(w["qty"])
                elif vals and ("need the" in sl or "one" in sl):
                    w["vid"] = {max(vals, key=lambda x: len(x[1]))[0]}
                if m and "how many" not in sl and ("of the" in sl):
                    w["qty"] = int(m.group(1))
                    w["qty_known"] = True

    # ------------------------------------------------------------ messages
    def word_list(self, pids):
        ws = set()
        for pid in pids:
            for w in re.findall(r"[A-Za-z][A-Za-z'&\-]*", self.cands[pid]["name"]):
                if len(w) >= 3 and not any(ch.isdigit() for ch in w):
                    ws.add(w.lower())
        text = ", ".join(sorted(ws))
        # never say a full short name of a candidate
        for pid in pids:
            n = self.cands[pid]["name"].lower()
            if says(text, n):
                text = ", ".join(x for x in text.split(", ") if x != n)
        return text

    def open_pids(self):
        return [p for p in self.cands if p not in self.rejected and p not in self.want]

    # ---------------------------------------------------------------- cart
    def sync_cart(self):
        """Make the cart: for each wanted product, one line per remaining possible variant."""
        ops = []
        desired = {}
        for pid, w in self.want.items():
            vids = sorted(w["vid"])
            q = w["qty"]
            if q is None or (q in w["qty_bad"] and not w["qty_known"]):
                q = next(x for x in (1, 2, 3, 4) if x not in w["qty_bad"]) if len(w["qty_bad"]) < 4 else 1
                w["qty"] = q
            if len(vids) > 1 and not w.get("any"):
                for vid in vids:
                    desired[(pid, vid)] = q
            else:
                desired[(pid, vids[0])] = q
        for key in list(self.cart):
            if key not in desired:
                ops.append(("cart_remove", key, 0))
        for key, q in desired.items():
            if self.cart.get(key) != q:
                ops.append(("set", key, q))
        for op, (pid, vid), q in ops:
            if self.calls >= self.d.tool_budget:
                break
            if op == "cart_remove":
                r = self.tool("cart_remove", product_id=pid, variant_id=vid)
                if r is not None and not r.error:
                    self.cart.pop((pid, vid), None)
            elif (pid, vid) in self.cart:
                r = self.tool("cart_set_quantity", product_id=pid, variant_id=vid, quantity=q)
                if r is not None and not r.error:
                    self.cart[(pid, vid)] = q
            else:
                r = self.tool("cart_add", product_id=pid, variant_id=vid, quantity=q)
                if r is not None and not r.error:
                    self.cart[(pid, vid)] = q
                elif r is not None and r.error and len(self.want[pid]["vid"]) > 1:
                    self.want[pid]["vid"].discard(vid)
        return len(ops)

    def play(self):
        ep = self.ep
        h = json.loads(self.tool("user_get_visit_history").text)["visits"]
        self.cands = {v["product_id"]: {"name": short_name_from_title(v["title"]), "variants": v["variants"]}
                      for v in h if v.get("in_stock")}
        T = self.d.max_turns
        q = "Quick question: which variant (size, colour, option) and how many would you like for the {}?"
        self.msg(q.format(self.word_list(list(self.cands))))
        if ep.done:
            return
        # mark "any is fine" items
        self.msg(q.format(self.word_list(list(self.cands))))
        for sent in re.split(r"(?<=[.!?])\s+", self.last_reply):
            if "is fine for" in sent.lower():
                for pid, w in self.want.items():
                    if says(sent.lower(), self.cands[pid]["name"].lower()):
                        w["any"] = True
        while not ep.done:
            self.sync_cart()
            turns_left = T - ep.turns  # this turn included
            if self.confirmed or turns_left <= 1:
                # last chance: finish the cart then checkout
                call(ep, "checkout", {})
                if not ep.done:
                    self.msg("I've placed your order.")
                return
            rest = self.open_pids()
            self.probe_round += 1
            if rest:
                vals = []
                for pid in rest:
                    vs = list(self.cands[pid]["variants"].values())
                    if len(vs) > 1:
                        vals.append(vs[self.probe_round % len(vs)])
                text = ("Shall I add the {} in {}? Is the cart right so far?"
                        .format(self.word_list(rest), ", ".join(dict.fromkeys(vals))))
                if any(len(w["vid"]) > 1 and not w.get("any") for w in self.want.values()) and self.probe_round % 2 == 0:
                    text = "I've updated your cart. Is it right now?"
            else:
                text = "I've updated your cart. Is it right now?"
            self.confirmed = False
            self.msg(text)



class Generic(Agent):
    """The same agent with a plain question naming no product: what the customer tells anyone who asks."""

    def word_list(self, pids):
        return "items on your list"
