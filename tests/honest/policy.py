"""Honest agent for E_POLICY: find the rule for the customer's situation, ask for the facts it
depends on, work the answer out as the document says, submit it."""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from typing import Any

from .common import Session

# Words a reader needs to recognise; used to undo the customer's typos ("subtotla").
VOCAB = """
the item cost my order subtotal is i ordered through website mobile app retail store call center
payment method credit card debit card paypal store gift there are items in package weighs lb placed
orders past months shipping to contiguous us canada hawaii alaska puerto rico member basic silver gold
platinum purchase falls regular season holiday clearance sale black friday week loading onto from
department home goods apparel electronics toys beauty sports gear groceries competitor sells it for less
bought days ago was delivered reason return changed mind not as described arrived late wrong size
damaged defective opened unopened picked standard expedited overnight same-day classed oversized
bulky fragile regular-size small open-box refurbished brand new product registered unregistered lower
price at an online marketplace local authorized retailer warehouse club policy how much many will
what fee pay get back refund restocking window coverage warranty discount save bonus value credit
resolution service until gets here reach me take send if per under your does give add this match
price-match months old age had year years condition state speed channel period tier count
and with have need know kind kinds sort type anything else about case tell more situation depends let details just ask hi
hello hey good morning thanks thank you said also does say days do me order orders it's i'm i've
told everything that this when where which who why would could should can there's here's other any
one two three was were been being has having did done get got give given going want wanted like
think that's all some them they their then than into onto over under only also very much many
item items shipping ship policy's what's long time take takes arrives arrive cost costs paid pay
""".split()
VOCAB_SET = set(VOCAB)


def fix_typos(text: str) -> str:
    out = []
    toks = re.findall(r"\$?[\d,]+(?:\.\d+)?|[A-Za-z][A-Za-z'-]*|[^\sA-Za-z\d]", text)
    for k, tok in enumerate(toks):
        low = tok.lower()
        nxt = toks[k + 1].lower() if k + 1 < len(toks) else ""
        if low == "2" and re.match(r"^[a-z]", nxt) and not re.match(r"^(items?|orders?|days?|months?|lb|weeks?|years?)$", nxt):
            out.append("to")
            continue
        if low == "form":
            out.append("from")
            continue
        if re.match(r"^[a-z][a-z'-]*$", low) and len(low) >= 3 and low not in VOCAB_SET and "'" not in low:
            m = difflib.get_close_matches(low, VOCAB, n=1, cutoff=0.75)
            if m:
                out.append(m[0])
                continue
        if low == "&":
            out.append("and")
            continue
        out.append(tok)
    s = " ".join(out)
    s = re.sub(r"\s+([,.;:?!])", r"\1", s)
    s = s.replace("$ ", "$")
    return s


def num(x: str) -> float:
    return float(x.replace(",", "").replace("$", "").rstrip("."))


END = r"(?=,|\.(?:\s|$)|;|\?|!| and |$)"
FACT_PATTERNS: list[tuple[str, str, str]] = [
    ("item price", r"item cost \$?([\d,]+(?:\.\d+)?)", "n"),
    ("item price", r"item (?:costs|was|is priced at) \$([\d,]+(?:\.\d+)?)", "n"),
    ("order subtotal", r"subtotal (?:is|was) \$?([\d,]+(?:\.\d+)?)", "n"),
    ("purchase channel", r"ordered (?:it )?(?:through|via|on|at) the ([a-z ]+?)" + END, "c"),
    ("payment method", r"payment method (?:is|was) ([a-z ]+?)" + END, "c"),
    ("payment method", r"paid (?:with|by|using) (?:a |my )?([a-z ]+?)" + END, "c"),
    ("number of items", r"there (?:are|is) (\d+) items? in the order", "n"),
    ("package weight", r"package weighs ([\d,.]+) ?lb", "n"),
    ("order count over the past 12 months", r"placed (\d+) orders? in the past 12 months", "n"),
    ("shipping destination", r"shipping (?:it )?to (?:the )?([a-z ]+?)" + END, "c"),
    ("membership tier", r"i'?m an? ([a-z]+) member", "c"),
    ("membership tier", r"membership tier is ([a-z]+)", "c"),
    ("purchase period", r"purchase falls in (?:the )?([a-z ]+?)" + END, "c"),
    ("gift card amount", r"loading \$?([\d,]+(?:\.\d+)?) onto the gift card", "n"),
    ("product department", r"(?:from|for) the ([a-z ]+?) department", "c"),
    ("price difference", r"competitor sells it for \$?([\d,]+(?:\.\d+)?) less", "n"),
    ("days since purchase", r"bought it (\d+) days? ago", "n"),
    ("days since delivery", r"delivered (\d+) days? ago", "n"),
    ("size class", r"item is classed as (?:an? )?([a-z -]+?)" + END, "c"),
    ("item condition", r"the item is (?!classed)([a-z -]+?)" + END, "c"),
    ("return reason", r"reason for the return is:? ([a-z ]+?)" + END, "c"),
    ("shipping speed", r"picked ([a-z -]+?) shipping", "c"),
    ("item state", r"bought it ((?!\d)[a-z -]+?)" + END, "c"),
    ("registration status", r"product is (registered|unregistered)", "c"),
    ("competitor type", r"lower price is at (?:an? )?([a-z ]+?)" + END, "c"),
    ("item age", r"(?:item|it) is (\d+) months? old", "n"),
    ("item age", r"(?:had it|bought it|owned it) (?:for )?(\d+) months?(?: ago)?", "n"),
    ("item age", r"item age is (\d+) months?", "n"),
]


