import pytest

from ecom_bench.rewards import Reward, compose, efficiency, hallucination


def test_blog_check_a_formula():
    # d=1: T_max=4, T=3 with one confirm -> T_eff=2 -> r_eff=1/3; r_task=1 -> 0.80
    r_eff = efficiency(turns=3, user_caused_turns=1, max_turns=4)
    assert r_eff == pytest.approx(1 / 3)
    assert compose(1.0, r_eff, 0.0) == pytest.approx(0.80)


def test_blog_check_b_formula():
    # d=8: T_max=8, T=8, two confirm/clarify -> T_eff=6 -> r_eff=-0.4286; F1=0.5 -> r_task=0
    r_eff = efficiency(turns=8, user_caused_turns=2, max_turns=8)
    assert r_eff == pytest.approx(-0.4286, abs=1e-4)
    assert compose(0.0, r_eff, 0.0) == pytest.approx(-0.064, abs=5e-4)


def test_efficiency_edges():
    assert efficiency(1, 0, 4) == 1.0
    assert efficiency(1, 5, 4) == 1.0  # T_eff floors at 1
    assert efficiency(40, 0, 4) == -1.0  # clipped
    assert efficiency(1, 0, 1) == 1.0 and efficiency(2, 0, 1) == -1.0  # T_max <= 1


def test_efficiency_does_not_charge_the_turns_the_budget_forces():
    # T_min turns are the reference solution's: r_eff runs from +1 at T_min to -1 at T_max
    assert efficiency(2, 0, 4, min_turns=2) == 1.0 and efficiency(1, 0, 4, min_turns=2) == 1.0
    assert efficiency(3, 0, 4, min_turns=2) == pytest.approx(0.0)
    assert efficiency(4, 0, 4, min_turns=2) == -1.0
    assert efficiency(4, 1, 4, min_turns=2) == pytest.approx(0.0)  # a customer-caused turn stays excused
    assert efficiency(3, 0, 7, min_turns=1) == efficiency(3, 0, 7)  # T_min = 1: the reference formula
    # the whole patience needed: any answer within it is efficient; T_min past T_max is capped
    assert efficiency(4, 0, 4, min_turns=4) == 1.0 and efficiency(4, 0, 4, min_turns=9) == 1.0


def test_hallucination_counts_each_invented_id_once():
    r, invented = hallucination(["a", "b", "b", "z"], {"a", "b"})
    assert invented == ["z"] and r == pytest.approx(-1 / 3)
    assert hallucination([], set()) == (0.0, [])


def test_compose_clips_and_failure():
    assert compose(1, 1, 1) == 1.0
    assert compose(-1, -1, -1) == -1.0
    f = Reward.failure(0.5, 0.0)
    assert f.total == -1.0 and f.task == -1.0 and not f.success and f.hard_fail
    assert f.to_dict()["success"] == 0.0
