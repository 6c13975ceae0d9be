"""The sample's `answer` (what `inspect view` shows as the model's answer), from the final world.

An env with one final tool has one request, so its answer is the last final-answer call's arguments
(or, with none, the cart). A journey has several: showing only its last answer hid
whether the earlier requests were answered at all, so it lists every final answer in
order, each with the request it was given in and the tool that gave it.
"""

from __future__ import annotations

import json
from typing import Any


def answer_text(final_state: dict[str, Any], env: str | None) -> str:
    """JSON of what the agent answered: every request's answers for an env with several (a journey),
    else the final one."""
    from ecom_bench.envs import ENVIRONMENTS, get_env

    if env in ENVIRONMENTS and get_env(env).final_tool is None:
        answers = [{"request": a["intent"] + 1, "tool": a["tool"], "answer": a["arguments"]}
                   for a in final_state.get("answers", [])]
        return json.dumps(answers, ensure_ascii=False)
    return json.dumps(final_state.get("final_answer") or {"cart": final_state.get("cart")}, ensure_ascii=False)
