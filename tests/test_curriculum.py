"""The adaptive curriculum: the window rule, its presets and state, and simulations with real agents."""

from __future__ import annotations

import json
import math
import random

import pytest

from conftest import play_many
from ecom_bench.envs import COLLECTIONS
from ecom_bench.training import PRESETS, AdaptiveCurriculum, CurriculumConfig, EcomEnv


def simulate(curriculum: AdaptiveCurriculum, success_at, episodes: int, env: str = "cart", seed: int = 0) -> list[int]:
    """Play `episodes` synthetic episodes; returns h after each one."""
    rng = random.Random(seed)
    highs = []
    for _ in range(episodes):
        d = curriculum.sample(env, rng)
        curriculum.record(env, d, rng.random() < success_at(d))
        highs.append(curriculum.window(env)[1])
    return highs


def test_presets_are_the_published_values():
    assert PRESETS["ecomrlve"] == CurriculumConfig(0.9, 32, 4)
    assert PRESETS["rlve"] == CurriculumConfig(0.9, 128, 3)  # 4 live levels: h-3..h
    assert AdaptiveCurriculum("rlve", tau_num=64).config == CurriculumConfig(0.9, 64, 3)


def test_rule_step_by_step():
    c = AdaptiveCurriculum(tau_num=4, delta=2)
    assert c.window("cart") == (0, 0)
    for _ in range(3):
        assert not c.record("cart", 0, True)
    assert c.record("cart", 0, True) and c.window("cart") == (0, 1)
    # episodes below the frontier never count
    for _ in range(10):
        c.record("cart", 0, False)
    assert c.window("cart") == (0, 1) and c.windows["cart"].attempts == 0
    # a failed check resets the counters and keeps the window
    for ok in (True, True, True, False):
        c.record("cart", 1, ok)
    assert c.window("cart") == (0, 1) and c.windows["cart"].attempts == 0
    for h in (2, 3, 4):
        for _ in range(4):
            c.record("cart", h - 1, True)
        assert c.window("cart") == (max(0, h - 2), h)  # l = max(l, h - Δ), never falls
    assert c.windows["cart"].episodes == 4 + 10 + 4 + 12 and c.window("returns") == (0, 0)


def test_promotion_counts_success_never_the_shaped_reward():
    c = AdaptiveCurriculum()
    for bad in (0.8, 1.0, -1, "yes"):
        with pytest.raises(TypeError, match="success"):
            c.record("cart", 0, bad)


def test_settings_are_validated():
    for bad in ({"tau_acc": 0}, {"tau_acc": 1.5}, {"tau_num": 0}, {"delta": -1}, {"max_level": -2}):
        with pytest.raises(ValueError):
            AdaptiveCurriculum(**bad)
    with pytest.raises(ValueError, match="preset"):
        AdaptiveCurriculum("rlvr")
    with pytest.raises(ValueError, match="setting"):
        AdaptiveCurriculum(tau=3)
    with pytest.raises(ValueError, match="nope"):
        AdaptiveCurriculum().window("nope")


def test_state_round_trips_through_json():
    c = AdaptiveCurriculum("rlve", tau_num=8)
    simulate(c, lambda d: 0.97, 300, env="discovery")
    simulate(c, lambda d: 0.5, 50, env="cart")
    state = json.loads(json.dumps(c.state_dict()))
    back = AdaptiveCurriculum.from_state_dict(state)
    assert back.state_dict() == c.state_dict() and back.config == c.config
    # and it goes on exactly as the original would
    assert simulate(back, lambda d: 0.97, 100, env="discovery", seed=5) == simulate(c, lambda d: 0.97, 100,
                                                                                  env="discovery", seed=5)


