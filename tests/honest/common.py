"""Shared plumbing for the honest scripted agents.

Each agent drives one `Episode` through its public `step` API only: it sees the system prompt,
the customer's messages, the tool specs and the tool results, exactly what an LLM agent sees.
It never reads `hidden`, the result's goal, or any message metadata (act tags).
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

from ecom_bench.conversation import AgentAction, ToolCallRequest
from ecom_bench.episode import new_episode


class EpisodeEnded(Exception):
    """The episode terminated (final answer, customer quit, hard fail)."""


@dataclass
class Turn:
    role: str  # "agent", "customer", "tool"
    text: str


class Session:
    """A thin wrapper over one episode, with a transcript for failure reports."""

    def __init__(self, env: str, d: int, seed: int, index: int, context: Any = None):
        self.env, self.d, self.seed, self.index = env, d, seed, index
        self.ep = new_episode(env, d, seed, index, context=context) if context is not None \
            else new_episode(env, d, seed, index)
        self.rng = random.Random(f"{env}|{d}|{seed}|{index}")
        self.transcript: list[Turn] = [Turn("customer", self.ep.opening)]
        self.done = False
        self.final_reward: float | None = None
        self.final_info: dict[str, Any] = {}
        self._n = 0
        self.customer_said: list[str] = [self.ep.opening]
        self.seen_ids: set[str] = set()

    # ---------------------------------------------------------------- info
    @property
    def opening(self) -> str:
        return self.ep.opening

    def system_prompt(self) -> str:
        return self.ep.system_prompt()

    def calls_left(self) -> int:
        return self.ep.status().calls_left

    def turns_left(self) -> int:
        return self.ep.status().turns_left

    def status(self):
        return self.ep.status()

    # ---------------------------------------------------------------- acts
    def _finish(self, r) -> None:
        if r.terminated or r.truncated:
            self.done = True
            self.final_reward = r.reward
            self.final_info = dict(r.info)
            raise EpisodeEnded()

    def tool(self, name: str, **args: Any) -> tuple[bool, Any]:
        """Call one tool. Returns (ok, parsed JSON or the error text)."""
        if self.done:
            raise EpisodeEnded()
        self._n += 1
        args = {k: v for k, v in args.items() if v is not None}
        r = self.ep.step(AgentAction(tool_calls=(ToolCallRequest(name=name, arguments=args, id=f"call{self._n}"),)))
        out = r.observation[-1] if r.observation else None
        text = out.text if out is not None else ""
        err = bool(getattr(out, "error", False)) or bool(getattr(out, "invalid", False))
        self.transcript.append(Turn("agent", f"<tool {name} {json.dumps(args)}>"))
        self.transcript.append(Turn("tool", ("ERROR: " if err else "") + text))
        for m in r.observation:
            if getattr(m, "role", None) == "user" or str(getattr(m, "role", "")).endswith("user"):
                if m.text and m is not out:
                    self.transcript.append(Turn("customer", m.text))
        data: Any = text
        if not err:
            try:
                data = json.loads(text)
            except Exception:
                data = text
            self._collect_ids(text)
        self._finish(r)
        if name == "ask_user":
            self.customer_said.append(text)
        return (not err), data

    def _collect_ids(self, text: str) -> None:
        for m in re.finditer(r"\b(P\d{5,}(?:-v\d+)?|ORD-\d+|L\d+|[A-Z]{2,8}-\d{2,6})\b", text):
            self.seen_ids.add(m.group(1))

    def say(self, text: str) -> str:
        """A plain message to the customer; returns their reply ('' if none)."""
        if self.done:
            raise EpisodeEnded()
        self.transcript.append(Turn("agent", text))
        r = self.ep.step(AgentAction(text=text))
        reply = " ".join(m.text for m in r.observation if m.text)
        if reply:
            self.transcript.append(Turn("customer", reply))
            self.customer_said.append(reply)
        self._finish(r)
        return reply

    def ask(self, text: str) -> str:
        """A question through the ask_user tool (the same turn rules as `say`)."""
        ok, data = self.tool("ask_user", question=text)
        return data if isinstance(data, str) else json.dumps(data)

    def final(self, name: str, **args: Any) -> None:
        try:
            self.tool(name, **args)
        except EpisodeEnded:
            return
        # A final tool that came back with an error keeps the episode going.

    def pick(self, *options: str) -> str:
        return self.rng.choice(options)

    def result_line(self) -> dict[str, Any]:
        info = self.final_info
        return {
            "id": f"{self.env}-d{self.d}-s{self.seed}-{self.index:04d}",
            "success": bool(info.get("success")),
            "r_total": float(self.final_reward if self.final_reward is not None else -1.0),
            "explanation": info.get("explanation", ""),
            "end": info.get("end_detail") or info.get("end_reason"),
        }


def run_agent(agent_cls, env: str, d: int, seed: int, index: int, context: Any = None) -> Session:
    s = Session(env, d, seed, index, context=context)
    agent = agent_cls(s)
    try:
        agent.run()
        # If the agent returned without ending the episode, abort it (counts as no answer).
        if not s.done:
            s.ep.abort("agent stopped")
            res = s.ep.result()
            s.done = True
            s.final_reward = res.reward.total
            s.final_info = {"success": res.reward.success, "explanation": res.explanation(),
                            "end_reason": "agent stopped"}
    except EpisodeEnded:
        pass
    return s


# ------------------------------------------------------------------ text helpers
WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def sim_ratio(a: str, b: str) -> float:
    import difflib
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


def fuzzy_in(needle: str, hay: str, thresh: float = 0.8) -> bool:
    """Is `needle` (a word or phrase) in `hay`, tolerating typos?"""
    n = needle.lower().strip()
    h = hay.lower()
    if n in h:
        return True
    nw = words(n)
    hw = words(h)
    if not nw:
        return False
    L = len(nw)
    for i in range(0, max(1, len(hw) - L + 1)):
        seg = " ".join(hw[i:i + L])
        if sim_ratio(seg, " ".join(nw)) >= thresh:
            return True
    return False


def money(x: float) -> str:
    return f"${x:,.2f}"


# ------------------------------------------------------------------ typo reading
# The customer's typos hit ordinary words, never the values that matter (numbers, names,
# attribute values). A reader undoes them; so do we, for lowercase words only.
BASE_VOCAB = """
a an the and or but if of to in on at by for from with without as is are was were be been it its it's
i i'm i'd i've i'll me my you your we our they them their this that these those there here what which
who when where why how much many more less few fewer some any all every each other another else also
too very just only not no yes please thanks thank hi hello hey morning good would could should can will
need needs want wanted like looking find help send recommend suggest top options picks ones fit meet
everything thing things matter matters requirement requirements ask way by instead similar usual stock
out again buy bought budget spend cost costs under over than stars star rated least most ship ships
shipping delivered delivery within days day brand must old one new pair substitute something list
""".split()


def fix_typos(text: str, vocab: list[str] | None = None) -> str:
    """Undo typos in lowercase ordinary words; numbers, names and values are left alone."""
    import difflib as _dl
    voc = BASE_VOCAB + (vocab or [])
    vs = set(voc)
    toks = text.split()
    out = []
    for k, raw in enumerate(toks):
        m = re.match(r"^([(\"']*)(.*?)([)\"'.,;:!?]*)$", raw)
        pre, tok, post = m.group(1), m.group(2), m.group(3)
        low = tok.lower()
        nxt = re.sub(r"[^a-z]", "", toks[k + 1].lower()) if k + 1 < len(toks) else ""
        rep = tok
        if low == "2" and not post and re.match(
                r"^(ship|buy|spend|return|exchange|reach|me|my|the|your|send|get|be|have|know|add|order|put|take|help|find|recommend|do|go|see|check|talk|arrive|us|him|her|it)$", nxt):
            rep = "to"
        elif low == "4" and not post and nxt in ("the", "my", "a", "your", "me"):
            rep = "for"
        elif low == "u":
            rep = "you"
        elif low == "ur":
            rep = "your"
        elif low == "pls":
            rep = "please"
        elif tok and tok[0].islower() and re.match(r"^[a-z][a-z'-]*$", low) and len(low) >= 3 and low not in vs:
            cands = [c for c in _dl.get_close_matches(low, voc, n=5, cutoff=0.75) if abs(len(c) - len(low)) <= 2]
            if len(low) == 3:
                cands = [c for c in cands if len(c) == 4]
            if cands:
                cands.sort(key=lambda c: (sorted(c) != sorted(low), -_dl.SequenceMatcher(None, low, c).ratio()))
                rep = cands[0]
        out.append(pre + rep + post)
    return " ".join(out)
