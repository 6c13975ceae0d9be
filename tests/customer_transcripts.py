"""Every customer message of the scripted agents' episodes, pinned: the customer's wording must not drift.

`python tests/customer_transcripts.py --write` rewrites `tests/data/customer_transcripts.json`
(after a deliberate change of what a customer says; say why in the commit). `--out PATH`
writes a dump elsewhere (with `--full`: every scripted agent, more levels and seeds).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ecom_bench.agents import get_policy
from ecom_bench.agents.adversarial import ADVERSARIAL_NAMES
from ecom_bench.envs import env_names
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy

PINNED = Path(__file__).parent / "data" / "customer_transcripts.json"
AGENTS = ("oracle", "heuristic", "random")
LEVELS = (0, 6, 12)
PER_CELL = 2


def transcripts(context, agents=AGENTS, levels=LEVELS, per_cell=PER_CELL, seeds=(0,)) -> dict[str, list[Any]]:
    """(agent/env/d/seed/index) -> every customer message of that episode: text, act, revealed, end."""
    out: dict[str, list[Any]] = {}
    for env in env_names():
        for name in agents:
            for d in levels:
                for seed in seeds:
                    for i in range(per_cell):
                        episode = new_episode(env, d, seed, i, context=context)
                        run_policy(episode, get_policy(env, name))
                        out[f"{name}/{env}/d{d}/s{seed}/{i}"] = [m.to_dict() for m in episode.user_messages]
    return out


def dump(data: dict[str, list[Any]]) -> str:
    return json.dumps(data, indent=0, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    from conftest import TEST_SPEC  # noqa: E402  (sets the offline env and cache first)
    from ecom_bench.envs.context import load_context

    ctx = load_context(TEST_SPEC)
    if "--full" in sys.argv:
        data = transcripts(ctx, ("oracle", "heuristic", "random", *ADVERSARIAL_NAMES), (0, 3, 6, 9, 12), 2, (0, 1))
    else:
        data = transcripts(ctx)
    path = Path(sys.argv[sys.argv.index("--out") + 1]) if "--out" in sys.argv else PINNED
    if "--write" in sys.argv or "--out" in sys.argv:
        path.write_text(dump(data))
        print(f"wrote {path}: {len(data)} episodes, {sum(map(len, data.values()))} messages")
