"""E_PD / E_SUB soundness: plain questions work, proposals are no oracle.

The strategies here are scripted policies over what a model sees:

* `OneQuestion`: the honest agent: one natural generic question (from the dev
  paraphrases), then the heuristic's search-and-check on whatever it was told.
* `Informed`: the same agent handed every constraint (it reads the hidden goal): the
  ceiling the one-question agent is measured against.
* `ProposeFilter`: A4's exploit: never ask; name 5 searched ids per message, drop those
  the customer objects to, turn its complaints into filters, recommend once it approves.
* `Padded`: A6: the heuristic with "Is there anything else you need?" on every message.

The default suite runs few episodes on the 3k catalogue; the full measurement (20k
catalogue, >= 200 episodes per d) is `python tests/test_ranking_soundness.py`.
"""

from __future__ import annotations

import json
import math
import random
import re
import statistics
import sys
from typing import Any

import pytest

from conftest import call, questions, say
from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, ToolCallRequest
from ecom_bench.agents.base import get_policy
from ecom_bench.conversation import calls_since_last_message
from ecom_bench.catalog.naming import short_name_from_title
from ecom_bench.envs._ranking import ideal_ranking, requested_k, score_list
from ecom_bench.envs.discovery.agents import RankingHeuristic, Wants
from ecom_bench.envs.discovery.verifier import verify_discovery
from ecom_bench.envs.substitution.agents import SubstitutionHeuristic
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.users import UserAct
from ecom_bench.world.state import FinalAnswer
from red_team.exploits import padded

ENVS = ("discovery", "substitution")
#: Generic requests for requirements, and the dev paraphrases of them.
GENERIC = ["Could you list all of your requirements?", "Is that everything?", "What features do you need?",
           "Anything else I should know?", "Tell me what else matters to you."] + questions("requirements",
                                                                                          "anything_else")


def _heuristic_class(env: str) -> type[RankingHeuristic]:
    return SubstitutionHeuristic if env == "substitution" else RankingHeuristic


def one_question(env: str, question: str = "Could you list all of your requirements?") -> RankingHeuristic:
    """The honest agent: asks `question` once, first thing, then meets what it was told."""

    class OneQuestion(_heuristic_class(env)):  # type: ignore[misc,valid-type]
        name = "one_question"

        def should_ask(self, users: list[str], spoke: list[Message]) -> bool:
            return not spoke

        def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
            spoke = [m for m in messages if m.role == "assistant" and not m.tool_calls]
            if not spoke and any(m.role == "user" for m in messages):
                return AgentAction(text=question)
            return super().act(messages, hidden, status)

    return OneQuestion()


def informed(env: str) -> RankingHeuristic:
    """The same agent given every constraint (reads the hidden goal; never asks)."""

    class Informed(_heuristic_class(env)):  # type: ignore[misc,valid-type]
        name = "informed"
        reads_hidden_goal = True
        goal: dict[str, Any] = {}

        def should_ask(self, users: list[str], spoke: list[Message]) -> bool:
            return False

        def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
            assert hidden is not None
            self.goal = hidden["goal"]
            return super().act(messages, hidden, status)

        def parse(self, users: list[str]) -> Wants:
            wants = Wants(subject=self.subject(users[0]), k=requested_k(users[0]))
            extra = [self.goal["compatibility"]] if "compatibility" in self.goal else []
            for c in extra + self.goal["constraints"]:
                if c["kind"] == "price":
                    wants.budget = float(c["value"])
                elif c["kind"] == "rating":
                    wants.min_rating = float(c["value"])
                elif c["kind"] == "ship":
                    wants.max_days = int(c["value"])
                elif c["kind"] == "brand":
                    wants.brand = str(c["value"])
                elif c["kind"] == "attribute":
                    wants.attrs.append((c["attribute"].replace("_", " "), str(c["value"])))
            return wants

    return Informed()


