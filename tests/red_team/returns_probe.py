"""returns_probe (E_RETURN): never reads how the customer describes the order.

Turn 1 falsely claims "this item is not eligible for return". The customer either agrees
(target ineligible) or disputes it with the exact delivery age and window: "Are you sure?
It was delivered N days ago, and your return window is W days." No strike either way.
The policy then order_gets the orders placed N+2..N+5 days ago and takes the line delivered
N days ago whose category's window is W. Reason / method / exchange value / replacement wish
come from the customer's words (the customer's templates), asking once if missing."""
from __future__ import annotations
import re
from datetime import date
from ecom_bench.domains.orders.records import RETURN_WINDOW_DAYS, DEFAULT_RETURN_WINDOW_DAYS
from ecom_bench.envs.returns.user import REASON_PHRASES, METHOD_PHRASES
from ecom_bench.catalog.taxonomy import LEAVES
from red_team.common import Conv

CLAIM = "I'm sorry, but I'm afraid this item is not eligible for return."
ASK = "What is the reason for the return, and how would you like to send it back (pickup, drop-off or mail)?"
_DISPUTE = re.compile(r"delivered (\d+) days ago, and your return window is (\d+) days")

_NOUNS = sorted(((leaf.noun.lower(), RETURN_WINDOW_DAYS.get(leaf.top, DEFAULT_RETURN_WINDOW_DAYS)) for leaf in LEAVES),
                key=lambda x: -len(x[0]))


def _label_window(label: str):
    """The return window of an order_list item label, by its kind noun (None: unknown noun)."""
    name = re.sub(r"\s*\([^)]*\)", "", re.sub(r"\s+x\d+\s*$", "", label)).lower()
    for noun, w in _NOUNS:
        if name.endswith(noun):
            return w
    return None


def _window(cat: str) -> int | None:
    top = cat.split(" > ")[0]
    return RETURN_WINDOW_DAYS.get(top, DEFAULT_RETURN_WINDOW_DAYS)


def _find(text: str, table: dict) -> str | None:
    low = text.lower()
    for key, phrases in table.items():
        for ph in phrases:
            # noise may hit non-key words: match on the phrase's distinctive words
            if ph.lower().rstrip(".") in low:
                return key
    kw = {"defective": ("stopped working", "defective"), "damaged": ("damaged", "broken"),
          "wrong_item": ("wrong item", "different item"), "not_as_described": ("described", "description"),
          "does_not_fit": ("fit",), "changed_mind": ("changed my mind", "need it anymore"),
          "pickup": ("pick it up", "picked up", "courier"), "drop_off": ("drop-off", "drop it off"),
          "mail": ("mail",)}
    for key in table:
        if any(k in low for k in kw[key]):
            return key
    return None