def parse_facts(text: str) -> dict[str, Any]:
    t = fix_typos(text).lower()
    facts: dict[str, Any] = {}
    for attr, pat, kind in FACT_PATTERNS:
        for m in re.finditer(pat, t):
            v = m.group(1).strip()
            if kind == "n":
                try:
                    facts[attr] = num(v)
                except ValueError:
                    pass
            else:
                facts[attr] = v
    return facts


TOPICS = [
    ("return resolution", ["resolution", "what do i get for this return", "say i get for this return"]),
    ("warranty service", ["warranty service", "what kind of warranty", "how will the warranty", "kind of service", "what service", "which service will"]),
    ("shipping service", ["shipping service", "which carrier", "which service", "how will it ship", "how will you ship"]),
    ("restocking fee", ["restocking"]),
    ("price-match credit", ["price-match", "price match"]),
    ("gift card bonus", ["bonus"]),
    ("member discount", ["discount", "save on this order", "how much will i save"]),
    ("warranty coverage", ["coverage", "months of warranty", "warranty"]),
    ("return window", ["return window", "days do i have to return", "have to return it"]),
    ("refund amount", ["refund", "money back", "get back"]),
    ("delivery time", ["how many days will it take", "until my order gets", "reach me", "delivery time", "arrive", "how long"]),
    ("shipping fee", ["shipping fee", "shipping cost", "shipping will cost", "will shipping cost", "pay for shipping"]),
]

TITLES = {
    "return resolution": "Return resolutions", "warranty service": "Warranty service",
    "shipping service": "Shipping service", "restocking fee": "Restocking fees",
    "price-match credit": "Price matching", "gift card bonus": "Gift card bonus",
    "member discount": "Member discounts", "warranty coverage": "Warranty coverage",
    "return window": "Return windows", "refund amount": "Refunds", "delivery time": "Delivery times",
    "shipping fee": "Shipping fees",
}


def find_topic(text: str) -> str | None:
    t = fix_typos(text).lower()
    for topic, keys in TOPICS:
        if any(k in t for k in keys):
            return topic
    return None


ASK_PHRASE = {
    "membership tier": "your membership tier",
    "payment method": "how you paid",
    "purchase channel": "where you bought it (website, mobile app, retail store or call center)",
    "purchase period": "which sales period the purchase fell in (regular season, holiday season, clearance sale or Black Friday week)",
    "return reason": "why you're returning it",
    "item condition": "what condition the item is in",
    "product department": "which department the item is from",
    "item state": "whether you bought it new, open-box or refurbished",
    "size class": "the item's size class (regular-size, oversized, bulky, ...)",
    "shipping speed": "which shipping speed you chose",
    "order subtotal": "your order subtotal",
    "days since delivery": "how many days ago it was delivered",
    "number of items": "how many items are in the order",
    "competitor type": "where you saw the lower price",
    "registration status": "whether you registered the product",
    "item price": "what the item cost",
    "order count over the past 12 months": "how many orders you've placed in the past 12 months",
    "item age": "how old the item is",
    "shipping destination": "where the order is shipping to",
    "days since purchase": "how many days ago you bought it",
    "package weight": "how much the package weighs",
    "gift card amount": "how much you're loading onto the gift card",
    "price difference": "how much lower the competitor's price is",
}


