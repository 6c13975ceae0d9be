"""Store-policy tools (E_POLICY): search the policy documents, read one, answer a question.

The answer is free text, read once by `answers.read_policy_answer` against the
question being asked (the kind and unit of answer it wants), so the tool's validation and
the verifier agree on what "$12.50", "two weeks" or "store credit, not a full refund" mean.
The tool says what it recorded, in words; an answer it cannot read as one answer (none, two,
a range) is refused with the reason, and the agent answers again.
"""

from __future__ import annotations

from ecom_bench.domains.policy.answers import AnswerRefused, read_policy_answer
from ecom_bench.domains.policy.rulebook import Rulebook
from ecom_bench.domains.policy.rules import PolicyQuestion, PolicyRule
from ecom_bench.world._tooling import MAX_QUERY_CHARS, ToolBase, ToolError, _json, tool_method

MAX_ANSWER_CHARS = 1000


class PolicyTools(ToolBase):
    """Store-policy tools (E_POLICY)."""

    def _rulebook(self) -> Rulebook:
        rulebook = self.world.state(Rulebook)
        if not len(rulebook):
            raise ToolError("This store has no policy documents.")
        return rulebook

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
        results = [self._policy_doc(r) for r in self._rulebook().search(query)]
        return _json({"results": results, "count": len(results)})

    @tool_method("read")
    def policy_get(self, rule_id: str) -> str:
        """Get the full text of one policy document by its rule id.

        Args:
            rule_id: The rule id, as returned by policy_search (e.g. "SHIP-1234").
        """
        rule = self._rulebook().get(rule_id)
        if rule is None:
            raise ToolError(f"No policy document with id {rule_id!r}. Use policy_search to find rule ids.")
        return _json(self._policy_doc(rule))

    def _question(self) -> PolicyQuestion | None:
        """The question of the request being served (None: not a policy request, any kind of answer goes)."""
        return self.world.state(Rulebook).questions.get(self.world.intent)

    @tool_method("final")
    def answer_policy_question(self, answer: str) -> str:
        """Give your final answer to a store-policy request (the customer's policy question).

        Write the one answer the policy gives for the customer's case, as you would tell them. Accepted: an
        amount of money ("$24.46", "24.46 dollars", "free"), a number of days or months ("14 days", "two
        weeks", "18 months", "a year and a half"), or an outcome's name as the policy lists it ("store
        credit"); a sentence around it is fine ("The shipping fee is $24.46."). An answer offering several
        ("$20 or $25", "between 5 and 9 days", "ground / two-day air") is refused: answer again with one.
        At most 1000 characters.

        Args:
            answer: The answer the policy gives for the customer's situation, e.g. "$24.46", "14 days" or
                "store credit".
        """
        if len(answer) > MAX_ANSWER_CHARS:
            raise ToolError(f"answer is too long ({len(answer)} characters, at most {MAX_ANSWER_CHARS})")
        question = self._question()
        try:
            read = read_policy_answer(answer, question)
        except AnswerRefused as e:
            raise ToolError(f"Not recorded: {e}") from None
        self._answer("answer_policy_question", {"answer": answer, **read.arguments()})
        return f"Recorded: {read.text()}" + (f" as {question.sets}." if question is not None else ".")
