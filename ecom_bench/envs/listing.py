"""The registered environments as Markdown tables (`ecom-bench envs`; the README's tables are its output)."""

from __future__ import annotations

from ecom_bench.envs import env_names, get_env


def tools_table() -> str:
    """env | tools, the final answer last."""
    rows = ["| env | tools (the last is the final answer) |", "|---|---|"]
    for name in env_names():
        env = get_env(name)
        if env.final_tool is None:
            rows.append(f"| {name} | the union of its requests' envs' tools; each request's own final-answer tool |")
        else:
            rows.append(f"| {name} | {', '.join(env.tool_names)} |")
    return "\n".join(rows)


def summary_table() -> str:
    """env | what the agent must do | own difficulty axes."""
    rows = ["| env | task | own difficulty axes |", "|---|---|---|"]
    for name in env_names():
        env = get_env(name)
        axes = "; ".join(f"{a.name} = {a.schedule}" for a in env.axes) or "the shared ones only"
        rows.append(f"| {name} | {env.summary} | {axes} |")
    return "\n".join(rows)


def axes_table() -> str:
    """env axis | schedule | d = 0/3/6/9/12 | what it controls."""
    rows = ["| env: axis | schedule | d = 0/3/6/9/12 | controls |", "|---|---|---|---|"]
    for name in env_names():
        for axis in get_env(name).axes:
            values = "/".join(_short(axis.at(d)) for d in (0, 3, 6, 9, 12))
            rows.append(f"| {name}: {axis.name} | {axis.schedule} | {values} | {axis.description} |")
    return "\n".join(rows)


def _short(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".lstrip("0") if value < 1 else f"{value:.2f}"


__all__ = ["axes_table", "summary_table", "tools_table"]
