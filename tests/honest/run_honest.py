"""Run the honest agents and report success, mean r_total and every failure.

    .venv/bin/python -m tests.honest.run_honest --envs tracking returns -n 20
    .venv/bin/python -m tests.honest.run_honest --envs cart --d 6 --index 3 --show   # one episode, full transcript
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import traceback

from .common import run_agent

AGENTS = {
    "cart": ("tests.honest.cart", "CartAgent"),
    "discovery": ("tests.honest.discovery", "DiscoveryAgent"),
    "substitution": ("tests.honest.substitution", "SubstitutionAgent"),
    "returns": ("tests.honest.returns", "ReturnsAgent"),
    "tracking": ("tests.honest.tracking", "TrackingAgent"),
    "policy": ("tests.honest.policy", "PolicyAgent"),
    "bundle": ("tests.honest.bundle", "BundleAgent"),
}


def agent_class(env: str):
    mod, cls = AGENTS[env]
    return getattr(importlib.import_module(mod), cls)


def fmt_turns(s, last: int | None = 8, width: int = 600) -> str:
    turns = s.transcript if last is None else s.transcript[-last:]
    out = []
    for t in turns:
        txt = t.text if len(t.text) <= width else t.text[:width] + " ..."
        out.append(f"    [{t.role}] {txt}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--envs", nargs="+", default=["cart", "discovery", "substitution", "returns", "tracking", "policy", "bundle"])
    ap.add_argument("--d", nargs="+", type=int, default=[0, 3, 6, 9, 12])
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=5000)
    ap.add_argument("--index", type=int, nargs="+", default=None, help="run only these indices")
    ap.add_argument("--show", action="store_true", help="print every transcript in full")
    ap.add_argument("--quiet", action="store_true", help="no failure details")
    ap.add_argument("--last", type=int, default=8, help="transcript turns shown per failure")
    ap.add_argument("--dump", default=None, help="write every episode (json lines) here")
    args = ap.parse_args(argv)

    dump = open(args.dump, "w") if args.dump else None
    table = []
    for env in args.envs:
        cls = agent_class(env)
        for d in args.d:
            idxs = args.index if args.index is not None else range(args.n)
            succ, tot, n, crashed = 0, 0.0, 0, 0
            fails = []
            t0 = time.time()
            for i in idxs:
                try:
                    s = run_agent(cls, env, d, args.seed, i)
                except Exception:
                    crashed += 1
                    tb = traceback.format_exc().strip().splitlines()
                    print(f"!! {env} d{d} i{i}: run crashed: " + " | ".join(tb[-3:]), file=sys.stderr)
                    continue
                r = s.result_line()
                n += 1
                succ += r["success"]
                tot += r["r_total"]
                if dump:
                    dump.write(json.dumps({**r, "transcript": [(t.role, t.text) for t in s.transcript]}) + "\n")
                if args.show:
                    print(f"===== {r['id']} success={r['success']} r_total={r['r_total']:+.3f}")
                    print(fmt_turns(s, None, 3000))
                    print("  " + r["explanation"].replace("\n", "\n  "))
                elif not r["success"]:
                    fails.append((r, s))
            dt_ = time.time() - t0
            rate = succ / n if n else float("nan")
            mean = tot / n if n else float("nan")
            table.append((env, d, n, rate, mean, crashed))
            print(f"## {env} d={d}: success {succ}/{n} = {rate:.2f}, mean r_total {mean:+.3f}"
                  f"{f', {crashed} crashed' if crashed else ''} ({dt_:.0f}s)", flush=True)
            if not args.quiet:
                for r, s in fails:
                    print(f"-- FAIL {r['id']} r_total={r['r_total']:+.3f} end={r['end']}")
                    print("   " + r["explanation"].replace("\n", "\n   "))
                    print(fmt_turns(s, args.last))
                sys.stdout.flush()
    print("\nenv            d   n  success  mean_r_total")
    for env, d, n, rate, mean, crashed in table:
        print(f"{env:13s} {d:2d} {n:3d}   {rate:5.2f}     {mean:+.3f}{'  crashed ' + str(crashed) if crashed else ''}")
    if dump:
        dump.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
