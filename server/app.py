"""The OpenEnv server of ecom-bench, where OpenEnv's tools look for it (`openenv validate`, a Space).

    uvicorn server.app:app --host 0.0.0.0 --port 8000   # the app, configured by ECOM_BENCH_SERVE_* variables
    python -m server.app                                # the same through `ecom-bench serve` (its options work)
    uv run server                                       # the [project.scripts] entry point: the same

The app is `ecom_bench.training.server`'s (openenv-core's create_app over the environments); it
is built on first use, so importing this module loads no catalogue.
"""

from __future__ import annotations

import sys
from typing import Any

from ecom_bench.training import space


def main(argv: list[str] | None = None) -> int:
    """Serve the environments (`ecom_bench.training.space.main`: the Space's variables, then `argv`)."""
    return space.main(argv)


def __getattr__(name: str) -> Any:
    """`app`: the module-level app of `ecom_bench.training.server`, built when first asked for."""
    if name == "app":
        from ecom_bench.training import server

        return server.app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["main"]  # and `app`, on first use

if __name__ == "__main__":
    sys.exit(main())
