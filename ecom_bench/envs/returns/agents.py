"""Scripted E_RETURN agents (they reuse E_TRACK's order mechanics).

- `ReturnsOracle` reads the hidden goal: order_get (shows the line ids), then the
  return / exchange (catalog_get_variants first, to see the variant id), then
  catalog_get_product on a valid replacement, then report_return_outcome, within B_tool.
- `ReturnsHeuristic` is honest: it resolves the order line like the tracking heuristic
  (`resolve_items`), reads reason / method / wanted variant / replacement constraint
  with keyword rules, asks ONE question for whatever is missing (which order or item,
  why, how they'll send it back, which variant), starts the
  return or exchange (a refusal by the store's rule means not eligible), searches a
  replacement in the same category and reports.
- `ReturnsRandom`: a random order and line, a return with a random reason and method.
"""

from __future__ import annotations

import re
from typing import Any

from ecom_bench._seeding import seeded_rng
from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, tool_results
from ecom_bench.users import says
from ecom_bench.envs.tracking.agents import (
    asked_before,
    call,
    follow_plan,
    listed_items,
    listed_orders,
    needs_clock,
    resolve_items,
    said_order_ids,
    today_from,
    unique_order,
    user_texts,
)

REASON_RULES = (("changed_mind", ("changed my mind", "don't need", "no longer need")),
                ("does_not_fit", ("doesn't fit", "does not fit")),
                ("not_as_described", ("not as described", "description")),
                ("wrong_item", ("wrong item", "different item")),
                ("damaged", ("damaged", "broken")),
                ("defective", ("stopped working", "defective", "doesn't work", "does not work")))
METHOD_RULES = (("pickup", ("pick it up", "picked up", "pickup", "courier")),
                ("drop_off", ("drop-off", "drop it off")),
                ("mail", ("mail",)))
#: "a replacement mouse", "a replacement pair of jeans", "some replacement gel pens".
_WISH = re.compile(r"recommend (?:an?|some) replacement (.+?)\?", re.I)


def _first_rule(text_l: str, rules: tuple[tuple[str, tuple[str, ...]], ...]) -> str | None:
    for value, keys in rules:
        if any(says(text_l, k) for k in keys):
            return value
    return None


_EXCHANGE_FOR = re.compile(r"\bfor (?:the .+? one|a different \w+)", re.I)
#: "I'd like the L one instead" / "exchange it for the Brushed Gold one": the variant wanted.
_WANTED = re.compile(r"\b(?:for|like) the ([^.!?;,]{1,40}?) one\b", re.I)


def _reference_text(texts: list[str]) -> str:
    """What the customer said about which item: without reason, method, replacement and exchange wishes."""
    sentences = (s for t in texts for s in re.split(r"(?<=[.!?])\s+", t) if not _is_request_detail(s))
    return _EXCHANGE_FOR.sub(" ", " ".join(sentences))


def _is_request_detail(sentence: str) -> bool:
    """Sentences about reason, method or replacement (not about which order)."""
    low = sentence.lower()
    return (_first_rule(low, REASON_RULES) is not None or _first_rule(low, METHOD_RULES) is not None
            or "replacement" in low or (_WANTED.search(sentence) is not None and "exchange" not in low))


class ReturnsOracle:
    name = "oracle"
    reads_hidden_goal = True

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        if hidden is None:
            raise ValueError("the oracle needs the hidden goal")
        g = hidden["goal"]
        ids = {"order_id": g["order_id"], "line_id": g["line_id"]}
        calls: list[tuple[str, dict[str, Any]]] = [("order_get", {"order_id": g["order_id"]})]
        if g["eligible"] and g["kind"] == "exchange":
            calls += [("catalog_get_variants", {"product_id": g["product_id"]}),
                      ("return_exchange", {**ids, "new_variant_id": g["new_variant_id"], "reason": g["reason"],
                                           "method": g["method"]})]
        elif g["eligible"]:
            calls.append(("return_initiate", {**ids, "reason": g["reason"], "method": g["method"]}))
        if g["replacement_example"]:
            calls.append(("catalog_get_product", {"product_id": g["replacement_example"]}))
        final = ("report_return_outcome", {**ids, "outcome": g["outcome"],
                                           "replacement_product_id": g["replacement_example"]})
        return follow_plan(messages, status, calls, final)


