"""The conversation tool: talk to the customer from inside a tool-calling turn."""

from __future__ import annotations

from collections.abc import Callable

from ecom_bench.world._tooling import ToolBase, ToolError, tool_method


class ConversationTools(ToolBase):
    _ask_user: Callable[[str], str] | None = None

    @tool_method("user")
    def ask_user(self, question: str) -> str:
        """Send the customer a message or question and wait for their reply. Ends your turn.

        Args:
            question: What to say or ask the customer.
        """
        if self._ask_user is None:
            raise ToolError("ask_user is not available in this episode")
        return self._ask_user(question)
