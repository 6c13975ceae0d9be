"""Per-sample scores of every scripted agent, pinned: refactors of the episode loop must not move them.

The file `tests/data/pinned_scores.json` was written from the loop before it gained the
gymnasium contract; a deliberate change to any agent's score rewrites it with
`python tests/test_pinned_scores.py --write` and says why in the commit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


from ecom_bench.agents import get_policy
from ecom_bench.agents.adversarial import ADVERSARIAL_NAMES
from ecom_bench.envs import COLLECTIONS
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from red_team.exploits import EXPLOIT_ENVS, make_exploit

PINNED = Path(__file__).parent / "data" / "pinned_scores.json"
LEVELS = (0, 6, 12)
PER_CELL = 2  # episodes per (agent, env, d)
AGENTS = ("oracle", "heuristic", "random", *ADVERSARIAL_NAMES)


def _cells():
    for name in AGENTS:
        for env in COLLECTIONS["C8"]:
            yield name, env, (lambda e=env, n=name: get_policy(e, n))
    for name, envs in EXPLOIT_ENVS.items():
        for env in envs:
            yield f"exploit:{name}", env, (lambda e=env, n=name: make_exploit(n, e))


def scores(context) -> dict[str, list]:
    out: dict[str, list] = {}
    for name, env, make in _cells():
        for d in LEVELS:
            for i in range(PER_CELL):
                run = run_policy(new_episode(env, d, 0, i, context=context), make())
                r = run.result.reward
                out[f"{name}/{env}/d{d}/{i}"] = [round(r.total, 6), r.success, r.hard_fail, run.result.turns]
    return out


def test_scripted_agents_scores_are_pinned(context):
    pinned = json.loads(PINNED.read_text())
    now = scores(context)
    moved = {k: (pinned.get(k), v) for k, v in now.items() if pinned.get(k) != v}
    assert set(now) == set(pinned)
    assert not moved, f"{len(moved)} per-sample scores moved (pinned, now): {dict(list(moved.items())[:10])}"


if __name__ == "__main__" and "--write" in sys.argv:
    sys.path.insert(0, str(Path(__file__).parent))
    from conftest import TEST_SPEC  # noqa: E402  (sets the offline env and cache first)
    from ecom_bench.envs.context import load_context

    PINNED.write_text(json.dumps(scores(load_context(TEST_SPEC)), indent=0, sort_keys=True) + "\n")
    print(f"wrote {PINNED}")
