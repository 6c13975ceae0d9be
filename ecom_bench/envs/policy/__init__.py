"""E_POLICY: answer a deterministic question on store policy.

The world's rule book (`ecom_bench.domains.policy`) holds a generated target rule with
B_branch(d) = 1+⌊d/3⌋ clauses (growing without cap: every clause changes the answer)
among look-alikes and other topics. Every numeric answer scales with one of the
customer's own amounts (a rate per lb of package weight, per dollar of the item price,
or a share of the item price, subtotal, price gap or card amount), a fact that may be
withheld and is disclosed when asked, so it cannot be guessed from the rule text even
when the clause combination is; categorical targets are rarer at small B, where a
decision list's 1-in-(B+1) guess is likeliest. generator.py builds the task, user.py is the
customer (who withholds facts at p_missing(d)), verifier.py recomputes the rule's
answer and scores it (numeric: 2·(min/max)^4 − 1; categorical: ±1; success: r_task ≥
0.95), agents.py holds the oracle, heuristic and random scripted agents.
"""

from __future__ import annotations

from typing import ClassVar

from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.base import EnvAxis, Environment, JourneyRole, SubTask, Verdict
from ecom_bench.envs.policy.generator import build_policy
from ecom_bench.envs.policy.agents import PolicyHeuristic, PolicyOracle, PolicyRandom
from ecom_bench.envs.policy.verifier import verify_policy
from ecom_bench.envs.policy.goal import PolicyGoal
from ecom_bench.envs.policy.user import PolicyUser
from ecom_bench.domains.policy.tools import PolicyTools
from ecom_bench.envs.policy.generator import POLICY_AXES
from ecom_bench.world import World
from ecom_bench.world._tooling import ToolBase

POLICY_INSTRUCTIONS = """\
You are a customer-service agent for an online store. The customer has a question about \
store policy (shipping fees and times, returns, refunds, restocking fees, price matching, \
warranty, member discounts, gift cards). Find the policy document that applies to their \
situation with policy_search: the right topic and the right scope (their shipping \
destination, product department or purchase channel). Read every clause: ask the customer \
for any fact the rule depends on that they have not told you, then work out the answer \
exactly as the document says and submit it with answer_policy_question: the one amount of \
money, number of days or months (e.g. "12.50" or "14 days"), or the outcome's name as the \
document lists it; the tool says what it recorded. Write plain replies to talk to the customer."""


class PolicyEnv(Environment):
    name: ClassVar[str] = "policy"
    title: ClassVar[str] = "E_POLICY: policy QA"
    summary: ClassVar[str] = "E_POLICY: answer a deterministic question on store policy."
    goal_type: ClassVar[type] = PolicyGoal
    customer_type: ClassVar[type] = PolicyUser
    toolkits: ClassVar[tuple[type[ToolBase], ...]] = (PolicyTools,)
    tool_names: ClassVar[tuple[str, ...]] = ("policy_search", "policy_get", "ask_user", "answer_policy_question")
    final_tool: ClassVar[str | None] = "answer_policy_question"
    instructions: ClassVar[str] = POLICY_INSTRUCTIONS
    policies = {"oracle": PolicyOracle, "heuristic": PolicyHeuristic, "random": PolicyRandom}
    axes: ClassVar[tuple[EnvAxis, ...]] = POLICY_AXES
    journey: ClassVar[JourneyRole | None] = JourneyRole(
        "the policy answer tool",
        ("policy", "policies", "per your", "what does your"),
        cue_order=0)

    def build(self, world: World, seed: int, difficulty: Difficulty, intent: int = 0) -> SubTask:
        return build_policy(world, seed, difficulty, intent, customer=self.customer_type)

    def verify(self, task: SubTask, world: World) -> Verdict:
        return verify_policy(task, world, self.answer_of(task, world))


__all__ = ["PolicyEnv"]
