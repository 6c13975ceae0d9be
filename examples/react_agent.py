"""Evaluate your own agent: Inspect's `react()` with a custom prompt, on any environment.

    inspect eval examples/react_agent.py --model openai/gpt-4o -T env=cart -T difficulty=3
    python examples/react_agent.py --model ecom/oracle --env journey --samples 2   # offline

The agent takes the agent's turns of each episode. It reaches the shop through
`ecom_tools()` (each tool call is one step of the episode); a plain-text reply is its
message to the customer, who answers before the agent runs again; the env's final-answer
tool ends the episode. react() runs with `submit=False`: its submit tool would answer every
plain-text reply with a "continue" prompt instead of letting the customer read it.
`ecom/oracle` is a scripted model (it follows the env's reference policy), so this runs
without a key or a network and scores what the built-in solver scores.
"""

from __future__ import annotations

import argparse

from inspect_ai import Task, eval, task
from inspect_ai.agent import Agent, react

from ecom_bench.envs.context import DEFAULT_CATALOG_SIZE
from ecom_bench.tasks import ecom_tools, env_task

PROMPT = """You work for an online store's customer service. Read the customer's request carefully,
ask about what matters to them before acting, check every product you name with a tool, and
keep your messages short. Finish with the environment's final-answer tool."""


def shop_agent(prompt: str = PROMPT) -> Agent:
    """react() with our prompt, the episode's tools, and no submit tool (the final-answer tool ends the episode)."""
    return react(prompt=prompt, tools=[ecom_tools()], submit=False)


@task
def react_agent(env: str = "cart", difficulty: int = 0, samples: int = 10,
                catalog_size: int = DEFAULT_CATALOG_SIZE) -> Task:
    """`env`'s task with `shop_agent()` taking the agent's turns."""
    return env_task(env, difficulty=difficulty, samples=samples, catalog_size=catalog_size, agent=shop_agent())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="ecom/oracle")
    parser.add_argument("--env", default="cart")
    parser.add_argument("--difficulty", type=int, default=0)
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--log-dir", default="logs")
    args = parser.parse_args()
    [log] = eval(react_agent(args.env, args.difficulty, args.samples), model=args.model, log_dir=args.log_dir,
                 display="none")
    if log.status != "success":
        raise SystemExit(f"evaluation {log.status}: {log.error.message if log.error else ''}")
    for sample in log.samples or []:
        scores = " ".join(f"{name}={score.value}" for name, score in (sample.scores or {}).items())
        print(f"{sample.id} {scores}")
    print(f"log: {log.location}")


if __name__ == "__main__":
    main()
