"""The store's rule book in one world (`world.state(Rulebook)`): its policy documents, the
question each policy request asks, and the search the agent's `policy_search` runs over them."""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field

from ecom_bench.domains.policy.rules import FAMILIES, PolicyQuestion, PolicyRule

SEARCH_RESULTS = 3

_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def tokens(text: str) -> list[str]:
    """Lower-cased words with a light suffix strip ("shipping" ~ "ship", "fees" ~ "fee")."""
    out = []
    for w in _TOKEN.findall(text.lower()):
        for suffix in ("ing", "es", "ed", "s"):
            if len(w) > len(suffix) + 3 and w.endswith(suffix):
                w = w[: -len(suffix)]
                break
        out.append(w)
    return out


@dataclass
class Rulebook:
    """The store's policy documents of one world (several envs of a journey may add to it), and
    the question each policy request asks (what kind of answer it wants)."""

    rules: dict[str, PolicyRule] = field(default_factory=dict)
    #: The question each policy request of the world asks, by its intent (a journey may hold several).
    questions: dict[int, PolicyQuestion] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.rules)

    def add(self, rule: PolicyRule) -> None:
        if rule.rule_id in self.rules:
            raise ValueError(f"duplicate policy rule id {rule.rule_id}")
        self.rules[rule.rule_id] = rule

    def get(self, rule_id: str) -> PolicyRule | None:
        return self.rules.get(rule_id.strip().upper())

    def covers(self, family: str, scope: str) -> bool:
        return any(r.family == family and r.scope == scope for r in self.rules.values())

    def new_rule_id(self, family: str, rng: random.Random) -> str:
        while True:
            rule_id = f"{FAMILIES[family].code}-{rng.randint(1000, 9999)}"
            if rule_id not in self.rules:
                return rule_id

    def search(self, query: str, k: int = SEARCH_RESULTS) -> list[PolicyRule]:
        """BM25 over the documents (k1 = 1.2, b = 0.75); a rule id named in the query ranks first.

        Deterministic: ties break by rule id. Documents sharing no word with the query are left out.
        """
        ids = {w.upper() for w in re.findall(r"[A-Za-z]+-\d+", query)}
        docs = {rid: Counter(tokens(r.document())) for rid, r in sorted(self.rules.items())}
        if not docs:
            return []
        n = len(docs)
        avg = sum(sum(c.values()) for c in docs.values()) / n
        df: Counter[str] = Counter(w for c in docs.values() for w in c)
        q = set(tokens(query))
        scores: dict[str, float] = {}
        for rid, c in docs.items():
            length = sum(c.values())
            s = 0.0
            for w in q:
                tf = c.get(w, 0)
                if tf:
                    idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                    s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))
            if rid in ids:
                s += 1e6
            if s > 0:
                scores[rid] = s
        ranked = sorted(scores, key=lambda rid: (-scores[rid], rid))
        return [self.rules[rid] for rid in ranked[:k]]


__all__ = ["SEARCH_RESULTS", "Rulebook", "tokens"]
