"""Shared readers for red-team policies (only the conversation is read; `hidden` never)."""
from __future__ import annotations
import re
from ecom_bench.conversation import AgentAction, Message, ToolCallRequest, calls_since_last_message, tool_results
from red_team.exploits import customer_replies

_BUDGET = re.compile(r"at most (\d+) tool call")
_PATIENCE = re.compile(r"patience is (\d+) turn")


class Conv:
    def __init__(self, messages: list[Message]):
        self.m = messages
        system = next((x.text for x in messages if x.role == "system"), "")
        self.budget = int(b.group(1)) if (b := _BUDGET.search(system)) else 1
        self.patience = int(p.group(1)) if (p := _PATIENCE.search(system)) else 4
        self.users = [x.text for x in messages if x.role == "user"]
        self.opening = self.users[0] if self.users else ""
        said = [x for x in messages if x.role == "assistant" and not x.tool_calls]
        asks = sum(1 for x in messages for c in x.tool_calls if c.name == "ask_user")
        self.turn = 1 + len(said) + asks
        self.room = max(0, self.budget - calls_since_last_message(messages))
        self.results = tool_results(messages)
        self.n = len(messages)

    def replies(self) -> list[str]:
        return customer_replies(self.m)

    def made(self, name: str, args: dict | None = None) -> bool:
        return any(c.name == name and (args is None or c.arguments == args) for c, _ in self.results)

    def calls(self, calls: list[tuple[str, dict]]) -> AgentAction:
        return AgentAction(tool_calls=tuple(ToolCallRequest(nm, a, id=f"{nm}-{self.n}-{i}")
                                            for i, (nm, a) in enumerate(calls)))

    def say(self, text: str) -> AgentAction:
        return AgentAction(text=text)

    @property
    def last_turn(self) -> bool:
        return self.turn >= self.patience
