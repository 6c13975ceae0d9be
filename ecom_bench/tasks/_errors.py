"""Bad input to the Inspect fronts, printed the way Inspect prints its own prerequisite errors.

A parameter error raised while Inspect creates a task or a model would otherwise reach the user
as the last line of a traceback of a few hundred lines.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import rich
from inspect_ai._util.error import PrerequisiteError
from rich.markup import escape


class InputError(PrerequisiteError, ValueError):
    """Bad input to an Inspect front: a `-T` value, catalogue or embedder, an `ecom/` model name or `-M` arg.

    A PrerequisiteError, so `inspect eval` prints the message alone and exits 1 instead of a
    traceback ending in it; a ValueError, so Python callers catch it as before.
    """

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        self.message = escape(message)  # Inspect prints it with rich, which would read "[st]" as markup


@contextlib.contextmanager
def input_errors() -> Iterator[None]:
    """Re-raise what bad input raises (while a task or a scripted model is built) as an `InputError`.

    The same rule as the `ecom-bench` CLI: ValueError (a bad value, a catalogue lacking what an
    env needs), OSError (a missing file or model), ImportError (a missing optional extra). The
    original stays the `__cause__`, so a Python caller still has its traceback. Inspect prints
    the message through its rich console, which `--display none` silences: then it goes to
    stderr here, or the run would fail without a word.
    """
    try:
        yield
    except InputError:
        raise
    except (ValueError, OSError, ImportError) as e:
        error = InputError(str(e) or type(e).__name__)
        if rich.get_console().quiet:
            print(error, file=sys.stderr, flush=True)
        raise error from e