class ReturnsHeuristic:
    name = "heuristic"
    reads_hidden_goal = False
    #: Rounds of questions before acting on the likeliest reading.
    max_asks = 2

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        n = len(messages)
        room = status.calls_left
        wait = AgentAction(text="Let me look into that for you.")

        def tool(name: str, **args: Any) -> AgentAction:
            return AgentAction(tool_calls=(call(name, n, 0, **args),)) if room > 0 else wait

        texts = user_texts(messages)
        text = " ".join(texts)
        low = text.lower()
        results = tool_results(messages)
        rows = listed_orders(messages)
        asked = asked_before(messages)
        reference = _reference_text(texts)
        # --- which order, and which of its lines
        ids = said_order_ids(texts)
        oid: str | None = ids[-1] if ids else None
        index: int | None = None
        if oid is None:
            if not rows:
                return tool("order_list")
            today = today_from(messages)
            if today is None and needs_clock(text):
                return tool("datetime_now")
            items = resolve_items(rows, reference, today)
            oid = unique_order(items)
            if oid is None and asked >= self.max_asks:  # settle for the likeliest: the newest best match
                best = max(items or listed_items(rows), key=lambda it: it.when)
                oid, items = best.order_id, [best]
            if oid is not None and len(items) == 1:
                index = items[0].index
        if oid is not None and "lines" not in rows.get(oid, {}):
            failed = any(c.name == "order_get" and c.arguments.get("order_id") == oid and r.error for c, r in results)
            if failed:
                return AgentAction(text="I couldn't find that order. Could you check the order number?")
            return tool("order_get", order_id=oid)
        line = None
        if oid is not None:
            lines = rows[oid]["lines"]
            if index is None:
                mine = resolve_items({oid: rows[oid]}, reference, None)
                index = mine[0].index if len(mine) == 1 else (0 if len(lines) == 1 else None)
            line = lines[index] if index is not None and index < len(lines) else None
        # --- what is still missing: one question for all of it
        exchange = "exchange" in low
        reason, method = _first_rule(low, REASON_RULES), _first_rule(low, METHOD_RULES)
        value = None
        for m in _WANTED.finditer(text):
            value = m.group(1).strip()
        gaps = [q for q, gap in (
            ("which order it is (what the item was and roughly when you ordered it)", oid is None),
            ("which item from that order you mean", oid is not None and line is None),
            ("why you're returning it", reason is None),
            ("how you'd like to send it back (pickup, drop-off or mail)", method is None),
            ("which size or colour you'd like instead", exchange and value is None)) if gap]
        if gaps and asked < self.max_asks:
            return AgentAction(text="Could you tell me " + ", ".join(gaps[:-1]) + (" and " if len(gaps) > 1 else "")
                               + gaps[-1] + "?")
        assert oid is not None, "an order is settled once no question is left to ask"
        if line is None:
            line = rows[oid]["lines"][0]
        reason, method = reason or "changed_mind", method or "drop_off"
        done = [(c, r) for c, r in results if c.name in ("return_initiate", "return_exchange")
                and c.arguments.get("line_id") == line["line_id"]]
        ok = any(not r.error for _, r in done)
        refused = any(r.error and "cannot be returned" in r.text for _, r in done)
        if not ok and not refused and not done:
            ids_ = {"order_id": oid, "line_id": line["line_id"]}
            if not exchange:
                return tool("return_initiate", **ids_, reason=reason, method=method)
            variants = next((r.json() for c, r in results if c.name == "catalog_get_variants" and not r.error
                             and c.arguments.get("product_id") == line["product_id"]), None)
            if variants is None:
                return tool("catalog_get_variants", product_id=line["product_id"])
            vid = next((v["variant_id"] for v in variants["variants"]
                        if value and value.lower() in [str(x).lower() for x in v.values()]), None)
            if vid is None:
                vid = next((v["variant_id"] for v in variants["variants"] if v["variant_id"] != line["variant_id"]
                            and v["in_stock"]), line["variant_id"])
            return tool("return_exchange", **ids_, new_variant_id=vid, reason=reason, method=method)
        outcome = "not_eligible" if not ok else ("exchange_started" if exchange else "return_started")
        # --- replacement
        replacement = None
        wish = _WISH.search(text)
        if wish:
            found = self._replacement(results, line, wish.group(1))
            if found is False:
                leaf = (line.get("category") or "").split(" > ")[-1]
                args: dict[str, Any] = {"query": leaf or line["title"], "category": leaf or None}
                price = re.search(r"under \$(\d+(?:\.\d+)?)", wish.group(1))
                rating = re.search(r"at least (\d(?:\.\d)?) stars", wish.group(1))
                if price:
                    args["max_price"] = float(price.group(1))
                if rating:
                    args["min_rating"] = float(rating.group(1))
                return tool("catalog_search", **args)
            replacement = found
        return AgentAction(tool_calls=(call("report_return_outcome", n, 0, order_id=oid, line_id=line["line_id"],
                                            outcome=outcome, replacement_product_id=replacement),))

    @staticmethod
    def _replacement(results: list, line: dict[str, Any], wish: str) -> str | None | bool:
        """A fitting search result; None if the search found nothing; False if not searched yet."""
        searches = [r.json() for c, r in results if c.name == "catalog_search" and not r.error]
        if not searches:
            return False
        brand = line["title"].split()[0]
        for hit in searches[-1].get("results", []):
            if hit["product_id"] == line["product_id"] or not hit["in_stock"]:
                continue
            if "different brand" in wish and hit["brand"].split()[0] == brand:
                continue
            return hit["product_id"]
        return None


class ReturnsRandom:
    name = "random"
    reads_hidden_goal = False

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        n = len(messages)
        rng = seeded_rng("returns-random", next(iter(user_texts(messages)), ""))
        rows = listed_orders(messages)
        if status.calls_left <= 0:
            return AgentAction(text="One moment please.")
        if not rows:
            return AgentAction(tool_calls=(call("order_list", n),))
        oid = rng.choice(sorted(rows))
        if "lines" not in rows[oid]:
            return AgentAction(tool_calls=(call("order_get", n, 0, order_id=oid),))
        line = rng.choice(rows[oid]["lines"])["line_id"]
        if not any(c.name == "return_initiate" for c, _ in tool_results(messages)):
            return AgentAction(tool_calls=(call("return_initiate", n, 0, order_id=oid, line_id=line,
                                                reason=rng.choice(("defective", "damaged", "changed_mind")),
                                                method=rng.choice(("pickup", "drop_off", "mail"))),))
        return AgentAction(tool_calls=(call("report_return_outcome", n, 0, order_id=oid, line_id=line,
                                            outcome="return_started"),))
