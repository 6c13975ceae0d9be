"""The shape of an episode, per env and d, from the scripted agents: what a trainer sizes by.

    .venv/bin/python benchmarks/episode_shape.py [-n 20] [-d 0 3 6 9 12] [--envs C8]

For each (env, d) it plays `n` episodes of each scripted agent (the env's own: oracle,
heuristic, random, ...; and the generic adversarial ones) through the async rollout driver
and prints:

* the realised reward range: min / mean / max of r_total over all agents' episodes;
* model calls per episode (steps) and the conversation's length at the last call in
  characters (every message's text and tool-call JSON, plus the tool schemas' JSON), median,
  p95 and max, over the oracle's and the heuristic's episodes (the runs a trained policy
  sits between; random and the adversarial agents end early);
* tokens at the last call, p95 and max, by the LLaMA-2 tokenizer that ships inside the
  `wordllama` wheel (no download; a chat template adds a few tokens per message, and a
  larger-vocabulary tokenizer such as Qwen's gives somewhat fewer), and the context length
  recommended for d: the max over envs rounded up to a power of two, with room for one more
  generation of `--generation-tokens`;
* the process's memory: resident set after loading the catalogue context, and its peak.

Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
from pathlib import Path
from typing import Any


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _conversation_text(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    parts = [json.dumps(tools)]
    for m in messages:
        parts.append(m.get("content") or "")
        parts += [c["function"]["name"] + c["function"]["arguments"] for c in m.get("tool_calls") or ()]
    return "\n".join(parts)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", "--episodes", type=int, default=20, help="episodes per (env, d, agent)")
    ap.add_argument("-d", "--difficulties", type=int, nargs="+", default=[0, 3, 6, 9, 12])
    ap.add_argument("--envs", default="C8")
    ap.add_argument("--generation-tokens", type=int, default=1024, help="room left for the next generation")
    args = ap.parse_args()
    os.environ.setdefault("ECOM_BENCH_CACHE", tempfile.mkdtemp(prefix="ecom-bench-bench-"))

    import wordllama
    from tokenizers import Tokenizer

    from ecom_bench.agents.adversarial import ADVERSARIAL
    from ecom_bench.envs import get_env, resolve_envs
    from ecom_bench.envs.context import load_context
    from ecom_bench.episode import new_episode
    from ecom_bench.training.async_rollouts import openai_tools, rollout_async

    base_rss = _rss_mb()
    context = load_context()
    context.search_engine.warm()
    loaded_rss = _rss_mb()
    tokenizer = Tokenizer.from_file(str(Path(wordllama.__file__).parent / "tokenizers"
                                        / "l2_supercat_tokenizer_config.json"))
    names = resolve_envs(args.envs)
    rows = []
    for env in names:
        agents = sorted(get_env(env).policies) + sorted(ADVERSARIAL)
        tools = openai_tools(new_episode(env, 0, context=context))
        for d in args.difficulties:
            rewards: list[float] = []
            calls: list[int] = []
            chars: list[int] = []
            tokens: list[int] = []
            for agent in agents:
                traces = rollout_async(agent, args.episodes, env, d, context=context, concurrency=args.episodes)
                rewards += [t.reward for t in traces]
                if agent in ("oracle", "heuristic"):
                    for t in traces:
                        text = _conversation_text(t.messages, tools)
                        calls.append(t.steps)
                        chars.append(len(text))
                        tokens.append(len(tokenizer.encode(text).ids))
            rows.append((env, d, min(rewards), statistics.mean(rewards), max(rewards), calls, chars, tokens))
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"\n{args.episodes} episodes per (env, d, agent); catalogue {len(context.catalog)} products\n")
    print("| env | d | r_total min | mean | max | model calls median / p95 / max "
          "| chars median / p95 / max | tokens p95 / max |")
    print("|---|---:|---:|---:|---:|---|---|---|")
    for env, d, low, mean, high, calls, chars, tokens in rows:
        print(f"| {env} | {d} | {low:+.2f} | {mean:+.2f} | {high:+.2f} "
              f"| {statistics.median(calls):g} / {_pct(calls, 0.95):g} / {max(calls)} "
              f"| {statistics.median(chars):,.0f} / {_pct(chars, 0.95):,.0f} / {max(chars):,} "
              f"| {_pct(tokens, 0.95):,.0f} / {max(tokens):,} |")
    print("\n| d | longest conversation (tokens) | recommended context |")
    print("|---:|---:|---:|")
    for d in args.difficulties:
        longest = max(max(r[7]) for r in rows if r[1] == d)
        need = longest + args.generation_tokens
        print(f"| {d} | {longest:,} | {1 << (need - 1).bit_length():,} |")
    print(f"\nmemory: {base_rss:.0f} MB after imports, {loaded_rss:.0f} MB with the catalogue context loaded, "
          f"peak {peak_rss:.0f} MB after all episodes")


if __name__ == "__main__":
    main()
