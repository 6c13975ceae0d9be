import pytest

from ecom_bench.difficulty import Difficulty, validate_level
from ecom_bench.envs import get_env

SPEC_TABLE = {  # SPEC "The 12 axes", d = 0/3/6/9/12
    "n_constraints": (2, 3, 5, 6, 8),
    "k_rec": (3, 4, 5, 6, 7),
    "max_turns": (4, 5, 7, 8, 10),
    "top_k": (200, 170, 140, 110, 80),
    "n_orders": (1, 2, 4, 5, 7),
    "n_policy_clauses": (1, 2, 3, 4, 5),
    "tool_budget": (1, 2, 4, 5, 7),
}
SPEC_FLOATS = {
    "p_missing": (0.095, 0.40, 0.705, 0.786, 0.798),
    "p_noise": (0, 0.03, 0.06, 0.09, 0.12),
    "p_switch": (0.046, 0.16, 0.37, 0.53, 0.58),
    "eps_rank": (0, 0.06, 0.12, 0.18, 0.24),
    "p_oos": (0, 0.15, 0.30, 0.45, 0.50),
}


@pytest.mark.parametrize("i,d", list(enumerate((0, 3, 6, 9, 12))))
def test_axes_match_spec_table(i, d):
    axes = Difficulty.from_level(d)
    for name, values in SPEC_TABLE.items():
        assert getattr(axes, name) == values[i], name
    for name, values in SPEC_FLOATS.items():
        assert getattr(axes, name) == pytest.approx(values[i], abs=0.006), name


def test_cart_axes_match_spec():
    # docs/design.md E_CART table: items 1/2/3/4, variant required 21/66/93/99%, quantity>1 0/30/50/50%
    cart = get_env("cart")
    for d, items, p_var, p_qty in ((0, 1, 0.21, 0.0), (3, 2, 0.66, 0.3), (6, 3, 0.93, 0.5), (9, 4, 0.99, 0.5)):
        axes = cart.axis_values(Difficulty.from_level(d))
        assert axes["cart_items"] == items
        assert axes["p_variant"] == pytest.approx(p_var, abs=0.01)
        assert axes["p_quantity"] == pytest.approx(p_qty)


def test_no_upper_cap_and_monotone():
    prev = Difficulty.from_level(0)
    for d in range(1, 40):
        cur = Difficulty.from_level(d)
        assert cur.max_turns >= prev.max_turns and cur.p_missing >= prev.p_missing
        assert cur.top_k <= prev.top_k
        prev = cur
    assert Difficulty.from_level(100).n_constraints == 52


@pytest.mark.parametrize("bad", [-1, 1.5, "six", None, True, float("nan"), [3]])
def test_bad_levels_are_rejected_naming_the_value(bad):
    with pytest.raises(ValueError, match="difficulty must be a non-negative integer, got"):
        validate_level(bad)
    with pytest.raises(ValueError, match=repr(bad).replace("[", r"\[").replace("(", r"\(")):
        Difficulty.from_level(bad)


@pytest.mark.parametrize("good,value", [(6, 6), ("6", 6), (6.0, 6), (0, 0)])
def test_integral_values_are_accepted(good, value):
    assert validate_level(good) == value
