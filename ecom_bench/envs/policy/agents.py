"""Scripted E_POLICY agents.

`PolicyOracle` reads the hidden goal, retrieves the target rule with policy_search (so
its document was shown) and submits the goal's answer. `PolicyHeuristic` is an honest
reader: it searches with the customer's situation and question, picks the result whose
scope and title match the customer's message, parses the rule's text (not the rule book: the start amount, with its rate per unit of the
customer's amount, every clause, the floor and rounding), reads
the facts it needs from the customer's messages with exact keyword rules, asks one plain
question for those the rule needs and the customer has not stated (naming them as the
document does: "What is your order subtotal and package weight?"), and computes the
answer as the text says. It fails where a careful model should not: a typo in a key
word hides a fact, a look-alike outranks the right rule.
`PolicyRandom` searches once and answers a constant, a random amount or a random
outcome named by a retrieved document.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from ecom_bench._seeding import derive_seed, seeded_rng
from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, ToolCallRequest, tool_results
from ecom_bench.world._tooling import MAX_QUERY_CHARS
from ecom_bench.domains.policy.rulebook import tokens
from ecom_bench.domains.policy.rules import SLOTS

SEARCH_TOOLS = ("policy_search", "policy_get")
FINAL = "answer_policy_question"


def _call(name: str, n: int, **arguments: Any) -> ToolCallRequest:
    return ToolCallRequest(name, arguments, id=f"{name}-{n}")


def _fmt_number(x: float) -> str:
    return f"{x:.2f}"


class PolicyOracle:
    """policy_search for the target rule (by title and id), then the goal's answer."""

    name = "oracle"
    reads_hidden_goal = True

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        if hidden is None:
            raise ValueError("the oracle needs the hidden goal")
        goal = hidden["goal"]
        n = len(messages)
        shown = any(c.name in SEARCH_TOOLS and not r.error and goal["rule_id"] in r.text
                    for c, r in tool_results(messages))
        if not shown:
            return AgentAction(tool_calls=(_call("policy_search", n, query=f"{goal['title']} {goal['rule_id']}"),))
        answer = goal["answer"] if goal["kind"] == "choice" else _fmt_number(float(goal["answer"]))
        return AgentAction(tool_calls=(_call(FINAL, n, answer=answer),))


# ---------------------------------------------------------------- heuristic
#: The words of the customer's sentences that carry each numeric fact (exact, so typos hide it).
NUMBER_CUES = {"subtotal": "subtotal", "weight": "weighs", "items": "items", "days_since_delivery": "delivered",
               "days_since_purchase": "bought it", "item_price": "cost", "price_gap": "competitor",
               "item_age": "had it", "orders_year": "placed", "card_amount": "loading"}
_LABELS = {s.label: s.key for s in SLOTS.values()}
_FRAGMENT = re.compile(r"[!?;&]|\.(?!\d)|,\s|\band\b")
_NUM = re.compile(r"\d+(?:\.\d+)?")
_EFFECT = r"((?:[^,]|,(?=\d{3}))+)"  # no commas, but "$1,250.00"
_CLAUSE_NUMERIC = re.compile(rf"^\d+\. If (.+), {_EFFECT}; otherwise {_EFFECT}\.$")
_CLAUSE_CHOICE = re.compile(r"^\d+\. If (.+), the .+? is (.+)\.$")
_DEFAULT = re.compile(r"^If none of them holds, the .+? is (.+)\.$")
_BASE = re.compile(r"^Start from (?:a base of )?\$?([\d,.]+)(%| days?| months?)?(?: of the (.+?))?"
                   r"(?: plus \$?([\d.]+)(?: days| months)? (per .+?))?\. Then")
_FLOOR = re.compile(r"is never below \$?([\d,.]+)")


def _has(text_l: str, phrase: str) -> bool:
    return re.search(rf"(?<![a-z0-9]){re.escape(phrase.lower())}(?![a-z0-9])", text_l) is not None


@dataclass
class _Cond:
    slot: str
    op: str  # "at_least" | "under" | "in"
    threshold: float = 0.0
    values: tuple[str, ...] = ()

    def holds(self, value: Any) -> bool:
        if self.op == "in":
            return str(value).lower() in {v.lower() for v in self.values}
        return float(value) >= self.threshold if self.op == "at_least" else float(value) < self.threshold


