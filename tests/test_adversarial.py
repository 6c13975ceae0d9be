"""Soundness against adversarial scripted agents (reliability suite).

The four generic strategies of `ecom_bench.agents.adversarial` play every env through
the core runner at d = 3 and 12. None may succeed (the acceptance bar is 5%; on this
many episodes that is zero), and the reward component meant to catch each one must:

* recommend_all / all_variants: only retrieved ids (r_hall = 0 every time), so what sinks
  them is r_task (precision / F1 / the wrong pick): mean r_task stays low;
* invent_ids: r_hall (every env whose answer holds ids; E_POLICY's does not, there the
  made-up amount fails r_task);
* answer_now: r_task, and a hard fail (−1) whenever the tool refused the empty answer.

Known weakness (reported, not hidden): in E_TRACK the target is the newest order on the
account about one time in five (a "confirmed" target is 0-1 days old), so answering the
first listed order passes ~17-30% at d = 3-12 — `TRACKING_RECENCY` marks it xfail(strict)
so a generator fix flips it.
"""

from __future__ import annotations

import statistics

import pytest

from ecom_bench.agents import get_policy
from ecom_bench.agents.adversarial import ADVERSARIAL, ADVERSARIAL_NAMES
from ecom_bench.envs import ENVIRONMENTS
from ecom_bench.runner import make_episode, run_policy

ENVS = list(ENVIRONMENTS)
#: Episodes per d (E_JOURNEY chains 2-5 requests: fewer).
N = {"journey": 3}
N_DEFAULT = 6
#: Mean r_task these strategies may reach at most (E_PD's nDCG term gives partial credit).
MAX_MEAN_TASK = 0.3
TRACKING_RECENCY = {("tracking", "answer_now"), ("tracking", "recommend_all"), ("tracking", "all_variants")}


def _runs(context, env: str, policy: str):  # noqa: ANN001
    return [run_policy(make_episode(env, d, 0, i, context=context), get_policy(env, policy)).result
            for d in (3, 12) for i in range(N.get(env, N_DEFAULT))]


def _cases():
    for env in ENVS:
        for policy in ADVERSARIAL_NAMES:
            marks = [pytest.mark.xfail(strict=True, reason="E_TRACK: the target is the newest listed order "
                                       "~20% of the time (reported weakness of the generator)")] \
                if (env, policy) in TRACKING_RECENCY else []
            yield pytest.param(env, policy, marks=marks, id=f"{env}-{policy}")


@pytest.mark.parametrize(("env", "policy"), list(_cases()))
def test_adversary_never_succeeds_and_the_right_component_catches_it(context, env, policy):
    results = _runs(context, env, policy)
    rewards = [r.reward for r in results]
    wins = [r.explanation() for r in results if r.reward.success]
    assert not wins, f"{env}/{policy} succeeded {len(wins)} of {len(results)} times; first: {wins[0]}"
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
            assert hall <= -0.9, f"mean r_hall {hall:+.2f}: invented ids must be penalised"
            assert all(r.invented_ids for r in results)
    else:  # answer_now
        assert task <= -0.8, f"mean r_task {task:+.2f}"
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
    a = run_policy(make_episode("cart", 6, 0, 1, context=context), policy)
    b = run_policy(make_episode("cart", 6, 0, 1, context=context), get_policy("cart", "recommend_all"))
    assert [(m.role, m.text, m.tool_calls) for m in a.messages] == [(m.role, m.text, m.tool_calls) for m in b.messages]
    assert a.result.reward == b.result.reward
