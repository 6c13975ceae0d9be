"""The sample's `answer` (what `inspect view` shows as the model's answer), from the final world.

Only what the agent answered through the env's final tool: an env with one final tool shows
the last final-answer call's arguments; a journey has several requests, and showing only its
last answer hid whether the earlier ones were answered at all, so it lists every final answer
in order, each with the request it was given in and the tool that gave it. With no final
answer it says so, and why the episode ended: never a stand-in such as the cart, which read
as if the agent had submitted it.
"""

from __future__ import annotations

import json
from typing import Any

#: How `end_reason` says the agent never answered (`Episode.result`); the answer says it first.
_NO_ANSWER_SUFFIX = "; no final answer"


def answer_text(final_state: dict[str, Any], env: str | None, end_reason: str) -> str:
    """JSON of what the agent answered (every request's answers for a journey, else the final one),
    or "(no final answer: <how the episode ended>)"."""
    from ecom_bench.envs import ENVIRONMENTS, get_env

    if env in ENVIRONMENTS and get_env(env).final_tool is None:
        answers = [{"request": a["intent"] + 1, "tool": a["tool"], "answer": a["arguments"]}
                   for a in final_state.get("answers", [])]
        if answers:
            return json.dumps(answers, ensure_ascii=False)
    elif final_state.get("final_answer") is not None:
        return json.dumps(final_state["final_answer"], ensure_ascii=False)
    return f"(no final answer: {end_reason.removesuffix(_NO_ANSWER_SUFFIX)})"
