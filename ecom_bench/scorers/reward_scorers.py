"""The scorers: one per reward part, each read from the outcome the solver computed.

Five numeric scorers (task, efficiency, hallucination, total, success) rather than one
scorer with a dict value, so that every part is its own numeric column in
`inspect_ai.analysis.samples_df` / `evals_df` and its own row in `inspect view`.
Epochs are reduced by mean; `success` also reports pass^k (all k epochs of a sample
succeed, tau-bench) and pass@k (at least one does), which only mean something for a
0/1 part. `total` carries the full explanation, the answer and the episode metadata.
A sixth scorer, `solved`, grades each sample C or I: the viewer draws those as a green or
red mark, where a number (even a total of -1) is drawn in neutral type.

For the viewer, values are rounded to `DISPLAY_DECIMALS` (a float sum shows as
0.6000000000000001 otherwise); each score's metadata keeps the exact value (`exact`).
Explanations and answers are escaped Markdown (`_markdown.py`): the viewer renders them
as Markdown, and they must read as written.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable

from inspect_ai._util.registry import registry_add, registry_info, registry_unqualified_name
from inspect_ai.event import ErrorEvent, ScoreEvent
from inspect_ai.log import transcript
from inspect_ai.log._samples import sample_active
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    Value,
    mean,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from ecom_bench.rewards import FAILURE_SCORE
from ecom_bench.scorers._answer import answer_text
from ecom_bench.scorers._markdown import to_markdown
from ecom_bench.scorers._store import read_episode

SCORE_PARTS = ("task", "efficiency", "hallucination", "total", "success")
#: Decimals of a score's value in the log (the exact value is in the score's metadata).
DISPLAY_DECIMALS = 4


def _shown(value: float) -> float:
    return round(value, DISPLAY_DECIMALS) + 0.0  # + 0.0: no "-0.0"


@metric
def env_mean() -> Metric:
    """`mean_<env>` per env, for collections; nothing for a single env (it would repeat the mean)."""

    def compute(scores: list[SampleScore]) -> Value:
        by_env: dict[str, list[float]] = defaultdict(list)
        for s in scores:
            by_env[str((s.sample_metadata or {}).get("env"))].append(s.score.as_float())
        if len(by_env) < 2:
            return {}
        return {f"mean_{env}": sum(v) / len(v) for env, v in sorted(by_env.items())}

    return compute


def pass_k_of_sample(values: list[float], k: int) -> tuple[float, float]:
    """(pass^k, pass@k) of one sample with c successes in n >= k trials.

    pass^k = C(c,k)/C(n,k): k trials drawn without replacement all succeed (tau-bench);
    pass@k = 1 - C(n-c,k)/C(n,k): at least one does (Chen et al. 2021).
    """
    n, c = len(values), sum(1 for v in values if v >= 1.0)
    return math.comb(c, k) / math.comb(n, k), 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_k_estimates(trials: dict[object, list[float]]) -> tuple[int, float, float] | None:
    """(k, pass^k, pass@k) averaged over samples, k = the fewest trials any sample has.

    With one trial both equal the mean success (tau-bench's pass^1). None without trials.
    """
    if not trials:
        return None
    k = min(len(v) for v in trials.values())
    per_sample = [pass_k_of_sample(v, k) for v in trials.values()]
    return k, sum(h for h, _ in per_sample) / len(per_sample), sum(a for _, a in per_sample) / len(per_sample)


@metric(scores="unreduced")
def pass_k() -> Metric:
    """pass^k and pass@k of success, k = the number of epochs (pass^1 = pass@1 = mean)."""

    def compute(scores: list[SampleScore]) -> Value:
        trials: dict[object, list[float]] = defaultdict(list)
        for s in scores:
            trials[s.sample_id].append(s.score.as_float())
        estimates = pass_k_estimates(trials)
        if estimates is None:
            return {}
        k, hat, at = estimates
        return {f"pass^{k}": hat, f"pass@{k}": at}

    return compute


class NoEpisodeError(RuntimeError):
    """A sample has no episode in its store: its solver was not the task's, so there is nothing to score."""


def _recorded_outcome(state: TaskState) -> dict | None:
    """The outcome the episode left in the sample's store (None: it started but never finished).

    Only the store is read, never a live object, so `inspect score <log>` gives the same scores.
    A sample whose solver never started an episode (`--solver generate`, an agent run without
    the task's solver) is an error, not a failure score that would pass for the agent's.
    """
    if not read_episode(state.store, "env"):
        raise NoEpisodeError("no ecom_bench episode ran for this sample, so there is nothing to score: keep the "
                             "task's solver (to evaluate your own agent pass agent=... to the task, not --solver)")
    return read_episode(state.store, "outcome")


def _errored_and_unscored(part: str) -> bool:
    """A sample that ended in an error, re-scored from its log (`inspect score`) with no score of its own.

    Inspect scores no errored sample (unless `--score-on-error`): its outcome, written as the
    solver stopped, is no result of the agent's, and a failure score in its place would move the
    means. Its log holds the error (an ErrorEvent) and no score from this scorer, so re-scoring
    leaves it so; one scored under `--score-on-error` is scored again, the same way. During the
    eval (a live sample) Inspect asks for a score only where one is wanted.
    """
    if sample_active() is not None:
        return False
    events = transcript().events
    return (any(isinstance(e, ErrorEvent) for e in events)
            and not any(isinstance(e, ScoreEvent) and e.scorer == part for e in events))


_NO_OUTCOME = "No episode outcome recorded: failure score."


def _outcome_or_failure(state: TaskState, part: str, explain: Callable[[dict], str]) -> Score | None:
    if _errored_and_unscored(part):
        return None
    outcome = _recorded_outcome(state)
    if outcome is None:  # the solver never reached its finally block
        value = 0.0 if part == "success" else FAILURE_SCORE
        return Score(value=value, explanation=_NO_OUTCOME, metadata={"exact": value})
    exact = float(outcome["reward"][part])
    return Score(value=_shown(exact), explanation=to_markdown(explain(outcome)), metadata={"exact": exact})


def _task_explanation(outcome: dict) -> str:
    text = outcome["verdict"]["explanation"]
    if outcome["hard_fail"]:
        return (f"Hard fail ({outcome['end_reason']}): task -1, overriding the verdict "
                f"(task part on its own {outcome['verdict']['task']:+.2f}). {text}")
    return text


def _efficiency_explanation(outcome: dict) -> str:
    caused, needed = outcome["user_caused_turns"], outcome.get("min_turns", 1)
    return (f"Turns: {outcome['turns']}" + (f", {caused} caused by the user (not charged)" if caused else "")
            + (f"; {needed} needed within the tool budget (not charged)." if needed > 1 else "."))


def _hallucination_explanation(outcome: dict) -> str:
    invented = outcome["invented_ids"]
    if invented:
        return f"Ids never returned by a tool: {', '.join(invented)}."
    return "Every id the agent used came from a tool result."


def _success_explanation(outcome: dict) -> str:
    if outcome["reward"]["success"]:
        return "Success: the task was solved exactly, with no hard fail."
    if outcome["hard_fail"]:
        return f"No success: hard fail ({outcome['end_reason']})."
    return "No success: the task part is below 1."


_PART_METRICS: list[Metric] = [mean(), stderr(), env_mean()]


def _part_scorer(part: str, explain: Callable[[dict], str], metrics: list[Metric], doc: str) -> Callable[[], Scorer]:
    """Register the scorer of one reward part under the part's own name (its log column)."""

    def make() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score | None:
            return _outcome_or_failure(state, part, explain)

        return score

    make.__name__ = make.__qualname__ = f"{part}_score"
    make.__doc__ = doc
    return scorer(metrics=metrics, name=part)(make)


task_score = _part_scorer("task", _task_explanation, _PART_METRICS,
                          "r_task: the verifier's verdict on the hidden goal (-1 on a hard fail).")
efficiency_score = _part_scorer("efficiency", _efficiency_explanation, _PART_METRICS,
                                "r_eff: fewer agent-caused turns score higher.")
hallucination_score = _part_scorer("hallucination", _hallucination_explanation, _PART_METRICS,
                                   "r_hall: 0, or negative for ids the agent invented.")
success_score = _part_scorer("success", _success_explanation, [*_PART_METRICS, pass_k()],
                             "1 when the task is solved exactly with no hard fail; pass^k/pass@k over epochs.")


@scorer(metrics=[], name="solved")
def solved_score() -> Scorer:
    """C when the sample succeeded (`success` 1), else I: a pass/fail mark the viewer colours.

    No metrics: its mean would be success's, which the leaderboard reads.
    """

    async def score(state: TaskState, target: Target) -> Score | None:
        if _errored_and_unscored("solved"):
            return None
        outcome = _recorded_outcome(state)
        if outcome is None:
            return Score(value=INCORRECT, explanation=_NO_OUTCOME)
        return Score(value=CORRECT if outcome["reward"]["success"] else INCORRECT,
                     explanation=to_markdown(_success_explanation(outcome)))

    return score


@scorer(metrics=_PART_METRICS, name="total")
def total_score() -> Scorer:
    """The composite reward, with the full explanation, the answer and the episode metadata."""

    async def score(state: TaskState, target: Target) -> Score | None:
        if _errored_and_unscored("total"):
            return None
        outcome = _recorded_outcome(state)
        if outcome is None:
            return _outcome_or_failure(state, "total", str)
        final, env = outcome["final_state"], read_episode(state.store, "env")
        exact = float(outcome["reward"]["total"])
        return Score(
            value=_shown(exact),
            answer=to_markdown(answer_text(final, env, outcome["end_reason"])),
            explanation=to_markdown(outcome["explanation"]),
            metadata={
                "exact": exact,
                "env": env,
                "difficulty": read_episode(state.store, "difficulty"),
                "turns": outcome["turns"],
                "user_caused_turns": outcome["user_caused_turns"],
                "min_turns": outcome.get("min_turns", 1),
                "end_reason": outcome["end_reason"],
                "hard_fail": outcome["hard_fail"],
                "invented_ids": outcome["invented_ids"],
                "verdict": outcome["verdict"]["details"],
                "hidden_goal": outcome["hidden"],
                "final_state": final,
                "disclosure": outcome["disclosure"],
                "user_acts": outcome["user_acts"],
                **({"customer_guards": outcome["guards"]} if "guards" in outcome else {}),
            },
        )

    return score


def _register_log_names(*factories: Callable[[], Scorer]) -> None:
    """Register each scorer also under the unqualified name a log records ("total", not "ecom_bench/total").

    `inspect score <log>` re-creates a log's scorers from those names, and Inspect looks an
    unqualified name up without a package prefix: without these, re-scoring a log of a
    packaged task fails with "The scorer 'total' couldn't be loaded".
    """
    for factory in factories:
        info = registry_info(factory)

        def by_log_name(factory: Callable[[], Scorer] = factory) -> Scorer:
            return factory()

        registry_add(by_log_name, info.model_copy(update={"name": registry_unqualified_name(info)}))


_register_log_names(total_score, solved_score, success_score, task_score, efficiency_score, hallucination_score)


def reward_scorers() -> list[Scorer]:
    """The scorers, in the order the log and the viewer show them: the pass/fail mark beside the total."""
    return [total_score(), solved_score(), success_score(), task_score(), efficiency_score(), hallucination_score()]
