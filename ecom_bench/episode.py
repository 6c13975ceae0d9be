"""The episode: the one turn loop every front drives, with the gymnasium contract.

`new_episode(env, d, seed)` builds the world once (the *reset*); `Episode.step(action)`
takes one agent action (tool calls, or a message to the customer) and returns
`(observation, reward, terminated, truncated, info)`. The core runner, the Inspect
solver and the training env all call `step`, so turn counting, the per-turn tool
budget B_tool(d), the customer's patience T_max(d), hard fails, the safety cap and the
reward are identical in evaluation and training.

One agent *turn* is one message to the customer, with whatever tool calls precede it;
the env's final-answer tool ends the last turn. `astep` is `step` for an async caller: the
same loop, with the customer's words awaited from the episode's phraser.

`step` is the only way to act in an episode, and the episode keeps the conversation:
`Episode.messages` is the transcript every front shows its agent (the runner's scripted
policies, the training env's chat messages), so no front rebuilds it.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from concurrent.futures import ThreadPoolExecutor
from enum import Enum
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from ecom_bench.conversation import AgentAction, EpisodeStatus, Message

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.base import Environment, Problem, Verdict
from ecom_bench.rewards import Reward, efficiency, hallucination
from ecom_bench.users import UserAct, UserMessage
from ecom_bench.users.llm import guard_stats, guard_summary
from ecom_bench.users.phrasing import LoopPhraser, Phraser, PhrasingError, TemplatePhraser
from ecom_bench.world._tooling import clip_text
from ecom_bench.world.state import ToolCallRecord
from ecom_bench.world.toolkit import InvalidToolCall, ToolError, ToolSpec

#: Calls refused over the per-turn budget before the user gives up waiting.
MAX_REFUSED_CALLS_PER_TURN = 3
#: Final answers the tools refuse (an unknown id, a bad line) in one turn before the customer gives
#: up waiting: final-answer tools are outside the budget, and without this a turn could hold
#: thousands of them, probing ids and order lines for free.
MAX_FAILED_FINALS_PER_TURN = 3
#: Longest invalid-output reason kept (it ends up in the end reason and the score explanation).
MAX_REASON_CHARS = 300
#: Agent actions allowed per turn of patience before the episode is truncated: a safety net,
#: the budgets above end a conversation far earlier (an action is one generation of a model).
STEPS_PER_TURN = 12

if TYPE_CHECKING:
    from ecom_bench.envs.context import EnvContext

_T = TypeVar("_T")


#: Threads that run `astep`'s steps while their customers' words are awaited on the caller's loop.
#: Its own pool, not the loop's default one (min(32, CPUs + 4) threads): a step waiting on a
#: phraser holds its thread, and a rollout keeps many episodes in flight at once.
_STEP_THREADS = ThreadPoolExecutor(max_workers=512, thread_name_prefix="ecom-episode-step")


class EndReason(str, Enum):
    """Why an episode ended. The first six *terminate* it (gymnasium's `terminated`); the
    last three *truncate* it: a cap or an outside stop cut it short."""

    ANSWERED = "answered"  # the final-answer tool ran
    USER_QUIT = "user_quit"  # the customer's patience ran out
    USER_ENDED = "user_ended"  # the customer closed the conversation
    STALLED = "stalled"  # kept calling tools over the budget (or failing final answers); the customer left
    INVALID_TOOL_CALL = "invalid_tool_call"  # unknown tool / arguments failing the schema (strict): hard fail
    INVALID_OUTPUT = "invalid_output"  # output that could not be parsed (strict): hard fail
    STEP_LIMIT = "step_limit"  # STEPS_PER_TURN x (T_max + 1) actions without an end
    ABORTED = "aborted"  # stopped from outside (a message limit, a timeout)
    NOT_FINISHED = "not_finished"  # scored before it ended

    @property
    def truncated(self) -> bool:
        return self in (EndReason.STEP_LIMIT, EndReason.ABORTED, EndReason.NOT_FINISHED)

    @property
    def hard_fail(self) -> bool:
        return self in (EndReason.INVALID_TOOL_CALL, EndReason.INVALID_OUTPUT)


class StepResult(NamedTuple):
    """gymnasium's step tuple. `observation`: the tool results and/or the customer's reply this
    action produced; `reward`: 0 until the end, then r_total; `info`: `Episode.info()`."""

    observation: list[Message]
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


class EpisodeOver(RuntimeError):
    """`step` on an episode that has already ended."""


class ToolBug(RuntimeError):
    """An environment's tool failed other than with a `ToolError`: a bug in the env, not the agent's doing."""


class VerdictOutOfRange(ValueError):
    """A verifier returned something other than a `Verdict` with r_task in [-1, 1]."""


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
    end: EndReason = EndReason.NOT_FINISHED
    min_turns: int = 1  # T_min: turns the reference solution needs at B_tool calls a turn (not charged)
    guards: dict[str, Any] | None = None  # what a guarded phraser's checks did (`users.llm.GuardStats`)

    def explanation(self) -> str:
        r = self.reward
        # "×", not "*": the explanation is Markdown in `inspect view`, where "*" turns text italic.
        if r.hard_fail:
            head = (f"HARD FAIL ({self.end_reason}): task and total -1, success 0. The hard fail overrides "
                    f"the verdict below (on its own the task part would be {self.verdict.task:+.2f}).")
        else:
            head = (f"total {r.total:+.3f} = 0.75 × task {r.task:+.2f} + 0.15 × efficiency {r.efficiency:+.2f} "
                    f"+ 0.10 × hallucination {r.hallucination:+.2f}.")
        caused = f", {self.user_caused_turns} caused by the user" if self.user_caused_turns else ""
        needed = f", {self.min_turns} needed within the tool budget" if self.min_turns > 1 else ""
        lines = [head, self.verdict.explanation, f"Turns: {self.turns}{caused}{needed}. Ended: {self.end_reason}."]
        if self.invented_ids:
            lines.append(f"Ids never returned by a tool: {', '.join(self.invented_ids)}.")
        if self.guards is not None:
            lines.append(guard_summary(self.guards))
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "reward": self.reward.to_dict(),
            "hard_fail": self.reward.hard_fail,
            "explanation": self.explanation(),
            "turns": self.turns,
            "user_caused_turns": self.user_caused_turns,
            "min_turns": self.min_turns,
            "end_reason": self.end_reason,
            "end": self.end.value,
            "invented_ids": self.invented_ids,
            "verdict": {"task": self.verdict.task, "success": self.verdict.success,
                        "explanation": self.verdict.explanation, "details": self.verdict.details},
            "hidden": self.hidden,
            "final_state": self.final_state,
            "disclosure": self.disclosure,
            "user_acts": self.user_acts,
            **({"guards": self.guards} if self.guards is not None else {}),
        }


class Episode:
    """One conversation between an agent and a simulated user over a world.

    `strict=True` is the published rule: an unparseable call, an unknown tool or
    arguments that fail the schema end the episode with the failure score.
    `strict=False` returns the error to the agent instead. `phraser` words the customer's
    decisions (default: the templates); `astep` / `aopen` await an async phraser's words.
    """

    def __init__(self, env: Environment, problem: Problem, *, strict: bool = True,
                 phraser: Phraser | None = None) -> None:
        self.env = env
        self.problem = problem
        self.strict = strict
        self.world = problem.world
        self.toolkit = env.toolkit_class()(self.world, ask_user=self._ask_user)
        self.turns = 0
        self.user_caused_turns = 0
        self.calls_this_turn = 0
        self.refused_this_turn = 0
        self.failed_finals_this_turn = 0
        self.steps = 0
        self._calls_at: int | None = None  # where the last action's tool calls sit in `_messages`
        self.max_steps = STEPS_PER_TURN * (problem.difficulty.max_turns + 1)
        self.done = False
        self.end: EndReason | None = None
        self.end_reason = "running"  # the end in words, for the explanation
        self.hard_fail_reason: str | None = None
        self._result: EpisodeResult | None = None
        self.user_messages: list[UserMessage] = []
        self._opening: UserMessage | None = None  # said on first use, so `aopen` can await its words
        # the customer's words: `phraser` (default: the templates), awaited on the caller's loop under astep
        self.phraser = phraser or TemplatePhraser()
        self._voice = LoopPhraser(self.phraser)
        use_phraser = getattr(problem.user, "use_phraser", None)
        if use_phraser is not None:
            use_phraser(self._voice, env.name)
        elif phraser is not None:
            raise TypeError(f"the customer of {env.name!r} ({type(problem.user).__name__}) has no use_phraser(): "
                            "it words its own replies, so it cannot take a phraser")
        self._messages: list[Message] = [Message("system", self.system_prompt())]

    # ------------------------------------------------------------- surface
    @property
    def difficulty(self) -> Difficulty:
        return self.problem.difficulty

    @property
    def opening(self) -> str:
        return self._open().text

    def _open(self) -> UserMessage:
        if self._opening is None:
            self._opening = self.problem.user.opening()
            self.user_messages.insert(0, self._opening)
            self._messages.insert(1, Message("user", self._opening.text))
        return self._opening

    @property
    def messages(self) -> list[Message]:
        """The conversation so far, in chat order: the system prompt, the customer's opening, then
        for each `step` the agent's action (an assistant message: its text and tool calls) followed
        by its observation (one tool result per call, in order, or the customer's reply). A reply
        to `ask_user` is that call's tool result. This is the episode's own list, grown by `step`:
        read it, never change it."""
        self._open()
        return self._messages

    def tool_specs(self) -> list[ToolSpec]:
        specs = self.toolkit.specs()
        return [specs[name] for name in self.env.tool_names]

    def system_prompt(self) -> str:
        return f"{self.env.instructions}\n\n{self.env.rules(self.difficulty)}"

    def status(self) -> EpisodeStatus:
        """The counters as data (what scripted agents and the training env's `info` read)."""
        d = self.difficulty
        return EpisodeStatus(
            turn=self.turns + 1, max_turns=d.max_turns, turns_left=max(0, d.max_turns - self.turns),
            tool_budget=d.tool_budget, calls_left=max(0, d.tool_budget - self.calls_this_turn),
            step=self.steps, max_steps=self.max_steps, done=self.done,
            end_reason=self.end.value if self.end else None)

    def info(self) -> dict[str, Any]:
        """gymnasium's `info`: the status, then at the end `success`, the reward parts and the
        end reason in words."""
        out: dict[str, Any] = {"env": self.env.name, "difficulty": self.difficulty.level, **self.status().to_dict()}
        if self.done:
            result = self.result()
            out.update(success=result.reward.success, reward_parts=result.reward.to_dict(),
                       hard_fail=result.reward.hard_fail, explanation=result.explanation(),
                       end_detail=result.end_reason)
            if result.guards is not None:
                out["guards"] = result.guards
        else:
            out["success"] = False
        return out

    # --------------------------------------------------------------- the step
    def step(self, action: AgentAction, *, more_calls: bool = False) -> StepResult:
        """One agent action. With tool calls, each runs in order (the action's text is the agent
        thinking aloud and reaches no one); without, the text goes to the customer and ends the
        turn. The action and its observation join `messages`. Never raises for bad input from the
        agent; raises `EpisodeOver` after the end, and `PhrasingError` when the phraser fails (which
        ends the episode: the customer's decision was made, its words never reached the agent).

        `more_calls`: the action's tool calls belong to the previous action, a generation whose calls
        arrive one at a time (an Inspect agent's tool runner runs them so). They join that action's
        message and are no new step, so the transcript and the counts are those of the generation
        stepped at once. After a message to the customer there is no such action: it is a new one."""
        if self.done:
            raise EpisodeOver(f"the episode has ended ({self.end.value if self.end else 'done'}); "
                              "reset to start another")
        try:
            return self._step(action, more_calls)
        except PhrasingError as e:
            # The customer decided (slots marked told, a turn spent) but no words came: the
            # conversation cannot go on as if they had, so it ends here, cut short (truncated).
            self._end(f"stopped: the customer's phraser failed ({e})", EndReason.ABORTED)
            raise

    def _step(self, action: AgentAction, more_calls: bool = False) -> StepResult:
        self._open()
        if more_calls and action.tool_calls and self._calls_at is not None:
            previous = self._messages[self._calls_at]
            self._messages[self._calls_at] = replace(previous, tool_calls=previous.tool_calls + action.tool_calls)
        else:
            self.steps += 1
            self._calls_at = len(self._messages) if action.tool_calls else None
            self._messages.append(Message("assistant", action.text, tool_calls=action.tool_calls))
        observation: list[Message] = []
        if action.tool_calls:
            for call in action.tool_calls:
                if call.parse_error is not None:
                    out = ToolOutcome(self._invalid_output(f"{call.name}: {call.parse_error}"), True, True)
                else:
                    out = self._call_tool(call.name, call.arguments)
                observation.append(Message("tool", out.text, tool_call_id=call.id, tool_name=call.name,
                                           error=out.error, invalid=out.invalid))
        else:
            reply = self._agent_message(action.text)
            if reply is not None:
                observation.append(Message("user", reply.text))
        self._messages.extend(observation)
        if not self.done and self.steps >= self.max_steps:
            self._end("stopped: too many steps", EndReason.STEP_LIMIT)
        reward = self.result().reward.total if self.done else 0.0
        end = self.end
        return StepResult(observation, reward, bool(end and not end.truncated), bool(end and end.truncated),
                          self.info())

    async def astep(self, action: AgentAction, *, more_calls: bool = False) -> StepResult:
        """`step`, with the customer's words awaited from the phraser's `aphrase` on this event loop
        (the step itself runs in a worker thread, so the turn loop is `step`'s own). With the
        templates, which await nothing, it is `step` itself, run here."""
        return await self._off_loop(partial(self.step, more_calls=more_calls), action)

    async def aopen(self) -> str:
        """`opening`, its words awaited as `astep`'s are."""
        return (await self._off_loop(self._open)).text

    async def _off_loop(self, fn: Callable[..., _T], *args: Any) -> _T:
        if isinstance(self.phraser, TemplatePhraser):
            return fn(*args)
        loop = self._voice.loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(_STEP_THREADS, partial(contextvars.copy_context().run, fn, *args))
        finally:
            self._voice.loop = None

    def abort(self, reason: str) -> None:
        """End the episode from outside (message limit, timeout): scored as it stands (truncated)."""
        if not self.done:
            self._end(reason, EndReason.ABORTED)

    # ------------------------------------------------------- a step's parts
    def _call_tool(self, name: str, arguments: Any) -> ToolOutcome:
        """Run one tool call from the agent; never raises for bad input. (A later call of an action
        whose earlier call ended the episode is refused here.)"""
        if self.done:
            return ToolOutcome("The conversation has ended; no more tool calls are accepted.", error=True)
        if not isinstance(name, str) or name not in self.env.tool_names:
            return self._invalid(name, arguments, f"unknown tool {clip_text(repr(name))}; available: "
                                 f"{', '.join(self.env.tool_names)}")
        spec = self.toolkit.specs()[name]
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
                    self._end("stalled: kept calling tools over the per-turn budget", EndReason.STALLED)
                return ToolOutcome(text, error=True)
            self.calls_this_turn += 1
        acted_on = len(self.world.referenced_ids)
        try:
            text = self._run_tool(name, args)
        except ToolError as e:
            # A refused call acted on nothing: its ids do not count toward r_hall (what it showed does).
            del self.world.referenced_ids[acted_on:]
            self._log(name, args, False, str(e))
            if spec.kind == "final":
                self.failed_finals_this_turn += 1
                if self.failed_finals_this_turn > MAX_FAILED_FINALS_PER_TURN:
                    self._end("stalled: kept giving final answers the tools refused", EndReason.STALLED)
            return ToolOutcome(str(e), error=True)
        self._log(name, args, True, text)
        if spec.kind == "final" and self.env.after_answer(self.problem):
            self.turns += 1
            self._end("answered", EndReason.ANSWERED)
        return ToolOutcome(text)

    def _agent_message(self, text: str) -> UserMessage | None:
        """The agent speaks to the user: ends a turn and returns the user's reply."""
        if self.done:
            return None
        self.turns += 1
        self.calls_this_turn = 0
        self.refused_this_turn = 0
        self.failed_finals_this_turn = 0
        self.world.fire_stock_outs(self.turns)  # p_oos: the user and the tools see it from now on
        reply = self.problem.user.reply(text or "", self.world, last_turn=self.turns >= self.difficulty.max_turns)
        self.user_messages.append(reply)
        if reply.excused:
            self.user_caused_turns += 1
        if reply.ends_episode:
            if reply.act is UserAct.QUIT:
                self._end("user quit: patience exhausted", EndReason.USER_QUIT)
            else:
                self._end("user ended", EndReason.USER_ENDED)
        return reply

    def _invalid_output(self, reason: str) -> str:
        """Malformed model output (e.g. unparseable tool-call JSON). Returns the error text.

        The reason may quote the model's output (a parser's message can hold a 1 MB
        argument), so it is clipped before it enters the end reason and the explanation.
        """
        reason = clip_text(reason, MAX_REASON_CHARS)
        if self.strict and not self.done:
            self.hard_fail_reason = f"invalid output: {reason}"
            self._end(self.hard_fail_reason, EndReason.INVALID_OUTPUT)
        return f"Invalid output: {reason}"

    # -------------------------------------------------------------- result
    def result(self) -> EpisodeResult:
        """The scored outcome (computed once: the episode is over after this)."""
        if self._result is not None:
            return self._result
        if not self.done:
            self._end("not finished", EndReason.NOT_FINISHED)
        verdict = self.env.verify(self.problem.task, self.world)
        if not isinstance(verdict, Verdict) or not -1.0 <= verdict.task <= 1.0:
            raise VerdictOutOfRange(f"environment {self.env.name!r}: verify() must return a Verdict with task in "
                                    f"[-1, 1], got {verdict!r}")
        min_turns = min(self.env.min_turns(self.problem.task, self.difficulty.tool_budget), self.difficulty.max_turns)
        r_eff = efficiency(self.turns, self.user_caused_turns, self.difficulty.max_turns, min_turns)
        # Ids in cart/return calls and in final answers that the tools carried out.
        r_hall, invented = hallucination(self.world.referenced_ids, self.world.seen_ids)
        answered = self.env.has_answer(self.problem)
        if self.hard_fail_reason is None and answered:
            reward = Reward.of(verdict.task, r_eff, r_hall, verdict.success)
        else:
            reward = Reward.failure(r_eff, r_hall)
        end_reason = self.end_reason if answered or self.hard_fail_reason else f"{self.end_reason}; no final answer"
        self._result = EpisodeResult(
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
            end=self.end or EndReason.NOT_FINISHED,
            min_turns=min_turns,
            guards=guard_stats(self.phraser),
        )
        return self._result

    # ------------------------------------------------------------- helpers
    def _run_tool(self, name: str, args: dict[str, Any]) -> str:
        """Run a validated call. `ToolError` is the agent's to read; anything else is a bug in the
        env's tool, reported as such (naming it) rather than as a bare exception."""
        try:
            text = getattr(self.toolkit, name)(**args)
        except (ToolError, PhrasingError):
            raise
        except Exception as e:
            raise ToolBug(f"tool {name!r} of environment {self.env.name!r} raised {type(e).__name__}: {e} "
                          "(a tool signals a refusal the agent reads with ToolError)") from e
        if not isinstance(text, str):
            raise ToolBug(f"tool {name!r} of environment {self.env.name!r} returned {type(text).__name__}, "
                          "not the text the agent reads")
        return text

    def _ask_user(self, question: str) -> str:
        reply = self._agent_message(question)
        return reply.text if reply is not None else "The conversation has ended."

    def _invalid(self, name: Any, arguments: Any, reason: str) -> ToolOutcome:
        # unvalidated input can be anything (a 1 MB string, a non-str name): log a bounded repr
        self._log(clip_text(str(name)), {"_raw": clip_text(repr(arguments), 200)}, False, reason)
        if self.strict:
            self.hard_fail_reason = f"invalid tool call: {reason}"
            self._end(self.hard_fail_reason, EndReason.INVALID_TOOL_CALL)
            return ToolOutcome(f"{reason}. The episode has ended (strict mode).", error=True, invalid=True)
        return ToolOutcome(reason, error=True, invalid=True)

    def _log(self, name: str, args: dict[str, Any], ok: bool, result: str) -> None:
        self.world.tool_log.append(ToolCallRecord(self.turns + 1, name, dict(args), ok, result[:2000]))

    def _end(self, reason: str, end: EndReason) -> None:
        self.done = True
        self.end = end
        self.end_reason = reason


def new_episode(env_name: str, difficulty: int, seed: int = 0, index: int = 0, *,
                context: "EnvContext | None" = None, strict: bool = True,
                phraser: Phraser | None = None) -> Episode:
    """Episode `index` of the (env, d, seed) dataset: the world is generated here, once.

    The same arguments give the same world, customer and score in any process; the
    Inspect task's sample `index` is this episode. `phraser` words the customer's decisions
    (default: the templates, the published benchmark).
    """
    from ecom_bench._seeding import episode_seed
    from ecom_bench.envs import get_env
    from ecom_bench.envs.context import load_context

    env = get_env(env_name)
    ctx = context or load_context()
    problem = env.generate(ctx, episode_seed(env_name, seed, difficulty, index), Difficulty.from_level(difficulty))
    return Episode(env, problem, strict=strict, phraser=phraser)
