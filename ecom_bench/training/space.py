"""The OpenEnv Space entry point: the ``server`` command (``[project.scripts]``, what OpenEnv's
``uv run server`` and ``server/app.py`` run) serves the environments as ``ecom-bench serve`` does.

A Space is configured by its variables, not its command line: ECOM_BENCH_SERVE_ENVS (C8),
ECOM_BENCH_SERVE_DIFFICULTY (6, or "adaptive"), ECOM_BENCH_SERVE_MAX_SESSIONS,
ECOM_BENCH_CATALOG_SIZE, and HOST / PORT (0.0.0.0:8000, the port openenv.yaml names). Options
given on the command line (``server --envs C4 --port 9000``, any of ``ecom-bench serve``'s) win.
"""

from __future__ import annotations

import os
import sys

from ecom_bench import cli

#: (variable, `ecom-bench serve` option, default): how a Space's variables become the command line.
VARIABLES = (("HOST", "--host", "0.0.0.0"), ("PORT", "--port", "8000"),
             ("ECOM_BENCH_SERVE_ENVS", "--envs", "C8"), ("ECOM_BENCH_SERVE_DIFFICULTY", "--difficulty", "6"),
             ("ECOM_BENCH_SERVE_MAX_SESSIONS", "--max-sessions", None),
             ("ECOM_BENCH_CATALOG_SIZE", "--catalog-size", None))


def command_line(environ: dict[str, str], argv: list[str]) -> list[str]:
    """`ecom-bench serve`'s arguments: the variables' values, then `argv` (later options win)."""
    out = ["serve"]
    for variable, option, default in VARIABLES:
        value = environ.get(variable, default)
        if value:
            out += [option, value]
    return out + argv


def main(argv: list[str] | None = None) -> int:
    """Serve until interrupted; a bad value is one line and exit code 2, as for `ecom-bench`."""
    return cli.main(command_line(dict(os.environ), sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