@dataclass
class Rule:
    rule_id: str
    title: str
    applies: str
    sets: str
    unit: str | None
    outcomes: list[str]
    kind: str  # "numeric" | "decision"
    start: dict[str, Any]
    clauses: list[dict[str, Any]]
    default: str | None
    floor: float
    rounding: str
    text: str

    def needed(self) -> list[str]:
        need = []
        if self.start.get("var"):
            need.append(self.start["var"])
        for c in self.clauses:
            if c["attr"] not in need:
                need.append(c["attr"])
            for a in (c["then"], c.get("else")):
                if a and a.get("per"):
                    if a["per"] not in need:
                        need.append(a["per"])
        return need


BASE_VARS = {"item price": "item price", "order subtotal": "order subtotal", "price difference": "price difference",
             "gift card amount": "gift card amount"}
PER_VARS = {"day since delivery": "days since delivery", "item in the order": "number of items",
            "order placed in the past 12 months": "order count over the past 12 months",
            "lb the package weighs": "package weight", "dollar of the item price": "item price",
            "day since purchase": "days since purchase"}


def parse_action(a: str) -> dict[str, Any] | None:
    a = a.strip().rstrip(".")
    m = re.match(r"^the (.+?) is (.+)$", a)
    if m:
        return {"op": "set", "value": m.group(2).strip()}
    m = re.match(r"^take ([\d.]+)% off$", a)
    if m:
        return {"op": "mul", "value": 1 - float(m.group(1)) / 100}
    m = re.match(r"^(add|subtract) ([\d.]+)%$", a)
    if m:
        f = float(m.group(2)) / 100
        return {"op": "mul", "value": 1 + f if m.group(1) == "add" else 1 - f}
    m = re.match(r"^(add|subtract) \$?([\d,.]+)(?: (?:days?|months?))?(?: per (.+))?$", a)
    if m:
        v = num(m.group(2))
        if m.group(1) == "subtract":
            v = -v
        per = None
        if m.group(3):
            per = PER_VARS.get(m.group(3).strip())
            if per is None:
                for k, pv in PER_VARS.items():
                    if k.split()[0] in m.group(3):
                        per = pv
        return {"op": "add", "value": v, "per": per}
    return None


def parse_cond(attr: str, cond: str) -> dict[str, Any]:
    m = re.match(r"^(at least|under|over|at most|more than|less than) \$?([\d,.]+)", cond)
    if m:
        return {"type": "num", "op": m.group(1), "value": num(m.group(2))}
    vals = [v.strip().lower() for v in re.split(r", | or ", cond) if v.strip()]
    return {"type": "cat", "values": vals}


def parse_rule(doc: dict[str, Any]) -> Rule | None:
    text = doc["text"]
    lines = text.split("\n")
    applies = sets = ""
    unit = None
    outcomes: list[str] = []
    kind = "numeric"
    start: dict[str, Any] = {}
    clauses = []
    default = None
    floor = 0.0
    rounding = "cent"
    for line in lines[1:]:
        line = line.strip()
        if line.startswith("Applies to:"):
            applies = line[len("Applies to:"):].strip().rstrip(".")
        elif line.startswith("Sets:"):
            m = re.match(r"Sets: the (.+?)(?:, in (\w+))?\.(?: Possible outcomes: (.+)\.)?$", line)
            if m:
                sets = m.group(1)
                unit = m.group(2)
                if m.group(3):
                    outcomes = [o.strip() for o in m.group(3).split(",")]
        elif line.startswith("Check the clauses"):
            kind = "decision"
        elif line.startswith("Start from"):
            m = re.match(r"Start from ([\d.]+)% of the (.+?)\.", line)
            if m:
                start = {"pct": float(m.group(1)) / 100, "var": BASE_VARS.get(m.group(2), m.group(2))}
            m = re.match(r"Start from a base of \$?([\d,.]+)(?: \w+)? plus \$?([\d,.]+)(?: \w+)? per (.+?)\. Then", line)
            if m:
                per = m.group(3)
                var = PER_VARS.get(per)
                if var is None:
                    var = "package weight" if "lb" in per else "item price"
                start = {"base": num(m.group(1)), "rate": num(m.group(2)), "var": var}
        elif re.match(r"^\d+\. If the ", line):
            m = re.match(r"^\d+\. If the (.+?) is (.+?), ((?:add|subtract|take|the ).+?)(?:; otherwise (.+?))?\.$", line)
            if not m:
                continue
            attr, cond, then, other = m.groups()
            clauses.append({"attr": attr, "cond": parse_cond(attr, cond), "then": parse_action(then),
                            "else": parse_action(other) if other else None, "text": line})
        elif line.startswith("If none of them holds"):
            m = re.match(r"If none of them holds, the .+? is (.+)\.$", line)
            if m:
                default = m.group(1)
        elif "never below" in line:
            m = re.search(r"never below \$?([\d.]+)", line)
            if m:
                floor = float(m.group(1))
            if "whole day" in line or "whole month" in line:
                rounding = "whole"
    if not sets:
        return None
    return Rule(doc["rule_id"], doc.get("title", ""), applies, sets, unit, outcomes, kind, start, clauses,
                default, floor, rounding, text)


