"""Honest agent for E_RETURN: find the line, start the return/exchange (or say not eligible),
recommend a replacement when asked, report the outcome."""
from __future__ import annotations

import datetime as dt
import re

from .common import Session, fuzzy_in
from .orders import ORD_RE, Item, matches_type, parse_items, resolve, singular, type_phrase

REASONS = [
    ("damaged", ["arrived damaged", "came broken", "broken in the box", "damaged", "was broken", "cracked", "dented"]),
    ("defective", ["defective", "doesn't work", "does not work", "stopped working", "not working", "faulty", "broke after"]),
    ("wrong_item", ["different item", "wrong item", "not what i ordered", "sent me the wrong", "wrong one"]),
    ("not_as_described", ["nothing like the description", "not as described", "doesn't match the description", "not like the listing", "different from the listing"]),
    ("does_not_fit", ["doesn't fit", "does not fit", "too small", "too big", "too large", "too tight", "too loose", "wrong size"]),
    ("changed_mind", ["changed my mind", "don't need it", "do not need it", "no longer need", "don't want it", "not needed anymore", "don't need them"]),
]
METHODS = [
    ("pickup", ["pick it up", "picked up", "pickup", "pick-up", "courier", "collect it"]),
    ("drop_off", ["drop-off", "drop off", "drop it off", "dropoff"]),
    ("mail", ["by mail", "mail it", "prepaid label", "post it", "ship it back", "send it back by"]),
]


RVOCAB = """arrived damaged came broken box defective doesn't work does not stopped working faulty different item
wrong sent nothing like description described listing fit size changed mind need anymore pick picked
courier drop off drop-off point location mail prepaid label home address send back after few days
properly received ordered looks""".split()


def find_reason(text: str) -> str | None:
    from .common import fix_typos
    t = fix_typos(text, RVOCAB).lower()
    best = None
    for reason, pats in REASONS:
        for p in pats:
            i = t.rfind(p)
            if i >= 0 and (best is None or i > best[1]):
                best = (reason, i)
    return best[0] if best else None


def find_method(text: str) -> str | None:
    from .common import fix_typos
    t = fix_typos(text, RVOCAB).lower()
    best = None
    for m, pats in METHODS:
        for p in pats:
            i = t.rfind(p)
            if i >= 0 and (best is None or i > best[1]):
                best = (m, i)
    return best[0] if best else None


