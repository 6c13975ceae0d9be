"""The package's import structure, read from its import graph (grimp): no cycles, the layers
hold, and the core loads none of the heavy libraries the fronts use.

Every import statement counts for cycles and layers, wherever it is written: one inside a
function (deferred) or under `if TYPE_CHECKING:` hides a cycle from the interpreter, not from
the design. No edge is exempt, not even a package `__init__` re-exporting its own submodules.
The heavy-library check asks what loading a module loads, so it follows only the imports that
run when a module is imported (module level, not under TYPE_CHECKING), through ecom_bench's own
modules; fresh interpreters confirm it and catch what a graph cannot see (a package read while
it is still initialising, a heavy library pulled in by a third-party one).

Layers, bottom up: catalog/ < world/ < domains/ < envs/ < agents/, with users/ over world/ and
domains/ (a customer may read a domain's records; no domain reads a customer). The shopping core
(world/) knows no domain: each domain keeps its state in the world through `World.state`. The
core is everything but the fronts (FRONTS); the fronts sit on top of it, and nothing in the core
imports them.
"""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from collections.abc import Iterable
from functools import cache
from itertools import pairwise
from pathlib import Path

import grimp
import pytest

import ecom_bench

PACKAGE = "ecom_bench"
PACKAGE_DIR = Path(ecom_bench.__file__).parent

#: The fronts over the core (direct children of ecom_bench): the Inspect face (tasks,
#: scorers, providers, and _registry, Inspect's entry point), the training front (gymnasium,
#: OpenEnv, TRL, Ray), the leaderboards (Inspect logs, plots), the command line, `play` and `demo`
#: (the browser page).
FRONTS = ("tasks", "scorers", "providers", "_registry", "training", "leaderboard", "cli", "play", "demo")
#: What the core must not load: the fronts' libraries, and those that load torch.
HEAVY = ("inspect_ai", "trl", "ray", "openenv", "transformers", "torch", "sentence_transformers", "accelerate",
         "gradio")
#: (lower, higher): nothing in `lower` imports anything in `higher`, directly or through other modules.
LAYERS = (
    ("catalog", "world"), ("catalog", "domains"), ("catalog", "users"), ("catalog", "envs"), ("catalog", "agents"),
    ("world", "domains"), ("world", "users"), ("world", "envs"), ("world", "agents"),
    ("domains", "users"), ("domains", "envs"), ("domains", "agents"),
    ("users", "envs"), ("users", "agents"),
    ("envs", "agents"),  # env policies speak `ecom_bench.conversation`; the registry over them is agents/
)


def _internal(module: str) -> bool:
    return module == PACKAGE or module.startswith(PACKAGE + ".")


def _core(module: str) -> bool:
    return module == PACKAGE or _internal(module) and module.split(".")[1] not in FRONTS


def _type_checking_only(node: ast.If) -> bool:
    """`if TYPE_CHECKING:` / `if typing.TYPE_CHECKING:`: a block only type checkers read."""
    test = node.test
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or \
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


@cache
def _graph() -> grimp.ImportGraph:
    """Every import of the package (external packages as single nodes)."""
    return grimp.build_graph(PACKAGE, include_external_packages=True, cache_dir=None)


def _source(module: str) -> Path:
    path = PACKAGE_DIR.joinpath(*module.split(".")[1:])
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _runs_on_import(module: str) -> set[int]:
    """Lines of `module`'s import statements that run when it is imported: not inside a function,
    not under `if TYPE_CHECKING:`."""
    lines: set[int] = set()

    def visit(nodes: Iterable[ast.AST]) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(node, ast.If) and _type_checking_only(node):
                visit(node.orelse)
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                lines.add(node.lineno)
            visit(ast.iter_child_nodes(node))

    visit(ast.parse(_source(module).read_text()).body)
    return lines


