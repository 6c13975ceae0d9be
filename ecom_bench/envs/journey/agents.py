"""Scripted E_JOURNEY agents: each hands every request to that env's own policy.

The conversation is split into requests at the user's "first / one more thing /
before that / back to" phrases (`request_segments`); the active request's part of the
conversation, behind the journey's system prompt, is exactly what an atomic episode of
that env looks like, so the env's oracle, heuristic or random policy plays it. Once
the request has its final answer, the agent tells the customer, who moves on.
The oracle knows which env each request belongs to (the hidden goal); the honest
policies tell it from the user's words (`classify_request`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, Policy
from ecom_bench.envs import get_env
from ecom_bench.envs.journey.goal import request_opening, request_segments

DONE_TEXT = "That's done. Is there anything else I can help you with?"

def classify_request(text: str, members: tuple[str, ...]) -> str:
    """The member env a request belongs to, from the customer's words: the `JourneyRole.request_cues`
    of each member, checked in `cue_order` (several cues per env, since noise may garble one); a
    request that matches none goes to the member without cues."""
    from ecom_bench.envs import get_env

    roles = [(get_env(env).journey, env) for env in members]
    low = " ".join(text.lower().split())
    for role, env in sorted(((r, e) for r, e in roles if r is not None and r.request_cues),
                            key=lambda re_: re_[0].cue_order):
        if any(cue in low for cue in role.request_cues):
            return env
    return next((env for role, env in roles if role is not None and not role.request_cues), members[0])


def _answered(env: str, view: list[Message]) -> bool:
    """Whether the request's final tool (of `env`) already succeeded in this view."""
    final_tool = get_env(env).final_tool
    return any(m.role == "tool" and m.tool_name == final_tool and not m.error for m in view)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


class _Delegating:
    """Split into requests, pick the active one, let its env's policy act on its part."""

    name = "journey"
    reads_hidden_goal = False
    sub_policy = "heuristic"
    #: Hand a request to another env when the customer's follow-ups name it (`_reroute`): the
    #: heuristic's; the random floor and the adversarial policies keep their first routing.
    reroutes = False

    def __init__(self, members: tuple[str, ...]) -> None:
        self.members = members  # the journey's member envs, to route requests among

    def _env_of(self, opening: str, index: int, hidden: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
        return classify_request(opening, self.members), None

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        segments = request_segments([(m.role, m.text) for m in messages])
        if not segments:
            return AgentAction(text="Hello! How can I help you today?")
        # The active request is the one whose segment holds the latest message.
        k, (opening, indices) = max(enumerate(segments), key=lambda s: s[1][1][-1])
        env, sub_hidden = self._env_of(opening, k, hidden)
        view = [messages[0]] + [self._as_atomic(messages[i]) for i in indices]
        prefix = f"r{k}-"
        if _answered(env, view):
            retry = self._reroute(env, messages, indices) if self.reroutes else None
            if retry is None:
                return AgentAction(text=DONE_TEXT)
            env, view = retry
            prefix += f"{env}-"  # the shorter view numbers its calls afresh
        action = self._policy_for(env).act(view, sub_hidden, status)
        # Keep call ids unique across requests (sub-policies number them by position).
        calls = tuple(replace(c, id=f"{prefix}{c.id}") for c in action.tool_calls)
        return AgentAction(text=action.text, tool_calls=calls)

    def _policy_for(self, env: str) -> Policy:
        """The policy that plays a request of `env`: that env's own `sub_policy`."""
        return get_env(env).policies[self.sub_policy]()

    def _reroute(self, env: str, messages: list[Message], indices: list[int]) -> tuple[str, list[Message]] | None:
        """The request handed to another env, when the customer answered our "That's done" without
        moving on and their words now name a different kind of request (noise had hidden the cue:
        "the current statsu of ..."). Without this the agent said "That's done" until they left.

        The new env's policy sees the request's opening and everything from the first "That's done"
        on: what the wrong env did is no part of its task.
        """
        first_done = next((i for i in indices if messages[i].role == "assistant" and messages[i].text == DONE_TEXT),
                          None)
        if first_done is None or not any(messages[i].role == "user" for i in indices if i > first_done):
            return None
        words = " ".join(self._as_atomic(messages[i]).text for i in indices if messages[i].role == "user")
        new_env = classify_request(words, self.members)
        if new_env == env:
            return None
        view = [messages[0], self._as_atomic(messages[indices[0]])] + [
            messages[i] for i in indices if i > first_done and messages[i].text != DONE_TEXT]
        return None if _answered(new_env, view) else (new_env, view)

    @staticmethod
    def _as_atomic(m: Message) -> Message:
        """A request's opening message without the journey's "one more thing" framing."""
        opened = request_opening(m.text) if m.role == "user" else None
        return replace(m, text=opened[1]) if opened else m


class JourneyOracle(_Delegating):
    name = "oracle"
    reads_hidden_goal = True
    sub_policy = "oracle"

    def _env_of(self, opening: str, index: int, hidden: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
        """Request `index` is intent `index`: requests open in the order of the journey's intents
        (`request_segments`), so the oracle needs none of the customer's words to match them."""
        if hidden is None:
            raise ValueError("the oracle needs the hidden goal")
        intent = hidden["goal"]["intents"][index]
        sub = {"env": intent["env"], "seed": hidden["seed"], "difficulty": hidden["difficulty"],
               "goal": intent["goal"], "persona": intent["persona"]}
        return intent["env"], sub


class JourneyHeuristic(_Delegating):
    name = "heuristic"
    sub_policy = "heuristic"
    reroutes = True


class JourneyRandom(_Delegating):
    name = "random"
    sub_policy = "random"


#: The journey's scripted agents by name (`JourneyEnv.policies` binds them to its members).
JOURNEY_POLICIES: dict[str, type[_Delegating]] = {"oracle": JourneyOracle, "heuristic": JourneyHeuristic,
                                                  "random": JourneyRandom}