def norm_val(v: str) -> str:
    v = v.lower().strip()
    v = re.sub(r"^(the|a|an) ", "", v)
    return v


def cond_holds(c: dict[str, Any], value: Any) -> bool:
    cond = c["cond"]
    if cond["type"] == "num":
        x = float(value)
        if cond["op"] == "at least":
            return x >= cond["value"]
        if cond["op"] == "under" or cond["op"] == "less than":
            return x < cond["value"]
        if cond["op"] == "over" or cond["op"] == "more than":
            return x > cond["value"]
        if cond["op"] == "at most":
            return x <= cond["value"]
    v = norm_val(str(value))
    return any(v == norm_val(x) for x in cond["values"])


def round_half_up(x: float, nd: int = 0) -> float:
    q = 10 ** nd
    return math.floor(x * q + 0.5 + 1e-9) / q


def evaluate(rule: Rule, facts: dict[str, Any]) -> tuple[Any, list[str]]:
    """The answer, and the steps (for the explanation to the customer)."""
    steps = []
    if rule.kind == "decision":
        for c in rule.clauses:
            if cond_holds(c, facts[c["attr"]]):
                steps.append(f"clause {c['text'][:2]} applies")
                return c["then"]["value"], steps
        return rule.default, steps
    st = rule.start
    if "pct" in st:
        x = st["pct"] * float(facts[st["var"]])
    else:
        x = st["base"] + st["rate"] * float(facts[st["var"]])
    for c in rule.clauses:
        act = c["then"] if cond_holds(c, facts[c["attr"]]) else c["else"]
        if act is None:
            continue
        if act["op"] == "mul":
            x *= act["value"]
        elif act["op"] == "add":
            x += act["value"] * (float(facts[act["per"]]) if act.get("per") else 1.0)
    x = max(x, rule.floor)
    if rule.rounding == "whole":
        x = round_half_up(x, 0)
    else:
        x = round_half_up(x, 2)
    return x, steps


def scope_of(applies: str) -> tuple[str, str]:
    a = applies.lower()
    m = re.match(r"items from the (.+?) department", a)
    if m:
        return "product department", m.group(1)
    m = re.match(r"orders shipping to (?:the )?(.+)", a)
    if m:
        return "shipping destination", m.group(1)
    m = re.match(r"purchases made through the (.+)", a)
    if m:
        return "purchase channel", m.group(1)
    return "", a