class ReturnsAgent:
    def __init__(self, s: Session):
        self.s = s
        self.today: dt.date | None = None
        self.asked: set[str] = set()
        self.asked_general = False
        self.line = None

    # ---------------------------------------------------------------- helpers
    def text(self) -> str:
        return " ".join(self.s.customer_said)

    def ident_text(self) -> str:
        """The customer's words minus what they want to exchange *for* (not the ordered item)."""
        t = self.text()
        t = re.sub(r"\bfor (?:the|a) [^.;,]*? one\b", " ", t, flags=re.I)
        t = re.sub(r"I'd like the [^.;,]*? one instead", " ", t, flags=re.I)
        return t

    def pending_questions(self) -> str:
        """Questions for what is still missing, asked at the first chance (a forced message)."""
        miss = [m for m in self.missing() if m not in self.asked]
        parts = []
        if "reason" in miss:
            parts.append(self.s.pick("what went wrong with the item", "the reason you're sending it back"))
        if "method" in miss:
            parts.append("whether you'd like a courier pickup, to drop it off at a drop-off point, or to mail it back with a prepaid label")
        if "variant" in miss and getattr(self, "line", None) is not None:
            parts.append(f"which {self.variant_attr() or 'variant'} you'd like instead")
        elif "variant" in miss:
            miss.remove("variant")
        self.asked.update(miss)
        q = ""
        if parts:
            q = " Could you also tell me " + ", and ".join(parts) + "?"
        if self.signals_more() and not self.asked_general:
            self.asked_general = True
            q += self.s.pick(" Is there anything else I should know?", " Anything else you'd like me to take into account?")
        return q

    def progress(self, msg: str) -> str:
        return self.s.say(msg + self.pending_questions())

    def call(self, name, progress_msg, **args):
        if self.s.calls_left() <= 0:
            self.progress(progress_msg)
        return self.s.tool(name, **args)

    # ---------------------------------------------------------------- main
    def run(self) -> None:
        s = self.s
        op = s.opening.lower()
        self.is_exchange = bool(re.search(r"\bexchange\b", op))
        self.wants_replacement = "replacement" in op or "recommend" in op
        ids = ORD_RE.findall(s.opening)
        order = None
        line = None
        orders_items = None
        asked_order = 0
        while line is None:
            text = self.ident_text()
            ids = ORD_RE.findall(text)
            if ids and order is None:
                ok, o = self.call("order_get", "Thanks, let me pull up that order.", order_id=ids[-1])
                if ok and isinstance(o, dict):
                    order = o
            if order is not None:
                line = self.pick_line(order, text)
                if line is None and asked_order < 2:
                    asked_order += 1
                    s.say(s.pick(
                        f"I found order {order['order_id']}, which has {len(order['lines'])} items. Which of them would you like to {'exchange' if self.is_exchange else 'return'}?",
                        f"Thanks! Order {order['order_id']} contains several items: " + "; ".join(ln['title'].split(',')[0] for ln in order['lines']) + ". Which one is it?",
                    ))
                    continue
                if line is None:
                    line = order["lines"][0]
                break
            if orders_items is None:
                ok, ol = self.call("order_list", "Let me look up your orders.")
                orders_items = parse_items(ol if isinstance(ol, dict) else {})
                if self.today is None and s.calls_left() > 0:
                    self.now()
            if self.today is None and re.search(r"ago|yesterday|last \w+day", text) and s.calls_left() > 0:
                self.now()
            res = resolve(text, orders_items, self.today)
            uniq = sorted({it.order_id for it in res.candidates})
            if len(uniq) == 1 and (len(res.candidates) < len(orders_items) or len(orders_items) == 1):
                it = res.candidates[0]
                ok, o = self.call("order_get", f"I think I've found it: order {it.order_id}. Let me open it.", order_id=it.order_id)
                if ok and isinstance(o, dict):
                    order = o
                    line = self.pick_line(order, text, prefer=it)
                    if line is None:
                        line = order["lines"][0]
                    break
            if asked_order >= 3 or s.turns_left() <= 2:
                it = sorted(res.candidates, key=lambda x: x.index)[0]
                ok, o = self.call("order_get", "Let me open that order.", order_id=it.order_id)
                order = o
                line = self.pick_line(order, text, prefer=it) or order["lines"][0]
                break
            asked_order += 1
            self.ask_which(res, asked_order)
        self.order, self.line = order, line
        self.after_line()

    def now(self):
        ok, now = self.s.tool("datetime_now")
        if ok and isinstance(now, dict):
            self.today = dt.date.fromisoformat(now["date"])

    def pick_line(self, order, text, prefer: Item | None = None):
        lines = order.get("lines", [])
        if len(lines) == 1:
            return lines[0]
        if prefer is not None:
            for ln in lines:
                if ln["title"].startswith(prefer.name):
                    return ln
        # full product name
        named = [ln for ln in lines if fuzzy_in(ln["title"].split(",")[0], text, 0.9)]
        if len(named) == 1:
            return named[0]
        tp = None
        for seg in re.split(r"(?<=[.!?])\s+", text):
            tp = tp or type_phrase(seg)
        if tp:
            typed = [ln for ln in lines if matches_type(Item("", "", "", "", ln["title"], ln["title"].split(",")[0], "", 0), tp)]
            if len(typed) == 1:
                return typed[0]
            if typed:
                lines = typed
        # category noun mentioned
        hits = [ln for ln in lines if fuzzy_in(ln["category"].split(" > ")[-1], text, 0.85)
                or fuzzy_in(singular(ln["category"].split(" > ")[-1].lower()), text, 0.85)]
        if len(hits) == 1:
            return hits[0]
        return None

    def ask_which(self, res, n):
        s = self.s
        kind = next((u[5:] for u in res.used if u.startswith("type:")), None)
        k = len({it.order_id for it in res.candidates})
        verb = "exchange" if self.is_exchange else "return"
        if n == 1:
            if kind:
                q = s.pick(
                    f"I can help with that. I see {k} orders with a {kind} on your account. Could you tell me which one you'd like to {verb}? The product name, when you ordered it, or the order number would help.",
                    f"Sure! You have several {kind} orders. Which one is it? For example the brand, roughly when you placed the order, or the order ID.",
                    f"Happy to help with the {verb}. To find the right order: could you share the order number, or tell me more about the {kind} (brand, order date)?",
                )
            else:
                q = s.pick(
                    f"I can help with that. Which item would you like to {verb}? The order number, or the product and when you ordered it, would help me find it.",
                    "Sure! Could you tell me which item and order this is about? An order ID or a description of the product and when you bought it works.",
                )
        else:
            q = s.pick(
                "Thanks! A few orders still match. Is there anything else you remember, such as the exact product name, the order date, or a note on the order?",
                "Thank you. I still see more than one possible order. Could you give me another detail, like when you ordered it or the product's brand?",
            )
        s.say(q)

    # ---------------------------------------------------------------- after the line is known
    def missing(self) -> list[str]:
        t = self.text()
        miss = []
        if find_reason(t) is None:
            miss.append("reason")
        if find_method(t) is None:
            miss.append("method")
        if self.is_exchange and self.new_variant_value() is None:
            miss.append("variant")
        return miss

    def variant_attr(self):
        for k in self.line:
            if k not in ("line_id", "product_id", "title", "category", "variant_id", "quantity", "unit_price", "return_state"):
                return k
        return None

    def new_variant_value(self):
        t = self.text()
        m = re.findall(r"(?:for|like) the ((?:[^.;!?]|\.\d)+?) one\b", t, flags=re.I)
        if m:
            return m[-1].strip()
        return None

    def signals_more(self) -> bool:
        t = self.s.opening.lower()
        return any(p in t for p in ["more details", "anything else", "ask if you need", "just ask"])

    def after_line(self):
        s = self.s
        order, line = self.order, self.line
        name = line["title"].split(",")[0]
        miss = [m for m in self.missing() if m not in self.asked]
        if miss or (self.signals_more() and not self.asked_general):
            ref = s.pick(f"the {name} in order {order['order_id']}", f"the {name} from your order", f"your {name}")
            q = s.pick(f"Thanks, I found {ref}.", f"I've located {ref}.", f"Got it, that's {ref}.")
            pq = self.pending_questions()
            if not pq.strip():
                pq = " Before I go ahead, is there anything else I should know?"
            s.say(q + pq)
        tries = 0
        miss = self.missing()
        while miss and tries < 2 and s.turns_left() > 2:
            tries += 1
            parts = []
            if "reason" in miss:
                parts.append("the reason for the return (for example: it arrived damaged, it's defective, it's not as described, it's the wrong item, it doesn't fit, or you changed your mind)")
            if "method" in miss:
                parts.append("whether you'd prefer a courier pickup, a drop-off point, or mail")
            if "variant" in miss:
                parts.append(f"which {self.variant_attr() or 'variant'} you'd like instead")
            s.say(s.pick("Sorry, I still need one detail: ", "Thanks! Just to be sure, could you tell me ") + " and ".join(parts) + "?")
            miss = self.missing()
        t = self.text()
        reason = find_reason(t) or "changed_mind"
        method = find_method(t) or "mail"
        self.wants_replacement = self.wants_replacement or bool(re.search(r"replacement|recommend", " ".join(s.customer_said[1:]), re.I))
        # eligibility: check when there is a spare call (d=0/1 allows one call per turn: skip it
        # and let return_initiate say if it is not eligible).
        eligible = True
        why = ""
        if s.calls_left() >= 2 or (s.calls_left() >= 1 and s.status().tool_budget >= 2):
            ok, el = s.tool("return_check_eligibility", order_id=order["order_id"], line_id=line["line_id"])
            if ok and isinstance(el, dict):
                eligible = bool(el.get("eligible"))
                why = el.get("reason", "")
        outcome = None
        if eligible:
            if self.is_exchange:
                outcome = self.do_exchange(reason, method)
            else:
                ok, r = self.call("return_initiate", f"Thanks! I'm starting the return of the {name} now.",
                                  order_id=order["order_id"], line_id=line["line_id"], reason=reason, method=method)
                if ok:
                    outcome = "return_started"
                else:
                    why = str(r)
                    if "eligib" in why.lower() or "window" in why.lower() or "not" in why.lower():
                        outcome = "not_eligible"
        else:
            outcome = "not_eligible"
        replacement = None
        if self.wants_replacement:
            replacement = self.find_replacement()
        if outcome == "not_eligible" and s.turns_left() > 1:
            s.say(s.pick(
                f"I'm sorry, but the {name} can't be returned: {why} So I haven't started a return." + (" I've found a replacement you might like, though." if replacement else ""),
                f"Unfortunately this item isn't eligible for a return ({why}). I haven't started anything." + (" I do have a replacement suggestion for you." if replacement else ""),
            ))
        if outcome is None:
            outcome = "return_started" if not self.is_exchange else "exchange_started"
        s.final("report_return_outcome", order_id=order["order_id"], line_id=line["line_id"], outcome=outcome,
                replacement_product_id=replacement)

    def do_exchange(self, reason, method):
        order, line = self.order, self.line
        ok, v = self.call("catalog_get_variants", "Let me check which variants are available.", product_id=line["product_id"])
        want = (self.new_variant_value() or "").lower()
        vid = None
        if ok and isinstance(v, dict):
            attr = v.get("variant_attribute")
            for var in v.get("variants", []):
                if str(var.get(attr, "")).lower() == want:
                    vid = var["variant_id"]
            if vid is None:
                for var in v.get("variants", []):
                    if want and fuzzy_in(want, str(var.get(attr, "")), 0.85):
                        vid = var["variant_id"]
        if vid is None:
            return None
        ok, r = self.call("return_exchange", "Thanks, I'm setting up the exchange now.", order_id=order["order_id"],
                          line_id=line["line_id"], new_variant_id=vid, reason=reason, method=method)
        if ok:
            return "exchange_started"
        why = str(r).lower()
        if "eligib" in why or "window" in why:
            return "not_eligible"
        return None

    def find_replacement(self):
        s = self.s
        t = " ".join(s.customer_said)
        line = self.line
        leaf = line["category"].split(" > ")[-1]
        max_price = None
        min_rating = None
        diff_brand = bool(re.search(r"different brand|another brand|other brand", t, re.I))
        m = re.findall(r"(?:under|below|less than|at most|no more than)\s*\$\s*([\d,.]+)", t, re.I)
        if m:
            max_price = float(m[-1].replace(",", "").rstrip("."))
        m = re.findall(r"rated at least\s*([\d.]+)", t, re.I) or re.findall(r"([\d.]+)\+? stars? or (?:higher|more|better)", t, re.I)
        if m:
            min_rating = float(m[-1].rstrip("."))
        if s.calls_left() <= 0:
            self.progress(s.pick("Now let me find a good replacement for you.", "Next I'll look for a replacement that fits what you asked for."))
        ok, r = s.tool("catalog_search", query=leaf, category=leaf, max_price=max_price, min_rating=min_rating, limit=20)
        if not ok or not isinstance(r, dict):
            return None
        best = None
        for p in r.get("results", []):
            if not p.get("in_stock", True):
                continue
            if p["product_id"] == line["product_id"]:
                continue
            if p.get("category", "").split(" > ")[-1] != leaf:
                continue
            if diff_brand and p.get("brand") and line["title"].startswith(p["brand"] + " "):
                continue
            if max_price is not None and p["price"] > max_price:
                continue
            if min_rating is not None and p["rating"] < min_rating:
                continue
            key = (p.get("rating", 0), -p.get("price", 0))
            if best is None or key > best[0]:
                best = (key, p["product_id"])
        return best[1] if best else None
