"""Fourth red team, fairness: an honest returns agent asking ONE question in plain English.

`OneAsk` is the stock heuristic limited to one round of questions; `PlainWording` asks the
same thing in other words ("Which item would you like to return, and why? How would you like
to send it back?"). For a customer who described the order rather than numbering it, "which
item" named a slot only order-number customers have and "why" the reason, so the answer was
narrowed to the reason and the honest agent had to guess (0.49 vs 0.96 at d = 6, n = 200).
"""

from __future__ import annotations

from dataclasses import replace

from ecom_bench.envs.returns.agents import ReturnsHeuristic


class OneAsk(ReturnsHeuristic):
    name = "one_ask"
    reads_hidden_goal = False
    max_asks = 1


class PlainWording(OneAsk):
    name = "plain_wording"

    def act(self, messages, hidden, status):
        action = super().act(messages, None, status)
        text = action.text or ""
        if action.tool_calls or not text.startswith("Could you tell me"):
            return action
        parts = []
        if "which order" in text or "which item" in text:
            parts.append("Which item would you like to return" + (", and why?" if "why" in text else "?"))
        elif "why" in text:
            parts.append("Why are you returning it?")
        if "send it back" in text:
            parts.append("How would you like to send it back?")
        if "size or colour" in text:
            parts.append("Which size or colour would you like instead?")
        return replace(action, text=" ".join(parts))