def Padded(env: str):  # noqa: N802 (kept as the name the measurement table prints)
    """A6: the env's heuristic with a padding question on every message it writes."""
    return padded(get_policy(env, "heuristic"))


_PID = re.compile(r"\bP\d{5,}\b")


class ProposeFilter:
    """A4's exploit: propose 5 searched ids per message, never ask; complaints become filters.

    It drops every product the customer names in a reply, re-searches with whatever the
    complaints let it parse (a budget, stars, days, a brand), recommends the proposed
    set once a reply names none of them (approval), and at the last turn recommends its
    best un-objected candidates.
    """

    name = "propose_filter"
    reads_hidden_goal = False

    def __init__(self, env: str) -> None:
        self.h = get_policy(env, "heuristic")

    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        users = [m.text for m in messages if m.role == "user"]
        patience = int(m.group(1)) if (m := re.search(r"patience is (\d+) turn", messages[0].text)) else 4
        wants, k, n = self.h.parse(users), requested_k(users[0]), len(messages)
        records, _, searches = self.h._read(messages)
        spoke = [m for m in messages if m.role == "assistant" and not m.tool_calls]
        names = {pid: short_name_from_title(d.get("title", "")).lower() for pid, d in records.items()}

        def named(pid: str, text: str) -> bool:
            low = text.lower()
            return bool(names.get(pid)) and names[pid] in low or pid.lower() in low

        objected = {pid for u in users[1:] for pid in records if named(pid, u)}
        last = _PID.findall(spoke[-1].text) if spoke else []
        if last and messages[-1].role == "user" and not any(named(p, messages[-1].text) for p in last):
            return self._recommend(last[:k], n)
        args = wants.search_args(False, True)
        if json.dumps(args, sort_keys=True) not in searches and calls_since_last_message(messages) == 0:
            return AgentAction(tool_calls=(ToolCallRequest("catalog_search", args, id=f"s{n}"),))
        good = [pid for pid, d in records.items() if d.get("in_stock", True) and pid not in objected
                and not self.h.excluded(wants, d) and self.h._check(wants, d)[0] == 0]
        if len(spoke) >= patience - 1 or not good or not self.proposes():
            return self._recommend(good[:k] or list(records)[:k], n)
        return AgentAction(text="Here are some options: " + ", ".join(good[:5]) + ".")

    def proposes(self) -> bool:
        return True

    @staticmethod
    def _recommend(ids: list[str], n: int) -> AgentAction:
        return AgentAction(tool_calls=(ToolCallRequest("recommend_products", {"product_ids": ids}, id=f"r{n}"),))


class SearchOnly(ProposeFilter):
    """The same reading of the request with no proposals: search the stated filters, recommend.

    What not asking earns by itself (it solves the episodes whose withheld constraints do
    not bind the search): the floor ProposeFilter is compared with.
    """

    name = "search_only"

    def proposes(self) -> bool:
        return False


# ------------------------------------------------------------------ helpers
def episode(context, env, d, i, seed=0):
    return new_episode(env, d, seed, i, context=context)


def run_many(context, env, policy, d, n, seed=0):
    return [run_policy(episode(context, env, d, i, seed), policy).result for i in range(n)]


def success(results) -> float:
    return sum(r.reward.success for r in results) / len(results)


# -------------------------------------------------------------------- tests
@pytest.mark.parametrize("env", ENVS)
def test_openings_signal_what_is_withheld(context, env):
    for i in range(12):
        ep = episode(context, env, 9, i)
        hidden = [s for s, told in ep.problem.user.disclosure().items() if not told]
        assert bool(ep.problem.user.missing_signal(random.Random(0))) == bool(hidden)
        if not hidden:
            assert "go ahead" in say(ep, "Let me look.").text.lower()


@pytest.mark.parametrize("env,d,index", [("discovery", 6, 0), ("substitution", 9, 0)])
def test_repro_generic_questions_disclose_everything(context, env, d, index):
    for question in GENERIC:
        ep = episode(context, env, d, index)
        hidden = {s for s, told in ep.problem.user.disclosure().items() if not told}
        assert hidden
        reply = say(ep, question)
        assert set(reply.revealed) == hidden, (question, reply.text)
        assert reply.act is UserAct.CLARIFY and reply.excused
        assert "go ahead" not in reply.text.lower()