@dataclass
class _ReadRule:
    """A rule as the heuristic understood it from the document text."""

    choice: bool
    base: float = 0.0
    base_slot: str | None = None
    rate: float = 0.0
    rate_slot: str | None = None
    money: bool = True
    floor: float = 0.0
    clauses: list[tuple[_Cond, Any, Any]] = field(default_factory=list)  # (cond, then, otherwise|outcome)
    default: str | None = None

    def slots(self) -> list[str]:
        keys = [k for k in (self.base_slot, self.rate_slot) if k] + [c.slot for c, _, _ in self.clauses]
        return list(dict.fromkeys(keys))

    def evaluate(self, facts: dict[str, Any]) -> str:
        if self.choice:
            for cond, outcome, _ in self.clauses:
                if cond.holds(facts[cond.slot]):
                    return outcome
            return self.default or ""
        value = self.base / 100 * float(facts[self.base_slot]) if self.base_slot else self.base
        if self.rate_slot:
            value += self.rate * float(facts[self.rate_slot])
        for cond, then, otherwise in self.clauses:
            op, amount, per = then if cond.holds(facts[cond.slot]) else otherwise
            if op == "add":
                value += amount * (float(facts[per]) if per else 1.0)
            elif op == "subtract":
                value -= amount
            elif op == "off":
                value *= 1 - amount / 100
            elif op == "more":
                value *= 1 + amount / 100
        value = max(self.floor, value)
        return _fmt_number(round(value, 2) if self.money else float(math.floor(round(value, 6) + 0.5)))


def _money(text: str) -> float:
    return float(text.replace("$", "").replace(",", "").split()[0])


def _read_condition(text: str) -> _Cond | None:
    m = re.match(r"^the (.+?) is (at least|under) (.+)$", text)
    if m and m.group(1) in _LABELS:
        return _Cond(_LABELS[m.group(1)], "at_least" if m.group(2) == "at least" else "under", _money(m.group(3)))
    m = re.match(r"^the (.+?) is (.+)$", text)
    if m and m.group(1) in _LABELS:
        return _Cond(_LABELS[m.group(1)], "in", values=tuple(re.split(r", | or ", m.group(2))))
    return None


def _read_effect(text: str) -> tuple[str, float, str | None]:
    m = re.match(r"^take ([\d.]+)% off$", text)
    if m:
        return ("off", float(m.group(1)), None)
    m = re.match(r"^add ([\d.]+)%$", text)
    if m:
        return ("more", float(m.group(1)), None)
    op, _, rest = text.partition(" ")
    per = next((s.key for s in SLOTS.values() if s.per and rest.endswith(s.per)), None)
    return (op, _money(rest), per)


def read_rule(doc: str) -> _ReadRule | None:
    lines = doc.splitlines()
    rule = _ReadRule(choice=any("Possible outcomes:" in ln for ln in lines))
    for ln in lines:
        if m := _BASE.match(ln):
            rule.base = _money(m.group(1))
            rule.base_slot = _LABELS.get(m.group(3) or "")
            if m.group(4):
                rule.rate = float(m.group(4))
                rule.rate_slot = next((s.key for s in SLOTS.values() if s.per and s.per == m.group(5)), None)
        elif m := _FLOOR.search(ln):
            rule.floor = _money(m.group(1))
            rule.money = "$" in ln
        elif m := _DEFAULT.match(ln):
            rule.default = m.group(1)
        elif rule.choice and (m := _CLAUSE_CHOICE.match(ln)):
            cond = _read_condition(m.group(1))
            if cond is None:
                return None
            rule.clauses.append((cond, m.group(2), None))
        elif (m := _CLAUSE_NUMERIC.match(ln)):
            cond = _read_condition(m.group(1))
            if cond is None:
                return None
            rule.clauses.append((cond, _read_effect(m.group(2)), _read_effect(m.group(3))))
    return rule if rule.clauses else None


def _fact(key: str, user_texts: list[str]) -> Any:
    """The customer's latest statement of a fact, read with exact cues (None if not found)."""
    slot = SLOTS[key]
    found: str | float | None = None
    for text in user_texts:
        low = text.lower()
        if slot.is_choice:
            for c in slot.choices:
                if _has(low, c):
                    found = c
            continue
        for frag in _FRAGMENT.split(low):
            if _has(frag, NUMBER_CUES[key]) and (m := _NUM.search(frag)):
                found = float(m.group(0))
    return found


def _question_words(opening: str) -> set[str]:
    questions = [s for s in re.split(r"(?<=[.!?])\s+", opening) if s.endswith("?")]
    return set(tokens(" ".join(questions) or opening)) - {"the", "your", "policy", "per", "my", "what", "how"}


