"""Honest agent for E_CART: read the shopping list, find each product, ask for any variant or
quantity the customer did not give, fill the cart, confirm, check out."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .common import Session, fuzzy_in

NUMWORDS = {"one": 1, "a": 1, "an": 1, "the": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a pair of": 1, "a single": 1, "single": 1}
VAGUE = re.compile(r"^(a few|several|some|a couple|a number|multiple|a bunch|a handful|many)\b", re.I)


@dataclass
class Want:
    raw: str
    name: str
    qty: int | None
    variant: str | None          # the value the customer named
    needs_variant: bool          # said a specific one matters but did not say which
    hint: str | None = None
    product: dict[str, Any] | None = None
    variant_id: str | None = None
    any_variant: bool = False
    in_cart: bool = False
    cart_qty: int = 0
    cart_vid: str | None = None


def split_items(opening: str) -> list[str]:
    t = opening
    m = re.search(r"(?:shopping list|add these to my cart|add these 2 my cart|add to my cart|put the following in my cart|in my cart|like to order|i'd like to ordr|want to order|to my cart|my caart|my carrt|add these)\s*:?\s*", t, re.I)
    if m:
        t = t[m.end():]
    else:
        t = re.sub(r"^.*?:\s*", "", t)
    # drop closing pleasantries
    t = re.split(r"\.\s+(?:That's all|Thank|Thanks|That is all|thx|Thx|Cheers)", t)[0]
    t = re.sub(r"\.\s*$", "", t.strip())
    parts = [p.strip() for p in re.split(r";\s*", t) if p.strip()]
    out = []
    for p in parts:
        p = re.sub(r"^(and|&)\s+", "", p)
        out.append(p)
    if len(out) == 1 and re.search(r"\band\b|&", out[0]):
        pass  # a single item whose name has no ';' separators
    return out


def parse_item(raw: str) -> Want:
    r = raw.strip()
    qty: int | None = None
    m = re.match(r"^(\d+)\s*(?:x|units? of(?: the)?|of the|pcs of(?: the)?)\s+(.*)$", r, re.I)
    if m:
        qty = int(m.group(1))
        r = m.group(2)
    else:
        m = re.match(r"^(\d+)\s+(.*)$", r)
        if m:
            qty = int(m.group(1))
            r = m.group(2)
        elif VAGUE.match(r) or re.match(r"^\w+ of the ", r):
            qty = None
            r = re.sub(r"^[\w ]+? of the\s+", "", r, count=1)
        else:
            m = re.match(r"^(one|an?|the|two|three|four|five)\s+(.*)$", r, re.I)
            if m:
                qty = NUMWORDS.get(m.group(1).lower(), 1)
                r = m.group(2)
    variant = None
    needs = False
    hint = None
    # "(I need a specific color)", "- the right flavor matters", ", in a particular flavor"
    m = re.search(r"\s*(?:\(|-|,)?\s*(?:I need a (?:specific|particular|certain) ([\w ]+?)\)|the right ([\w ]+?) matters|in a (?:particular|specific|certain) ([\w ]+?)$)", r, re.I)
    if m:
        needs = True
        hint = next(g for g in m.groups() if g)
        r = r[:m.start()].strip(" -,(")
    m = re.search(r"\s*\(([\w ]+?):\s*([^)]+)\)\s*$", r)
    if m:
        hint = m.group(1)
        variant = m.group(2).strip()
        r = r[:m.start()].strip()
    m = re.search(r",?\s*the (.+?) one$", r)
    if m and variant is None:
        variant = m.group(1).strip()
        r = r[:m.start()].strip(" ,")
    m = re.search(r"\s+-\s+(.+)$", r)
    if m and variant is None:
        variant = m.group(1).strip()
        r = r[:m.start()].strip()
    name = r.strip(" ,.")
    return Want(raw, name, qty, variant, needs, hint)


def short(title: str) -> str:
    return re.split(r",| - | \(| \[", title)[0].strip()


class CartAgent:
    def __init__(self, s: Session):
        self.s = s
        self.known: dict[str, dict[str, Any]] = {}   # product_id -> search/history record
        self.variants: dict[str, dict[str, Any]] = {}

    def text(self) -> str:
        return " ".join(self.s.customer_said)

    def need_call(self, msg: str | None = None) -> None:
        s = self.s
        if s.calls_left() <= 0:
            s.say(msg or s.pick("I'm still working on your cart, one moment please.",
                                "Thanks for your patience, I'm finding the rest of your items.",
                                "Working on it: I'm looking up the next item on your list."))

    def tool(self, name, **args):
        self.need_call()
        return self.s.tool(name, **args)

    # ---------------------------------------------------------------- product lookup
    def remember(self, recs):
        for p in recs:
            self.known[p["product_id"]] = p

    def _match(self, w: Want):
        """The known product whose short name the customer wrote (the longest such name)."""
        best = None
        low = w.name.lower()
        for p in self.known.values():
            sn = short(p["title"]).lower()
            if low == sn or low.startswith(sn + " "):
                if best is None or len(sn) > len(short(best["title"])):
                    best = p
        if best is not None:
            rest = w.name[len(short(best["title"])):].strip()
            m = re.match(r"^in (?:the )?(.+?)(?: one)?$", rest, re.I)
            if m and w.variant is None:
                w.variant = m.group(1).strip()
            w.name = short(best["title"])
        return best

    def lookup(self, w: Want) -> None:
        p = self._match(w)
        if p is None:
            q = re.sub(r"\s+in\s+[^,]+$", "", w.name)
            ok, r = self.tool("catalog_search", query=q)
            if ok and isinstance(r, dict):
                self.remember(r.get("results", []))
            p = self._match(w)
        if p is None:
            cands = [x for x in self.known.values() if fuzzy_in(short(x["title"]), w.name, 0.9)]
            p = cands[0] if cands else None
        w.product = p

    def resolve_variant(self, w: Want) -> None:
        if w.product is None:
            return
        vs = w.product.get("variants") or {}
        if not vs:
            return
        if len(vs) == 1:
            w.variant_id = next(iter(vs))
            return
        if w.variant:
            for vid, val in vs.items():
                if str(val).lower() == w.variant.lower():
                    w.variant_id = vid
                    return
            for vid, val in vs.items():
                if fuzzy_in(w.variant, str(val), 0.85) or fuzzy_in(str(val), w.variant, 0.85):
                    w.variant_id = vid
                    return

    def read_answers(self, wants: list[Want]) -> None:
        """Apply what the customer said in replies: variants, quantities, 'any X is fine'."""
        for reply in self.s.customer_said[1:]:
            for sent in re.split(r"(?<=[.!?])\s+", reply):
                for w in wants:
                    if not fuzzy_in(w.name, sent, 0.9):
                        continue
                    i = sent.lower().find(w.name.lower())
                    after = sent[i + len(w.name):] if i >= 0 else sent
                    m = re.search(r"\bthe ([^;]+?) one\b", after)
                    if m and not re.search(r"in my (?:cart|crat|carrt)|that's not|is the", sent):
                        w.variant = m.group(1).strip()
                        w.variant_id = None
                        w.any_variant = False
                    m = re.search(r"\bI \w+ (\d+) of the", sent) or re.search(r"(\d+) (?:of|x) (?:the )?" + re.escape(w.name), sent)
                    if m:
                        w.qty = int(m.group(1))
                    if re.search(r"\bany\b.*\bis fine\b|\bdoesn't matter\b|\bany (?:one|of them)\b", sent, re.I):
                        w.any_variant = True
                    m = re.search(r"(?:just|only) (one|1|\d+)\b", sent)
                    if m and "need" in sent:
                        w.qty = NUMWORDS.get(m.group(1), None) or int(m.group(1)) if m.group(1).isdigit() else 1

    def wants_from_names(self, opening: str) -> list[Want]:
        """Read the list by the product names the customer wrote (names carry no typos; the
        words around them may), using the products the customer viewed."""
        low = opening.lower()
        hits = []
        for p in self.known.values():
            sn = short(p["title"])
            i = low.find(sn.lower())
            if i >= 0:
                hits.append((i, i + len(sn), p))
        # drop names contained in longer names at the same place
        hits.sort(key=lambda h: (h[0], -(h[1] - h[0])))
        kept = []
        for h in hits:
            if kept and h[0] < kept[-1][1]:
                continue
            kept.append(h)
        wants = []
        for k, (a, b, p) in enumerate(kept):
            start = kept[k - 1][1] if k else 0
            prefix = opening[start:a]
            prefix = re.split(r";|:", prefix)[-1]
            end = kept[k + 1][0] if k + 1 < len(kept) else len(opening)
            suffix = re.split(r";", opening[b:end])[0]
            suffix = re.split(r"\.\s", suffix + " ")[0]
            qty: int | None
            m = re.search(r"(\d+)", prefix)
            if m:
                qty = int(m.group(1))
            elif re.search(r"\bof\b", prefix) or not re.search(r"\b(a|an|one|the|single)\s*$", prefix.strip() + " ", re.I):
                qty = None if re.search(r"\w", re.sub(r"\b(and|&|a|an|one|the|single)\b", "", prefix, flags=re.I)) else 1
            else:
                qty = 1
            variant = None
            for val in (p.get("variants") or {}).values():
                if re.search(r"(?<![\w.-])" + re.escape(str(val).lower()) + r"(?![\w-])", suffix.lower()):
                    if variant is None or len(str(val)) > len(variant):
                        variant = str(val)
            needs = variant is None and bool(re.search(r"\w{3,}", re.sub(r"\b(and|thanks?|that's all)\b", "", suffix, flags=re.I)))
            hint = None
            m = re.search(r"(?:specific|particular|certain|right|rigth|rihgt)\s+([\w ]+?)(?:\)|\s+matters|\s*$)", suffix, re.I)
            if m:
                hint = m.group(1).strip()
            w = Want(opening[start:end], short(p["title"]), qty, variant, needs, hint)
            w.product = p
            wants.append(w)
        return wants

    # ---------------------------------------------------------------- main
    def run(self) -> None:
        s = self.s
        signals_more = bool(re.search(r"not all|more I need|there's more|a few more|something else", s.opening, re.I))
        # the customer's own viewing history holds what they looked at: one call for all items
        ok, h = self.tool("user_get_visit_history")
        if ok and isinstance(h, dict):
            self.remember(h.get("visits", []))
        parsed = [parse_item(x) for x in split_items(s.opening)]
        wants = self.wants_from_names(s.opening)
        # anything on the list the history does not hold: parse and search for it
        for w in parsed:
            if not any(x.name.lower() in w.name.lower() for x in wants):
                wants.append(w)
        for w in wants:
            if w.product is None:
                self.lookup(w)
            self.resolve_variant(w)
        asked = 0
        while True:
            self.read_answers(wants)
            for w in wants:
                if w.product is None:
                    self.lookup(w)
                if w.variant_id is None:
                    self.resolve_variant(w)
            missing_v = [w for w in wants if w.product and w.variant_id is None and not w.any_variant
                         and len(w.product.get("variants") or {}) > 1]
            missing_q = [w for w in wants if w.qty is None]
            if (missing_v or missing_q or (signals_more and asked == 0)) and asked < 3 and s.turns_left() > 2:
                asked += 1
                self.ask(missing_v, missing_q, asked)
                continue
            break
        # anything still unknown: pick the first variant / quantity 1 (an LLM would have asked; we did)
        for w in wants:
            if w.product and w.variant_id is None and (w.product.get("variants") or {}):
                w.variant_id = next(iter(w.product["variants"]))
            if w.qty is None:
                w.qty = 1
        for w in wants:
            if w.product is None:
                continue
            args = {"product_id": w.product["product_id"], "quantity": w.qty}
            if w.variant_id:
                args["variant_id"] = w.variant_id
            ok, r = self.tool("cart_add", **args)
            if ok:
                w.in_cart, w.cart_qty, w.cart_vid = True, w.qty, w.variant_id
        self.confirm_and_checkout(wants)

    def ask(self, missing_v: list[Want], missing_q: list[Want], n: int) -> None:
        s = self.s
        parts = []
        for w in missing_v:
            attr = w.hint or "variant"
            opts = ", ".join(str(v) for v in (w.product.get("variants") or {}).values())
            q_needed = w in missing_q
            if q_needed:
                parts.append(s.pick(
                    f"for the {w.name}, which {attr} would you like ({opts}) and how many",
                    f"how many {w.name} you need and in which {attr} ({opts})",
                ))
            else:
                parts.append(s.pick(f"which {attr} of the {w.name} you'd like ({opts})",
                                    f"for the {w.name}, which {attr} you need ({opts})"))
        for w in missing_q:
            if w in missing_v:
                continue
            parts.append(s.pick(f"how many of the {w.name} you'd like", f"the quantity for the {w.name}"))
        if n == 1:
            lead = s.pick("Happy to help with your order! ", "Sure, I can set that up. ", "Thanks for the list! ")
            if parts:
                body = "Could you tell me " + "; ".join(parts) + "?"
                if len(missing_v) + len(missing_q) > 2 and s.rng.random() < 0.5:
                    body = s.pick("Could you tell me the quantities and variants you need for each item? Specifically: ",
                                  "Before I add everything, I need a few details: ") + "; ".join(parts) + "."
            else:
                body = "You mentioned there's more. What else would you like me to add or know?"
            s.say(lead + body)
        else:
            if parts:
                s.say(s.pick("Thanks! I still need a couple of details: ", "Got it, thank you. Just to complete the cart: ") + "could you tell me " + "; ".join(parts) + "?")
            else:
                s.say("Thanks! Is there anything else you'd like in the cart?")

    def confirm_and_checkout(self, wants: list[Want]) -> None:
        s = self.s
        if s.turns_left() > 1:
            lines = []
            for w in wants:
                if not w.in_cart:
                    continue
                val = (w.product.get("variants") or {}).get(w.cart_vid, "")
                lines.append(f"{w.cart_qty} x {w.name}" + (f" ({val})" if val else ""))
            summary = "; ".join(lines)
            reply = s.say(s.pick(
                f"I've added everything to your cart: {summary}. Shall I place the order?",
                f"Your cart now has {summary}. Does that look right? If so, I'll check out.",
                f"All set: {summary}. Would you like me to go ahead and place the order?",
            ))
            # follow a correction once, if the customer points at something
            if reply and re.search(r"\b(not|wrong|instead|missing|forgot|haven't|should be|need)\b", reply, re.I) and not re.search(r"\b(looks good|perfect|go ahead|yes|that's right|correct)\b", reply, re.I):
                self.fix(wants, reply)
        s.final("checkout")

    def fix(self, wants: list[Want], reply: str) -> None:
        s = self.s
        self.read_answers(wants)
        changed = self.apply(wants)
        if not changed and s.turns_left() > 2:
            # the customer said what is wrong but not what is right: ask, as a person would
            bad = [w for w in wants if w.product and fuzzy_in(w.name, reply, 0.9)]
            parts = []
            for w in bad:
                attr = w.hint or (re.search(r"not the ([\w ]+?) I ", reply) or [None, "variant"])[1]
                if re.search(r"how many", reply, re.I):
                    parts.append(f"how many of the {w.name} you need")
                else:
                    opts = ", ".join(str(v) for v in (w.product.get("variants") or {}).values())
                    parts.append(f"which {attr} of the {w.name} you'd like ({opts})")
            if parts:
                s.say("Sorry about that! Could you tell me " + "; and ".join(parts) + "?")
                self.read_answers(wants)
                changed = self.apply(wants)
        if s.turns_left() > 1:
            s.say(s.pick("Thanks, I've fixed the cart. Shall I place the order now?",
                         "The cart is updated. Is everything correct now?"))

    def apply(self, wants: list[Want]) -> bool:
        changed = False
        for w in wants:
            if w.product is None:
                continue
            self.resolve_variant(w)
            if w.in_cart and (w.variant_id != w.cart_vid or (w.qty or 1) != w.cart_qty):
                if w.variant_id != w.cart_vid:
                    self.tool("cart_remove", product_id=w.product["product_id"], variant_id=w.cart_vid)
                    self.tool("cart_add", product_id=w.product["product_id"], variant_id=w.variant_id, quantity=w.qty or 1)
                else:
                    self.tool("cart_set_quantity", product_id=w.product["product_id"], variant_id=w.cart_vid, quantity=w.qty or 1)
                w.cart_vid, w.cart_qty = w.variant_id, w.qty or 1
                changed = True
            elif not w.in_cart:
                args = {"product_id": w.product["product_id"], "quantity": w.qty or 1}
                if w.variant_id:
                    args["variant_id"] = w.variant_id
                ok, _ = self.tool("cart_add", **args)
                if ok:
                    w.in_cart, w.cart_qty, w.cart_vid = True, w.qty or 1, w.variant_id
                    changed = True
        return changed
