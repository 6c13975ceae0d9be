"""Store-policy tools (E_POLICY): search the policy documents, read one, answer a question.

Answers are parsed here once (`parse_policy_answer`), so the tool's validation and the
verifier agree on what "$12.50", "12.5" or "14 days" mean.
"""

from __future__ import annotations

import re
from typing import Any

from ecom_bench.world._tooling import MAX_QUERY_CHARS, ToolBase, ToolError, _json, tool_method
from ecom_bench.world.policy import OUTCOMES, PolicyKB, PolicyRule

_NUMBER = re.compile(r"(?<![A-Za-z0-9.])(-?)\$?(\d[\d,]*(?:\.\d+)?)")
_LABEL_NOISE = re.compile(r"[^a-z0-9\- ]+")
MAX_ANSWER_CHARS = 200


def normalize_label(text: str) -> str:
    return " ".join(_LABEL_NOISE.sub(" ", text.lower()).split())


def parse_policy_answer(answer: str, options: tuple[str, ...]) -> dict[str, Any]:
    """{"value": float} for an amount, {"option": label} for a named outcome; ValueError otherwise.

    An answer that is exactly an outcome name is that outcome; otherwise its first number
    counts ("$1,234.50", "12.5", "14 days", "about 3 months"), with "-" kept as a sign.
    """
    text = answer.strip()
    norm = normalize_label(text)
    for label in options:
        if norm == normalize_label(label):
            return {"option": label}
    m = _NUMBER.search(text)
    if m:
        return {"value": float(m.group(1) + m.group(2).replace(",", ""))}
    named = [label for label in options  # "It will be mail-in repair.": the longest outcome named
             if re.search(rf"(?<![a-z0-9\-]){re.escape(normalize_label(label))}(?![a-z0-9\-])", norm)]
    if named:
        return {"option": max(named, key=len)}
    raise ValueError("no number and no outcome name")


class PolicyTools(ToolBase):
    """Store-policy tools (E_POLICY)."""

    def _kb(self) -> PolicyKB:
        if self.world.policy_kb is None or not len(self.world.policy_kb):
            raise ToolError("This store has no policy documents.")
        return self.world.policy_kb

    def _policy_doc(self, rule: PolicyRule) -> dict[str, str]:
        self._see(rule.rule_id)
        return {"rule_id": rule.rule_id, "title": rule.title, "text": rule.document()}

    @tool_method("read")
    def policy_search(self, query: str) -> str:
        """Search the store's policy documents (shipping, returns, price matching, warranty, discounts, gift cards).

        Returns the best-matching documents (at most 3), each with its rule id, title and full text.

        Args:
            query: Words describing the policy you need, e.g. "shipping fee Alaska" or "return window electronics".
        """
        query = query.strip()
        if not query:
            raise ToolError("query must not be empty; describe the policy you need, e.g. 'restocking fee toys'")
        if len(query) > MAX_QUERY_CHARS:
            raise ToolError(f"query is too long ({len(query)} characters, at most {MAX_QUERY_CHARS})")
        results = [self._policy_doc(r) for r in self._kb().search(query)]
        return _json({"results": results, "count": len(results)})

    @tool_method("read")
    def policy_get(self, rule_id: str) -> str:
        """Get the full text of one policy document by its rule id.

        Args:
            rule_id: The rule id, as returned by policy_search (e.g. "SHIP-1234").
        """
        rule = self._kb().get(rule_id)
        if rule is None:
            raise ToolError(f"No policy document with id {rule_id!r}. Use policy_search to find rule ids.")
        return _json(self._policy_doc(rule))

    @tool_method("final")
    def answer_policy_question(self, answer: str) -> str:
        """Give your final answer to a store-policy request (the customer's policy question).

        Args:
            answer: The answer the policy gives for the customer's situation: a number for an amount, a
                number of days or months (e.g. "12.50", "$12.50" or "14 days"), or the name of an outcome
                exactly as the policy lists it (e.g. "store credit").
        """
        if len(answer) > MAX_ANSWER_CHARS:
            raise ToolError(f"answer is too long ({len(answer)} characters, at most {MAX_ANSWER_CHARS})")
        try:
            parsed = parse_policy_answer(answer, OUTCOMES)
        except ValueError:
            raise ToolError(
                f"Could not read {answer!r} as an answer. Give a number (e.g. '12.50', '$12.50', '14 days') "
                "or the name of one outcome exactly as the policy document lists it (e.g. 'store credit')."
            ) from None
        self._answer("answer_policy_question", {"answer": answer, **parsed})
        return "Your answer has been recorded."
