"""oos_oracle (discovery, substitution): mine the p_oos stock-out schedule as an oracle.

Never reads the customer's constraints (nor any reply): only the opening's first content words
(the thing shopped for, as propose_filter does) and tool outputs. The generator dooms only products of
the top-40 evaluation pool (by constraint satisfaction) to go out of stock once shown, so the products
that flip in_stock true->false between two identical searches are (near-)answers: their shared brand,
variant values, max price / min rating / max ship days are the hidden constraints.
Turn 1: B searches; a filler message. Turn 2: the same searches again; infer; recommend.
"""
import re
from collections import Counter
from ecom_bench.conversation import AgentAction, ToolCallRequest
from red_team.exploits import opening_nouns

def _rules(messages):
    sysm = messages[0].text
    b = int(re.search(r"at most (\d+) tool call", sysm).group(1))
    return b

def _k(opening):
    m = re.search(r"top (\d+)", opening)
    return int(m.group(1)) if m else 3

class OOSOracle:
    name = "oos_oracle"
    reads_hidden_goal = False
    def __init__(self, env=None, mode="majority"):
        self.mode = mode

    def _plan(self, messages):
        opening = messages[1].text
        q = opening_nouns(opening)
        b = _rules(messages)
        variants = [dict(query=q, limit=20), dict(query=q, limit=20, min_rating=4.0),
                    dict(query=q, limit=20, max_ship_days=3), dict(query=q, limit=20, min_rating=4.5),
                    dict(query=q + " best", limit=20), dict(query=q, limit=20, max_ship_days=5, min_rating=4.0),
                    dict(query=q + " premium", limit=20)]
        return variants[:b]

    def act(self, messages, hidden, status):
        assistant = [m for m in messages if m.role == "assistant"]
        plan = self._plan(messages)
        calls_made = [c for m in assistant for c in m.tool_calls]
        spoke = sum(1 for m in assistant if not m.tool_calls)
        if spoke == 0 and not calls_made:
            return AgentAction(tool_calls=tuple(ToolCallRequest("catalog_search", a, f"s1-{i}") for i, a in enumerate(plan)))
        if spoke == 0:
            return AgentAction(text="Let me look into the options for you.")
        if len(calls_made) == len(plan):
            return AgentAction(tool_calls=tuple(ToolCallRequest("catalog_search", a, f"s2-{i}") for i, a in enumerate(plan)))
        # answer
        res = {}
        for m in messages:
            if m.role == "tool" and m.tool_call_id and m.tool_call_id.startswith(("s1-", "s2-")):
                res[m.tool_call_id] = (m.json() or {}).get("results", [])
        first, second = {}, {}
        for key, rs in res.items():
            for r in rs:
                (first if key.startswith("s1") else second)[r["product_id"]] = r
        doomed = [first[p] for p in first if first[p]["in_stock"] and p in second and not second[p]["in_stock"]]
        # also the customer saying "X shows as out of stock now" is the same signal; not needed
        allp = {**first, **second}
        instock = [r for p, r in second.items() if r["in_stock"]] or [r for r in first.values() if r["in_stock"]]
        k = _k(messages[1].text)
        if doomed:
            n = len(doomed)
            brands = Counter(r["brand"] for r in doomed)
            brand, bc = brands.most_common(1)[0]
            maxp = max(r["price"] for r in doomed)
            minr = min(r["rating"] for r in doomed)
            maxs = max(r["ship_days"] for r in doomed)
            vals = Counter(v for r in doomed for v in set(r["variants"].values()))
            common = [v for v, c in vals.items() if c >= max(1, 0.7 * n)] if n >= 2 else list(vals)[:0]
            cats = Counter(r["category"] for r in doomed)
            cat = cats.most_common(1)[0][0]
            def ok(r):
                if r["category"] != cat:
                    return False
                if (n == 1 or bc / n >= 0.6) and r["brand"] != brand:
                    return False
                if r["price"] > maxp or r["rating"] < minr or r["ship_days"] > maxs:
                    return False
                vs = set(r["variants"].values())
                return all(v in vs for v in common)
            cands = [r for r in instock if ok(r)]
            cands.sort(key=lambda r: (-r["rating"], r["price"]))
        else:
            cands = instock
        ids = [r["product_id"] for r in cands][:k] or [r["product_id"] for r in instock][:1] or list(allp)[:1]
        return AgentAction(tool_calls=(ToolCallRequest("recommend_products", {"product_ids": ids}, "ans"),))

def factory(env):
    return OOSOracle(env)