@pytest.mark.parametrize("env", ENVS)
def test_generic_questions_disclose_withheld_slots(context, env):
    """At d = 6 and 12, generic plain-English questions disclose >= 95% of withheld slots."""
    for d in (6, 12):
        withheld = disclosed = 0
        for i, question in enumerate(GENERIC):
            ep = episode(context, env, d, i % 8)
            hidden = {s for s, told in ep.problem.user.disclosure().items() if not told}
            reply = say(ep, question)
            withheld += len(hidden)
            disclosed += len(hidden & set(reply.revealed))
        assert withheld and disclosed / withheld >= 0.95


@pytest.mark.parametrize("env", ENVS)
def test_specific_question_gets_that_slot_and_a_note_of_more(context, env):
    def fits(e):
        told = e.problem.user.disclosure()
        return sum(not t for t in told.values()) >= 2 and not told["price"]

    ep = next(e for e in (episode(context, env, 9, i) for i in range(40)) if fits(e))
    reply = say(ep, "What's your budget?")
    assert reply.revealed == ("price",) and "$" in reply.text
    assert "more" in reply.text or "else" in reply.text  # the note that more is withheld
    reply = say(ep, "Is that everything?")
    assert reply.revealed and not ep.problem.user.withheld()
    reply = say(ep, "Is that everything?")
    assert reply.act is UserAct.CONTINUE and not reply.excused  # nothing left: a charged turn


@pytest.mark.parametrize("env", ENVS)
def test_proposal_feedback_is_no_oracle(context, env):
    """A bad proposal round names one problem's kind (no withheld value) and costs patience."""
    ep = next(e for i in range(40) if not (e := episode(context, env, 6, i)).problem.user.disclosure()["price"])
    goal = ep.problem.goal
    pricey = [p for p in context.catalog.products if p.leaf_category == goal.category.value
              and p.price > goal.constraints[0].value and ep.world.in_stock(p)][:5]
    assert len(pricey) >= 2
    reply = say(ep, "I suggest " + ", ".join(p.id for p in pricey) + ".")
    assert reply.act is UserAct.CORRECT and f"{goal.constraints[0].value:g}" not in reply.text
    assert not reply.revealed and not ep.problem.user.told("price")
    named = [p for p in pricey if short_name_from_title(p.title) in reply.text]
    assert len(named) == 1  # the set's first problem, not a verdict per product
    reply = say(ep, f"Then maybe {pricey[-1].id}.")
    assert reply.act is UserAct.QUIT and ep.done  # two bad rounds: the customer leaves


@pytest.mark.parametrize("env", ENVS)
def test_confirm_only_when_every_proposal_is_right(context, env):
    ep = episode(context, env, 3, 1)
    goal = ep.problem.goal
    good = [i for i in goal.ranked_ids if i not in goal.doomed_ids][:2]
    for pid in good:
        call(ep, "catalog_get_product", {"product_id": pid})
    say(ep, "Everything you need?")  # disclose all, so the confirm is about products only
    assert say(ep, f"I suggest {' and '.join(good)}.").act is UserAct.CONFIRM


@pytest.mark.parametrize("env", ENVS)
def test_propose_filter_exploit_fails(context, env):
    """A4: proposals-as-oracle succeeds rarely (full measurement: >= 200 episodes per d, 20k catalogue)."""
    # The 3k catalogue's aisles are small (a few products per brand), so withheld constraints
    # bind less often than on the 20k one (there: <= 6% at every d, the SearchOnly floor's rate).
    rates = {d: success(run_many(context, env, ProposeFilter(env), d, 15)) for d in (3, 6, 9, 12)}
    assert sum(rates.values()) / len(rates) <= 0.15 and max(rates[9], rates[12]) <= 0.1, rates


