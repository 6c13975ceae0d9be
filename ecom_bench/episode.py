"""The episode: the turn-loop state machine both fronts drive.

One agent *turn* is one message to the user, with whatever tool calls precede it;
the env's final-answer tool ends the last turn. The Inspect solver and the training
environment both call `call_tool` / `agent_message`, so turn counting, the per-turn
tool budget B_tool(d), the user's patience T_max(d), hard fails and the reward are
identical in evaluation and training.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.base import Environment, Problem, Verdict
from ecom_bench.rewards import Reward, efficiency, hallucination
from ecom_bench.users import UserAct, UserMessage
from ecom_bench.world._tooling import clip_text
from ecom_bench.world.state import ToolCallRecord
from ecom_bench.world.toolkit import InvalidToolCall, Toolkit, ToolError, ToolSpec

#: Calls refused over the per-turn budget before the user gives up waiting.
MAX_REFUSED_CALLS_PER_TURN = 3
#: Longest invalid-output reason kept (it ends up in the end reason and the score explanation).
MAX_REASON_CHARS = 300


@dataclass(frozen=True)
class ToolOutcome:
    """The text the agent sees for one tool call, and whether it was an error."""

    text: str
    error: bool = False
    invalid: bool = False  # schema / unknown-tool failure (hard fail under strict)


@dataclass
class EpisodeResult:
    reward: Reward
    verdict: Verdict
    turns: int
    user_caused_turns: int
    end_reason: str
    invented_ids: list[str]
    hidden: dict[str, Any]
    final_state: dict[str, Any]
    disclosure: dict[str, bool]
    user_acts: list[str] = field(default_factory=list)

    def explanation(self) -> str:
        r = self.reward
        if r.hard_fail:
            head = f"HARD FAIL ({self.end_reason}): total -1."
        else:
            head = (f"total {r.total:+.3f} = 0.75*task {r.task:+.2f} + 0.15*efficiency {r.efficiency:+.2f} "
                    f"+ 0.10*hallucination {r.hallucination:+.2f}.")
        caused = f", {self.user_caused_turns} caused by the user" if self.user_caused_turns else ""
        lines = [head, self.verdict.explanation, f"Turns: {self.turns}{caused}. Ended: {self.end_reason}."]
        if self.invented_ids:
            lines.append(f"Ids never returned by a tool: {', '.join(self.invented_ids)}.")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "reward": self.reward.to_dict(),
            "hard_fail": self.reward.hard_fail,
            "explanation": self.explanation(),
            "turns": self.turns,
            "user_caused_turns": self.user_caused_turns,
            "end_reason": self.end_reason,
            "invented_ids": self.invented_ids,
            "verdict": {"task": self.verdict.task, "success": self.verdict.success,
                        "explanation": self.verdict.explanation, "details": self.verdict.details},
            "hidden": self.hidden,
            "final_state": self.final_state,
            "disclosure": self.disclosure,
            "user_acts": self.user_acts,
        }


class Episode:
    """One conversation between an agent and a simulated user over a world.

    `strict=True` is the published rule: an unparseable call, an unknown tool or
    arguments that fail the schema end the episode with the failure score.
    `strict=False` returns the error to the agent instead.
    """

    def __init__(self, env: Environment, problem: Problem, *, strict: bool = True) -> None:
        self.env = env
        self.problem = problem
        self.strict = strict
        self.world = problem.world
        self.toolkit = Toolkit(self.world, ask_user=self._ask_user)
        self.turns = 0
        self.user_caused_turns = 0
        self.calls_this_turn = 0
        self.refused_this_turn = 0
        self.done = False
        self.end_reason = "running"
        self.hard_fail_reason: str | None = None
        self.user_messages: list[UserMessage] = []
        self._opening = problem.user.opening()
        self.user_messages.append(self._opening)

    # ------------------------------------------------------------- surface
    @property
    def difficulty(self) -> Difficulty:
        return self.problem.difficulty

    @property
    def opening(self) -> str:
        return self._opening.text

    def tool_specs(self) -> list[ToolSpec]:
        specs = Toolkit.specs()
        return [specs[name] for name in self.env.tool_names]

    def system_prompt(self) -> str:
        return f"{self.env.instructions}\n\n{self.env.rules(self.difficulty)}"

    # --------------------------------------------------------------- actions
    def call_tool(self, name: str, arguments: Any) -> ToolOutcome:
        """Run one tool call from the agent; never raises for bad input."""
        if self.done:
            return ToolOutcome("The conversation has ended; no more tool calls are accepted.", error=True)
        if not isinstance(name, str) or name not in self.env.tool_names:
            return self._invalid(name, arguments, f"unknown tool {clip_text(repr(name))}; available: "
                                 f"{', '.join(self.env.tool_names)}")
        spec = Toolkit.specs()[name]
        try:
            args = spec.validate(arguments)
        except InvalidToolCall as e:
            return self._invalid(name, arguments, str(e))
        if spec.kind in ("read", "write"):
            if self.calls_this_turn >= self.difficulty.tool_budget:
                self.refused_this_turn += 1
                text = (
                    f"Tool call refused: the budget of {self.difficulty.tool_budget} tool call(s) per turn is "
                    "used up. Reply to the customer (or give your final answer) to end your turn."
                )
                self._log(name, args, False, text)
                if self.refused_this_turn > MAX_REFUSED_CALLS_PER_TURN:
                    self._end("stalled: kept calling tools over the per-turn budget")
                return ToolOutcome(text, error=True)
            self.calls_this_turn += 1
        try:
            text = getattr(self.toolkit, name)(**args)
        except ToolError as e:
            self._log(name, args, False, str(e))
            return ToolOutcome(str(e), error=True)
        self._log(name, args, True, text)
        if spec.kind == "final" and self.env.after_answer(self.problem):
            self.turns += 1
            self._end("answered")
        return ToolOutcome(text)

    def agent_message(self, text: str) -> UserMessage | None:
        """The agent speaks to the user: ends a turn and returns the user's reply."""
        if self.done:
            return None
        self.turns += 1
        self.calls_this_turn = 0
        self.refused_this_turn = 0
        self.world.fire_stock_outs(self.turns)  # p_oos: the user and the tools see it from now on
        reply = self.problem.user.reply(text or "", self.world, last_turn=self.turns >= self.difficulty.max_turns)
        self.user_messages.append(reply)
        if reply.excused:
            self.user_caused_turns += 1
        if reply.ends_episode:
            self._end("user quit: patience exhausted" if reply.act is UserAct.QUIT else "user ended")
        return reply

    def invalid_output(self, reason: str) -> str:
        """Malformed model output (e.g. unparseable tool-call JSON). Returns the error text.

        The reason may quote the model's output (a parser's message can hold a 1 MB
        argument), so it is clipped before it enters the end reason and the explanation.
        """
        reason = clip_text(reason, MAX_REASON_CHARS)
        if self.strict and not self.done:
            self.hard_fail_reason = f"invalid output: {reason}"
            self._end(self.hard_fail_reason)
        return f"Invalid output: {reason}"

    def abort(self, reason: str) -> None:
        """End the episode from outside (message limit, timeout): scored as it stands."""
        if not self.done:
            self._end(reason)

    # -------------------------------------------------------------- result
    def result(self) -> EpisodeResult:
        if not self.done:
            self._end("not finished")
        verdict = self.env.verify(self.problem)
        r_eff = efficiency(self.turns, self.user_caused_turns, self.difficulty.max_turns)
        # Ids in cart/return calls and in final answers (every tool records what it acted on).
        r_hall, invented = hallucination(self.world.referenced_ids, self.world.seen_ids)
        answered = self.env.has_answer(self.problem)
        if self.hard_fail_reason is None and answered:
            reward = Reward.of(verdict.task, r_eff, r_hall, verdict.success)
        else:
            reward = Reward.failure(r_eff, r_hall)
        end_reason = self.end_reason if answered or self.hard_fail_reason else f"{self.end_reason}; no final answer"
        return EpisodeResult(
            reward=reward,
            verdict=verdict,
            turns=self.turns,
            user_caused_turns=self.user_caused_turns,
            end_reason=end_reason,
            invented_ids=invented,
            hidden=self.problem.hidden_state(),
            final_state=self.world.snapshot(),
            disclosure=self.problem.user.disclosure(),
            user_acts=[m.act.value for m in self.user_messages],
        )

    # ------------------------------------------------------------- helpers
    def _ask_user(self, question: str) -> str:
        reply = self.agent_message(question)
        return reply.text if reply is not None else "The conversation has ended."

    def _invalid(self, name: Any, arguments: Any, reason: str) -> ToolOutcome:
        # unvalidated input can be anything (a 1 MB string, a non-str name): log a bounded repr
        self._log(clip_text(str(name)), {"_raw": clip_text(repr(arguments), 200)}, False, reason)
        if self.strict:
            self.hard_fail_reason = f"invalid tool call: {reason}"
            self._end(self.hard_fail_reason)
            return ToolOutcome(f"{reason}. The episode has ended (strict mode).", error=True, invalid=True)
        return ToolOutcome(reason, error=True, invalid=True)

    def _log(self, name: str, args: dict[str, Any], ok: bool, result: str) -> None:
        self.world.tool_log.append(ToolCallRecord(self.turns + 1, name, dict(args), ok, result[:2000]))

    def _end(self, reason: str) -> None:
        self.done = True
        self.end_reason = reason