@cache
def _runtime_graph() -> grimp.ImportGraph:
    """The imports that run when each ecom_bench module is imported."""
    graph = grimp.build_graph(PACKAGE, include_external_packages=True, cache_dir=None)
    for importer in sorted(m for m in graph.modules if _internal(m)):
        runs = _runs_on_import(importer)
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            details = graph.get_import_details(importer=importer, imported=imported)
            if not {d["line_number"] for d in details} & runs:
                graph.remove_import(importer=importer, imported=imported)
    return graph


def _chain(graph: grimp.ImportGraph, chain: tuple[str, ...]) -> str:
    """`a:12 -> b:40 -> c`: each module with the line where it imports the next."""
    steps = []
    for importer, imported in pairwise(chain):
        lines = sorted({d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported)})
        steps.append(f"{importer}:{','.join(map(str, lines))}")
    return " -> ".join([*steps, chain[-1]])


def _import_cycles(graph: grimp.ImportGraph) -> list[tuple[str, ...]]:
    """One shortest cycle through each import that closes one, each cycle once (a, ..., a)."""
    found: dict[frozenset[str], tuple[str, ...]] = {}
    for importer in sorted(m for m in graph.modules if _internal(m)):
        for imported in sorted(m for m in graph.find_modules_directly_imported_by(importer) if _internal(m)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                found.setdefault(frozenset(back), (importer, *back))
    return list(found.values())


def test_no_import_cycles():
    graph = _graph()
    cycles = _import_cycles(graph)
    assert not cycles, "import cycles (module:line -> ...):\n" + "\n".join(_chain(graph, c) for c in cycles)


@pytest.mark.parametrize(("lower", "higher"), LAYERS, ids=[f"{lo}-not-{hi}" for lo, hi in LAYERS])
def test_lower_layer_imports_nothing_above_it(lower, higher):
    graph = _graph()
    chains = graph.find_shortest_chains(importer=f"{PACKAGE}.{lower}", imported=f"{PACKAGE}.{higher}")
    assert not chains, f"{lower}/ imports {higher}/:\n" + "\n".join(_chain(graph, c) for c in sorted(chains))


def test_core_imports_no_front():
    graph = _graph()
    core = sorted(m for m in graph.find_children(PACKAGE) if _core(m))
    chains = sorted(c for top in core for front in FRONTS
                    for c in graph.find_shortest_chains(importer=top, imported=f"{PACKAGE}.{front}"))
    assert not chains, "the core imports a front:\n" + "\n".join(_chain(graph, c) for c in chains)


def test_core_loads_no_heavy_library():
    graph = _runtime_graph()
    heavy = [lib for lib in HEAVY if lib in graph.modules]
    culprits: dict[tuple[str, str], tuple[str, ...]] = {}  # (last core module, its import) -> chain from it
    for module in sorted(m for m in graph.modules if _core(m)):
        for lib in heavy:
            chain = graph.find_shortest_chain(importer=module, imported=lib)
            if chain is not None:
                last = max(i for i, m in enumerate(chain) if _core(m))
                culprits.setdefault((chain[last], chain[last + 1]), chain[last:])
    assert not culprits, "loading the core loads a heavy library:\n" + "\n".join(
        _chain(graph, c) for c in culprits.values())


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("module", sorted(f"{PACKAGE}.{m.name}" for m in pkgutil.iter_modules([str(PACKAGE_DIR)])))
def test_module_imports_first_in_a_fresh_process(module):
    """Imported before anything else, as a user's first import would be: a name read from a package
    that is still initialising fails here, whatever the graph says."""
    done = _fresh(f"import {module}")
    assert done.returncode == 0, done.stderr[-2000:]


def test_core_loads_no_heavy_library_in_a_fresh_process():
    core = sorted(m for m in _graph().modules if _core(m))
    done = _fresh(f"import importlib, sys\nfor m in {core!r}: importlib.import_module(m)\n"
                  f"print(','.join(lib for lib in {HEAVY!r} if lib in sys.modules))")
    assert done.returncode == 0, done.stderr[-2000:]
    assert not done.stdout.strip(), (f"importing the core loaded {done.stdout.strip()}; "
                                     "test_core_loads_no_heavy_library names the chain if it runs through ecom_bench")