#: What kind of answer a question asks for: "how many days" wants a rule set "in days".
_UNIT_CUES = (("how many days", "in days"), ("how many months", "in months"), ("how much", "in dollars"),
              *((cue, "Possible outcomes") for cue in ("which", "what kind", "what resolution", "what do i get")))


def _pick_doc(docs: list[dict[str, Any]], opening: str) -> dict[str, Any] | None:
    low = opening.lower()
    asked = _question_words(opening)

    def score(i: int) -> float:
        doc = docs[i]
        applies = next((ln for ln in doc["text"].splitlines() if ln.startswith("Applies to:")), "").lower()
        scope_ok = any(_has(applies, c) and _has(low, c) for key in ("region", "category", "channel")
                       for c in SLOTS[key].choices)
        head = " ".join(doc["text"].splitlines()[:3])
        sets = next((ln for ln in doc["text"].splitlines() if ln.startswith("Sets:")), "")
        unit_ok = any(cue in low and kind in sets for cue, kind in _UNIT_CUES)
        return 3.0 * scope_ok + 2.0 * unit_ok + len(asked & set(tokens(head))) - 0.01 * i

    return docs[max(range(len(docs)), key=score)] if docs else None


def _search_query(opening: str) -> str:
    """The customer's situation and question: what they say after their question ("just ask if
    you need anything else") is about the conversation, not the policy, and only blurs the search."""
    end = opening.rfind("?")
    return (opening[: end + 1] if end >= 0 else opening)[:MAX_QUERY_CHARS]


class PolicyHeuristic:
    name = "heuristic"
    reads_hidden_goal = False

    def question(self, missing: list[str], opening: str) -> str:
        """The one question for the facts the rule needs and the customer has not stated, named
        as the document does (a subclass may word it otherwise: the same agent, asking in its own words)."""
        labels = [SLOTS[k].label for k in missing]
        listed = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
        return f"To apply the policy I need a few details. What is your {listed}?"

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        # Reads only the conversation; `hidden` is deliberately ignored.
        users = [m.text for m in messages if m.role == "user"]
        if not users:
            return AgentAction(text="Hello! What would you like to know about our policies?")
        n = len(messages)
        searches = [r for c, r in tool_results(messages) if c.name == "policy_search" and not r.error]
        if not searches:
            return AgentAction(tool_calls=(_call("policy_search", n, query=_search_query(users[0])),))
        docs = (searches[-1].json() or {}).get("results", [])
        doc = _pick_doc(docs, users[0])
        rule = read_rule(doc["text"]) if doc else None
        if rule is None:
            return AgentAction(tool_calls=(_call(FINAL, n, answer="0"),))
        facts = {k: _fact(k, users) for k in rule.slots()}
        missing = [k for k, v in facts.items() if v is None]
        asked = any(m.role == "assistant" and not m.tool_calls and "?" in m.text for m in messages)
        if missing and not asked:
            return AgentAction(text=self.question(missing, users[0]))
        for k in missing:  # asked once already: guess rather than keep the customer waiting
            facts[k] = SLOTS[k].choices[0] if SLOTS[k].is_choice else SLOTS[k].lo
        return AgentAction(tool_calls=(_call(FINAL, n, answer=rule.evaluate(facts)),))


class PolicyRandom:
    """One search, then a constant, a random amount or a random listed outcome."""

    name = "random"
    reads_hidden_goal = False

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        users = [m.text for m in messages if m.role == "user"]
        opening = users[0] if users else ""
        n = len(messages)
        searches = [r for c, r in tool_results(messages) if c.name == "policy_search"]
        if not searches:
            return AgentAction(tool_calls=(_call("policy_search", n, query=opening[:MAX_QUERY_CHARS] or "policy"),))
        rng = seeded_rng(derive_seed("policy-random", opening))
        docs = (searches[-1].json() or {}).get("results", [])
        outcomes = [o.strip() for d in docs for ln in d["text"].splitlines() if "Possible outcomes:" in ln
                    for o in ln.split("Possible outcomes:")[1].rstrip(".").split(",")]
        roll = rng.random()
        if roll < 1 / 3:
            answer = "10.00"
        elif roll < 2 / 3 or not outcomes:
            answer = _fmt_number(rng.uniform(1, 120))
        else:
            answer = rng.choice(outcomes)
        return AgentAction(tool_calls=(_call(FINAL, n, answer=answer),))