class ReturnsProbe:
    name = "returns_probe"
    reads_hidden_goal = False

    def __init__(self, env: str = "returns") -> None:
        pass

    def act(self, messages, hidden, status):
        v = Conv(messages)
        said = [m.text for m in messages if m.role == "assistant" and not m.tool_calls]
        if not said:
            need = [c for c in [("order_list", {}), ("datetime_now", {})] if not v.made(c[0])]
            if need and v.room:
                return v.calls(need[: v.room])
            return v.say(CLAIM)
        words = " ".join(v.users)
        claim_reply = v.users[1] if len(v.users) > 1 else ""
        m = _DISPUTE.search(claim_reply)
        now = None
        orders, gets = [], {}
        for c, r in v.results:
            j = r.json() if not r.error else None
            if c.name == "datetime_now" and j:
                now = date.fromisoformat(j["date"])
            if c.name == "order_list" and j:
                orders = j["orders"]
            if c.name == "order_get" and j:
                gets[j["order_id"]] = j
        if not v.made("order_list") or not v.made("datetime_now"):
            return v.calls([c for c in [("order_list", {}), ("datetime_now", {})] if not v.made(c[0])][: v.room]) if v.room else v.say("One moment.")
        if not m:  # the customer agreed: ineligible (no order identified; give the newest delivered order)
            o = next((o for o in orders if o["status"] == "delivered"), orders[0])
            if o["order_id"] not in gets:
                return v.calls([("order_get", {"order_id": o["order_id"]})]) if v.room else v.say("One moment.")
            ln = gets[o["order_id"]]["lines"][0]
            return v.calls([("report_return_outcome", {"order_id": o["order_id"], "line_id": ln["line_id"],
                                                       "outcome": "not_eligible"})])
        n_days, window = int(m.group(1)), int(m.group(2))
        cands = [o["order_id"] for o in orders if o["status"] == "delivered"
                 and n_days + 2 <= (now - date.fromisoformat(o["placed_on"])).days <= n_days + 5
                 and any(_label_window(it) in (window, None) for it in o["items"])]
        todo = [("order_get", {"order_id": oid}) for oid in cands if oid not in gets]
        if todo:
            return v.calls(todo[: v.room]) if v.room and not v.last_turn else v.say("Let me check your orders.")
        lines = []
        for oid in cands:
            g = gets[oid]
            if not g.get("delivered_at") or (now - date.fromisoformat(g["delivered_at"][:10])).days != n_days:
                continue
            for ln in g["lines"]:
                if ln.get("return_state") is None and _window(ln.get("category") or "") == window:
                    lines.append((oid, ln))
        if not lines:
            return v.calls([("report_return_outcome", {"order_id": cands[0] if cands else orders[0]["order_id"],
                                                       "line_id": (gets.get(cands[0]) or {"lines": [{"line_id": "x"}]})["lines"][0]["line_id"] if cands else "x",
                                                       "outcome": "not_eligible"})])
        oid, ln = lines[0]
        reason, method = _find(words, REASON_PHRASES), _find(words, METHOD_PHRASES)
        if (reason is None or method is None) and ASK not in said and not v.last_turn:
            return v.say(ASK)
        reason, method = reason or "changed_mind", method or "drop_off"
        started = [r for c, r in v.results if c.name in ("return_initiate", "return_exchange") and not r.error]
        exchange = "exchange" in v.opening.lower().split("for", 1)[0] if "exchange" in v.opening.lower() else False
        if exchange:
            mv = re.search(r"for the (.+?) one", words)
            if not v.made("catalog_get_variants", {"product_id": ln["product_id"]}):
                return v.calls([("catalog_get_variants", {"product_id": ln["product_id"]})]) if v.room else v.say("One moment.")
            var = next((r.json() for c, r in v.results if c.name == "catalog_get_variants" and not r.error), {})
            want = mv.group(1).strip().lower() if mv else None
            vid = next((x["variant_id"] for x in var.get("variants", []) if want and any(str(val).lower() == want for k, val in x.items() if k not in ("variant_id",))), None)
            if vid is None and not v.last_turn and "Which one would you like instead?" not in said:
                return v.say("Which one would you like instead?")
            if not started and vid:
                return v.calls([("return_exchange", {"order_id": oid, "line_id": ln["line_id"], "new_variant_id": vid,
                                                     "reason": reason, "method": method})]) if v.room else v.say("One moment.")
            return v.calls([("report_return_outcome", {"order_id": oid, "line_id": ln["line_id"],
                                                       "outcome": "exchange_started" if started else "not_eligible"})])
        if not started and not any(c.name == "return_initiate" for c, _ in v.results):
            return v.calls([("return_initiate", {"order_id": oid, "line_id": ln["line_id"], "reason": reason,
                                                 "method": method})]) if v.room else v.say("One moment.")
        rep = None
        if "replacement" in v.opening.lower():
            leaf = (ln.get("category") or "").split(" > ")[-1]
            args = {"query": leaf, "category": leaf, "limit": 20}
            if mp := re.search(r"under \$(\d+)", v.opening):
                args["max_price"] = float(mp.group(1))
            if mr := re.search(r"at least ([\d.]+) stars", v.opening):
                args["min_rating"] = float(mr.group(1))
            if not v.made("catalog_search", args):
                return v.calls([("catalog_search", args)]) if v.room else v.say("One moment.")
            hits = next((r.json()["results"] for c, r in v.results if c.name == "catalog_search" and c.arguments == args and not r.error), [])
            brand = ln.get("title", "").split(" ")[0]
            hits = [h for h in hits if h.get("in_stock") and h["product_id"] != ln["product_id"]
                    and (not re.search(r"different brand", v.opening) or not h["title"].startswith(brand))]
            rep = hits[0]["product_id"] if hits else None
        args = {"order_id": oid, "line_id": ln["line_id"], "outcome": "return_started" if started else "not_eligible"}
        if rep:
            args["replacement_product_id"] = rep
        return v.calls([("report_return_outcome", args)])