@pytest.mark.parametrize("preset", ["ecomrlve", "rlve"])
def test_synthetic_policy_climbs_to_its_frontier_and_plateaus(preset):
    """Success falls with d (≈1 below d = 6, ≈0 above): h climbs to the frontier and stays there."""
    frontier = 6
    c = AdaptiveCurriculum(preset)
    highs = simulate(c, lambda d: 1 / (1 + math.exp(2.5 * (d - frontier))), 40_000)
    # reached the frontier, and for the second half of the run never left its neighbourhood
    assert max(highs) in (frontier, frontier + 1)
    assert all(frontier - 1 <= h <= frontier + 1 for h in highs[len(highs) // 2:])
    low, high = c.window("cart")
    assert high - low == PRESETS[preset].delta


def test_random_is_never_promoted_past_one_on_discovery(context):
    env = EcomEnv("discovery", "adaptive", curriculum=AdaptiveCurriculum(tau_num=16), context=context)
    play_many(env, "random", 160)
    assert env.curriculum.windows["discovery"].episodes == 160
    assert env.curriculum.window("discovery")[1] <= 1


@pytest.mark.parametrize("env_name", COLLECTIONS["C8"])
def test_oracle_climbs_every_env(context, env_name):
    env = EcomEnv(env_name, "adaptive", curriculum=AdaptiveCurriculum(tau_num=4), context=context)
    play_many(env, "oracle", 30)
    assert env.curriculum.window(env_name)[1] >= 3


def test_collection_sampler_shares_one_curriculum_per_env(context):
    curriculum = AdaptiveCurriculum(tau_num=2)
    env = EcomEnv("C2", "adaptive", curriculum=curriculum, context=context)
    play_many(env, "oracle", 24, seed=3)
    assert set(curriculum.windows) == set(COLLECTIONS["C2"])
    assert sum(w.episodes for w in curriculum.windows.values()) == 24
    assert all(w.high >= 1 for w in curriculum.windows.values())


def _state(**window) -> dict:
    c = AdaptiveCurriculum(tau_num=4)
    for _ in range(4):
        c.record("cart", 0, True)
    state = c.state_dict()
    state["windows"]["cart"].update(window)
    return state


@pytest.mark.parametrize(("change", "words"), [
    (lambda s: s["windows"]["cart"].update(low=3), "windows.cart.low (3) is above windows.cart.high (1)"),
    (lambda s: s["windows"]["cart"].update(high=-1), "windows.cart.high must be an integer >= 0, got -1"),
    (lambda s: s["windows"]["cart"].update(attempts=1.5), "windows.cart.attempts must be an integer >= 0"),
    (lambda s: s["windows"]["cart"].update(successes=9), "windows.cart.successes (9) is above windows.cart.attempts"),
    (lambda s: s["windows"]["cart"].pop("promotions"), "windows.cart: missing field(s) ['promotions']"),
    (lambda s: s["windows"]["cart"].update(streak=2), "windows.cart: unknown field(s) ['streak']"),
    (lambda s: s["windows"].update(shoes=s["windows"]["cart"]), "windows.shoes: unknown environment 'shoes'"),
    (lambda s: s["windows"].update(C2=s["windows"]["cart"]), "windows.C2: a window belongs to one environment"),
    (lambda s: s["config"].update(tau_acc=0), "config.tau_acc must be in (0, 1]"),
    (lambda s: s["config"].update(tau_num="32"), "config.tau_num must be an integer >= 1"),
    (lambda s: s["config"].update(max_level=0), "windows.cart.high (1) is above config.max_level (0)"),
    (lambda s: s["config"].update(tau=3), "config: unknown setting(s) ['tau']"),
    (lambda s: s.pop("windows"), "exactly 'config' and 'windows'"),
])
def test_from_state_dict_refuses_bad_state_naming_the_field(change, words):
    state = _state()
    change(state)
    with pytest.raises(ValueError) as refused:
        AdaptiveCurriculum.from_state_dict(state)
    assert words in str(refused.value)
    kept = AdaptiveCurriculum(tau_num=4)
    kept.record("cart", 0, True)
    before = kept.state_dict()
    with pytest.raises(ValueError):
        kept.load_state_dict(state)
    assert kept.state_dict() == before  # a refused state changes nothing


def test_load_state_dict_replaces_in_place_and_files_are_written_atomically(tmp_path):
    from ecom_bench.training.curriculum import load_state, save_state

    shared = AdaptiveCurriculum()
    holder = EcomEnv("cart", "adaptive", curriculum=shared)
    shared.load_state_dict(_state())
    assert holder.curriculum is shared and shared.window("cart") == (0, 1) and shared.config.tau_num == 4
    path = tmp_path / "curriculum.json"
    save_state(shared.state_dict(), path)
    assert load_state(path).state_dict() == shared.state_dict()
    assert [p.name for p in tmp_path.iterdir()] == ["curriculum.json"]  # no temporary left behind
    path.write_text("{")
    with pytest.raises(ValueError, match="curriculum.json: not JSON"):
        load_state(path)
    with pytest.raises(ValueError, match="one environment"):
        shared.window("C2")