@pytest.mark.parametrize("env", ENVS)
def test_padding_buys_no_efficiency(context, env):
    """A6: "anything else?" on every message changes r_eff by at most 0.05."""
    for d in (3, 9):
        plain = run_many(context, env, get_policy(env, "heuristic"), d, 10)
        padded = run_many(context, env, Padded(env), d, 10)
        gap = statistics.fmean(r.reward.efficiency for r in padded) - statistics.fmean(
            r.reward.efficiency for r in plain)
        assert gap <= 0.05, (d, gap)


@pytest.mark.parametrize("env", ENVS)
def test_one_question_agent_reaches_the_informed_ceiling(context, env):
    """One natural question, then everything it was told: >= 0.9x the same agent given every constraint."""
    for d in (6, 12):
        asked = success(run_many(context, env, one_question(env), d, 12))
        ceiling = success(run_many(context, env, informed(env), d, 12))
        assert asked >= 0.9 * ceiling, (d, asked, ceiling)


def test_ranking_lives_in_r_task_and_the_ideal_beats_a_random_valid_list(context):
    """Success is validity; among valid lists the ideal order earns the highest r_task."""
    wins = margins = n = 0
    for i in range(20):
        ep = episode(context, "discovery", 3, i)
        goal, world = ep.problem.goal, ep.world
        ranked = [pid for pid, _ in ideal_ranking(goal, world).ranked]
        if len(ranked) < 2:
            continue
        ideal = ranked[: goal.k]
        shuffled = random.Random(i).sample(ranked, min(goal.k, len(ranked)))
        assert score_list(goal, world, shuffled).success()  # any valid complete list succeeds
        assert not score_list(goal, world, ideal[:1]).success() or len(ranked) == 1  # too few picks
        r_ideal = verify_discovery(ep.problem, world, FinalAnswer("recommend_products", {"product_ids": ideal})).task
        r_rand = verify_discovery(ep.problem, world, FinalAnswer("recommend_products", {"product_ids": shuffled})).task
        n += 1
        wins += r_ideal > r_rand
        margins += r_ideal - r_rand
    assert n >= 10 and wins >= 0.7 * n and margins / n > 0


# ------------------------------------------------------------- measurement
def _measure(args: list[str]) -> None:  # pragma: no cover - manual measurement
    """python tests/test_ranking_soundness.py [n]: the issue-9 tables on the 20k catalogue."""
    import multiprocessing as mp

    from ecom_bench.envs.context import load_context

    n = int(args[0]) if args else 200
    global _CTX
    _CTX = load_context()
    jobs = [(env, name, d, n if name in ("propose_filter", "search_only") else min(n, 100))
            for env in ENVS for name in ("heuristic", "one_question", "informed", "padded", "propose_filter", "search_only")
            for d in ((0, 3, 6, 9, 12) if "_" not in name or name == "one_question" else (3, 6, 9, 12))]
    with mp.get_context("fork").Pool(2) as pool:
        for line in pool.imap(_cell, jobs):
            print(line, flush=True)


_CTX = None


def _cell(job: tuple[str, str, int, int]) -> str:  # pragma: no cover
    env, name, d, n = job
    make = {"heuristic": lambda: get_policy(env, "heuristic"), "one_question": lambda: one_question(env),
            "informed": lambda: informed(env), "padded": lambda: Padded(env),
            "propose_filter": lambda: ProposeFilter(env), "search_only": lambda: SearchOnly(env)}[name]
    results = run_many(_CTX, env, make(), d, n)
    p = success(results)
    upper = p + 1.96 * math.sqrt(max(p * (1 - p), 1e-12) / n)
    eff = statistics.fmean(r.reward.efficiency for r in results)
    return f"{env:13} {name:15} d={d:<3} n={n:<4} success {p:.3f} (95% ub {upper:.3f})  efficiency {eff:+.3f}"


if __name__ == "__main__":  # pragma: no cover
    _measure(sys.argv[1:])
