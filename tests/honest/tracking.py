"""Honest agent for E_TRACK: find the order the customer means, report its status."""
from __future__ import annotations

import datetime as dt

from .common import Session
from .orders import ORD_RE, parse_items, resolve


class TrackingAgent:
    def __init__(self, s: Session):
        self.s = s

    def run(self) -> None:
        s = self.s
        ids = ORD_RE.findall(s.opening)
        if ids:
            ok, o = s.tool("order_get", order_id=ids[0])
            if ok and isinstance(o, dict):
                s.final("report_order_status", order_id=o["order_id"], status=o["status"])
                return
        ok, ol = s.tool("order_list")
        items = parse_items(ol if isinstance(ol, dict) else {})
        today = None
        if s.calls_left() > 0:
            ok, now = s.tool("datetime_now")
            if ok and isinstance(now, dict):
                today = dt.date.fromisoformat(now["date"])
        asked = 0
        while True:
            text = " ".join(s.customer_said)
            if today is None and s.calls_left() > 0:
                ok, now = s.tool("datetime_now")
                if ok and isinstance(now, dict):
                    today = dt.date.fromisoformat(now["date"])
            res = resolve(text, items, today)
            ids_said = ORD_RE.findall(text)
            if ids_said and not any(it.order_id in ids_said for it in items) and s.calls_left() > 0:
                ok, o = s.tool("order_get", order_id=ids_said[-1])
                if ok and isinstance(o, dict):
                    s.final("report_order_status", order_id=o["order_id"], status=o["status"])
                    return
            uniq = sorted({it.order_id for it in res.candidates})
            if len(uniq) == 1:
                it = res.candidates[0]
                status = it.status
                s.final("report_order_status", order_id=it.order_id, status=status)
                return
            if asked >= 3 or s.turns_left() <= 1:
                # best guess: the newest candidate
                it = sorted(res.candidates, key=lambda x: x.index)[0] if res.candidates else items[0]
                s.final("report_order_status", order_id=it.order_id, status=it.status)
                return
            asked += 1
            self.ask_which(res, asked, today)

    def ask_which(self, res, n: int, today) -> None:
        s = self.s
        k = len({it.order_id for it in res.candidates})
        kind = None
        for u in res.used:
            if u.startswith("type:"):
                kind = u[5:]
        if n == 1:
            if kind:
                q = s.pick(
                    f"I'd be glad to check that for you. I can see {k} {kind} orders on your account, so could you help me pin down which one you mean? The brand or product name, when you placed it, or the order number would all help.",
                    f"Sure! There are {k} orders with a {kind} on your account. Could you tell me a bit more about the one you mean, for example the product name, the date you ordered it, or the order number?",
                    f"Happy to look into it. You have several {kind} orders ({k}), so which one is it? Any detail like the brand, the order date or the order ID would help me find it.",
                )
            else:
                q = s.pick(
                    "I'd be glad to check on that. Which order do you mean? The order number, or the product and roughly when you ordered it, would help me find it.",
                    "Sure, could you tell me which order this is about? An order ID, or what you ordered and when, would be perfect.",
                    "Happy to help! Which of your orders are you asking about? Please share the order number or describe the item and when you bought it.",
                )
        else:
            q = s.pick(
                "Thanks! I still see more than one order that could match. Is there anything else you remember about it, such as the exact product name, the date you ordered it or a note you left?",
                "Thank you. A few orders still fit that description. Could you give me one more detail, like the order date, the brand or the variant (size, colour, ...)?",
                "Got it, thanks. To be sure I check the right one: do you remember anything else about it, e.g. when you placed it or the exact product?",
            )
        s.say(q)
