"""Soundness against adversarial scripted agents (reliability suite).

The four generic strategies of `ecom_bench.agents.adversarial` play every env through
the core runner at d = 3 and 12. None may succeed (the acceptance bar is 5%; on this
many episodes that is zero), and the reward component meant to catch each one must:

* recommend_all / all_variants: only retrieved ids (r_hall = 0 every time), so what sinks
  them is r_task (precision / F1 / the wrong pick): mean r_task stays low;
* invent_ids: r_hall (every env whose answer holds ids; E_POLICY's does not, there the
  made-up amount fails r_task);
* answer_now: r_task, and a hard fail (−1) whenever the tool refused the empty answer.

E_TRACK / E_RETURN are measured on more episodes (`ORDER_ENVS`): a cheap recency guess
("the first listed order") is right exactly when the target is the account's newest
order, which the order-history generator keeps under 5% (busy recent background
history); a fixed dozen episodes cannot tell 4% from 0%. There `all_variants` is "list
every order and ask which one": when the customer answers with the order id (their
reference is the id itself) that is honest clarification, so its wins must all be
episodes where the customer's own words held the target id.
"""

from __future__ import annotations

import statistics

import pytest

from conftest import examples
from ecom_bench.agents import get_policy
from ecom_bench.agents.adversarial import ADVERSARIAL, ADVERSARIAL_NAMES
from ecom_bench.envs import ENVIRONMENTS
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy

pytestmark = pytest.mark.reliability

ENVS = list(ENVIRONMENTS)
#: Episodes per d (E_JOURNEY chains 2-5 requests: fewer).
N = {"journey": examples(3)}
N_DEFAULT = examples(6)
#: Mean r_task these strategies may reach at most (E_PD's nDCG term gives partial credit).
MAX_MEAN_TASK = 0.3
#: Envs whose answer names an order: checked on ORDER_EPISODES episodes per d against the 5% bar.
ORDER_ENVS = ("tracking", "returns")
ORDER_EPISODES = examples(40)


def _runs(context, env: str, policy: str, n: int | None = None):  # noqa: ANN001
    n = n or N.get(env, N_DEFAULT)
    return [run_policy(new_episode(env, d, 0, i, context=context), get_policy(env, policy))
            for d in (3, 12) for i in range(n)]


def _cases():
    for env in ENVS:
        for policy in ADVERSARIAL_NAMES:
            yield pytest.param(env, policy, id=f"{env}-{policy}")


@pytest.mark.parametrize(("env", "policy"), list(_cases()))
def test_adversary_never_succeeds_and_the_right_component_catches_it(context, env, policy):
    runs = _runs(context, env, policy, ORDER_EPISODES if env in ORDER_ENVS else None)
    if env in ORDER_ENVS and policy == "all_variants":
        # honest clarification: keep only the episodes where the customer never said the id
        runs = [run for run in runs if run.result.hidden["goal"]["order_id"] not in run.customer_words()]
    results = [run.result for run in runs]
    rewards = [r.reward for r in results]
    wins = [r.explanation() for r in results if r.reward.success]
    bar = 0.05 * len(results)  # the acceptance bar (on a dozen episodes: no win at all)
    assert len(wins) <= bar, f"{env}/{policy} succeeded {len(wins)} of {len(results)} times; first: {wins[0]}"
    for r in rewards:
        assert -1.0 <= r.total <= 1.0
    task = statistics.mean(r.task for r in rewards)
    hall = statistics.mean(r.hallucination for r in rewards)
    if policy in ("recommend_all", "all_variants"):
        assert all(r.hallucination == 0.0 for r in rewards), "these strategies only use retrieved ids"
        assert task <= MAX_MEAN_TASK, f"mean r_task {task:+.2f}: precision should sink {policy}"
    elif policy == "invent_ids":
        if env == "policy":
            assert task <= -0.5, f"mean r_task {task:+.2f}"
        else:
            # an invented id the tools accept is charged by r_hall; one they refuse acts on nothing
            # and leaves the request without an answer (no answer at all: a hard fail, -1)
            assert all(r.invented_ids or r.reward.hard_fail for r in results)
            answered = [r.reward.hallucination for r in results if not r.reward.hard_fail]
            hall = statistics.mean(answered) if answered else -1.0
            assert hall <= -0.9, f"mean r_hall {hall:+.2f} over answers: invented ids must be penalised"
    else:  # answer_now
        # E_TRACK gives half credit for a right status, which a guessed order often shares
        assert task <= (-0.6 if env == "tracking" else -0.8), f"mean r_task {task:+.2f}"
        for r in results:
            if not r.final_state["answers"]:
                assert r.reward.hard_fail and r.reward.total == -1.0, r.explanation()


def test_adversaries_are_registered_for_every_env():
    from ecom_bench.providers.scripted import POLICIES

    assert set(ADVERSARIAL_NAMES) <= set(POLICIES) and set(ADVERSARIAL_NAMES) == set(ADVERSARIAL)
    for env in ENVS:
        for name in ADVERSARIAL_NAMES:
            policy = get_policy(env, name)
            assert policy.name == name and policy.reads_hidden_goal is False
    with pytest.raises(ValueError, match="recommend_all"):
        get_policy("cart", "no-such-policy")


def test_adversaries_are_deterministic_and_stateless(context):
    """Same conversation → same action; one instance can serve many episodes."""
    policy = get_policy("cart", "recommend_all")
    a = run_policy(new_episode("cart", 6, 0, 1, context=context), policy)
    b = run_policy(new_episode("cart", 6, 0, 1, context=context), get_policy("cart", "recommend_all"))
    assert [(m.role, m.text, m.tool_calls) for m in a.messages] == [(m.role, m.text, m.tool_calls) for m in b.messages]
    assert a.result.reward == b.result.reward