class PolicyAgent:
    def __init__(self, s: Session):
        self.s = s
        self.docs: dict[str, dict[str, Any]] = {}

    def text(self) -> str:
        return " ".join(self.s.customer_said)

    def search(self, query: str) -> list[dict[str, Any]]:
        s = self.s
        if s.calls_left() <= 0:
            s.say(s.pick("Let me look up the exact policy for that.", "One moment while I check the policy document."))
        ok, r = s.tool("policy_search", query=query)
        res = r.get("results", []) if ok and isinstance(r, dict) else []
        for d in res:
            self.docs[d["rule_id"]] = d
        return res

    def pick_rule(self, topic: str, facts: dict[str, Any]) -> tuple[Rule | None, list[Rule]]:
        rules = [r for r in (parse_rule(d) for d in self.docs.values()) if r and r.sets == topic]
        for r in rules:
            kind, val = scope_of(r.applies)
            if kind and kind in facts and norm_val(str(facts[kind])) == norm_val(val):
                return r, rules
        return None, rules

    def run(self) -> None:
        s = self.s
        topic = find_topic(s.opening)
        facts = parse_facts(self.text())
        asked_scope = 0
        asked_facts = 0
        rule = None
        while True:
            facts = parse_facts(self.text())
            topic = topic or find_topic(self.text())
            if topic is None:
                s.say("I'd be glad to help. Could you tell me what exactly you'd like to know about our policy?")
                continue
            rule, same_topic = self.pick_rule(topic, facts)
            if rule is None:
                scope_vals = [f"{facts[k]}" for k in ("product department", "shipping destination", "purchase channel") if k in facts]
                q = TITLES.get(topic, topic) + " " + " ".join(scope_vals)
                self.search(q)
                rule, same_topic = self.pick_rule(topic, facts)
            if rule is None and scope_vals_exist(facts):
                # try each stated scope alone, phrased like the documents' titles
                for k, pre in (("product department", "items from the {} department"), ("shipping destination", "orders shipping to {}"), ("purchase channel", "purchases made through the {}")):
                    if k in facts and rule is None and s.calls_left() > 0:
                        self.search(TITLES.get(topic, topic) + ": " + pre.format(facts[k]))
                        rule, same_topic = self.pick_rule(topic, facts)
            if rule is None:
                if asked_scope >= 2 or s.turns_left() <= 1:
                    break
                asked_scope += 1
                kinds = {scope_of(r.applies)[0] for r in same_topic} or {"product department"}
                kind = sorted(kinds)[0]
                what = {"product department": "which department the item is from (for example electronics, apparel or home goods)",
                        "shipping destination": "where you're shipping the order to",
                        "purchase channel": "how you placed the order (website, mobile app, retail store or call center)"}[kind]
                s.say(s.pick(
                    f"Happy to check that. Our {topic} rules depend on the situation, so could you tell me {what}? Anything else about your order that might matter is welcome too.",
                    f"Sure! To find the right policy, could you let me know {what}, and any other details of your purchase?",
                ))
                continue
            missing = [a for a in rule.needed() if a not in facts]
            if missing and asked_facts < 2 and s.turns_left() > 1:
                asked_facts += 1
                asked = [ASK_PHRASE.get(a, a) for a in missing]
                if len(asked) == 1:
                    lst = asked[0]
                else:
                    lst = ", ".join(asked[:-1]) + " and " + asked[-1]
                s.say(s.pick(
                    f"Thanks! The {topic} depends on a few more details. Could you tell me {lst}?",
                    f"I found the policy that applies ({rule.rule_id}). To work out your {topic}, I need to know {lst}. Could you share that?",
                    f"Got it. Could you also let me know {lst}? The policy depends on it.",
                ))
                continue
            break
        if rule is None:
            s.final("answer_policy_question", answer="I could not find the applicable policy.")
            return
        facts = parse_facts(self.text())
        try:
            value, _ = evaluate(rule, facts)
        except (KeyError, ValueError, TypeError):
            value = None
        s.final("answer_policy_question", answer=self.format_answer(rule, value, facts))

    def format_answer(self, rule: Rule, value: Any, facts: dict[str, Any]) -> str:
        """The answer in the words an LLM would use: sometimes the bare value, sometimes a
        sentence, sometimes a sentence that also recalls the facts it rests on."""
        s = self.s
        if value is None:
            return "I don't have enough information to say."
        what = rule.sets
        if rule.kind == "decision":
            v = str(value)
        elif rule.unit == "dollars":
            v = f"${value:,.2f}"
        else:
            n = int(value)
            u = rule.unit or ""
            if n == 1 and u.endswith("s"):
                u = u[:-1]
            v = f"{n} {u}".strip()
        basis = []
        for k, fv in facts.items():
            if k in ("membership tier",):
                basis.append(f"your {str(fv).title()} membership")
            elif k in ("order subtotal", "item price", "gift card amount", "price difference") and isinstance(fv, float):
                basis.append(f"the ${fv:,.2f} {k}")
            elif k == "package weight":
                basis.append(f"a {fv:g} lb package")
            elif k == "shipping destination":
                basis.append(f"shipping to {str(fv).title()}")
        style = s.rng.random()
        if style < 0.4:
            if rule.kind == "decision":
                return v
            return s.pick(v, v.lstrip("$") if v.startswith("$") else v)
        if style < 0.7 or not basis:
            return s.pick(f"The {what} is {v}.", f"Your {what} will be {v}.", f"According to the policy, the {what} is {v}.")
        b = " and ".join(basis[:2])
        return s.pick(f"Based on {b}, the {what} is {v}.", f"With {b}, your {what} comes to {v}.")


def scope_vals_exist(facts):
    return any(k in facts for k in ("product department", "shipping destination", "purchase channel"))
