"""Invalid configuration fails fast, with a message that names the bad value.

Three fronts: the Python task functions, `inspect eval -T ...` on the command line
(a few subprocesses; each costs a few seconds), and the `ecom-bench` CLI (in-process
through `main`, plus one run of the installed script). Also: a damaged index cache
file is detected and rebuilt, including damage between the spot-checked rows.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import subprocess
import sys
from pathlib import Path

import faiss
import numpy as np
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai._util.error import PrerequisiteError

from conftest import TEST_CATALOG_SIZE
from ecom_bench import tasks
from ecom_bench.catalog.embedders import get_embedder
from ecom_bench.catalog.vector_index import index_cache_path, load_or_build_index
from ecom_bench.catalog.synthetic import generate_synthetic_catalog
from ecom_bench.cli import main
from ecom_bench.difficulty import Difficulty
from ecom_bench.tasks._errors import InputError

pytestmark = pytest.mark.reliability

BIN = Path(sys.executable).parent
FAST = {"samples": 2, "catalog_size": TEST_CATALOG_SIZE}
HAS_ST = importlib.util.find_spec("sentence_transformers") is not None
#: Without the optional extra an `st:` spec fails with the install hint (an ImportError) instead.
NEEDS_ST = pytest.mark.skipif(not HAS_ST, reason="needs the optional sentence-transformers extra")


# ------------------------------------------------------------------ Python task functions
@pytest.mark.parametrize("args,message", [
    ({"difficulty": -1}, "difficulty must be a non-negative integer, got -1"),
    ({"difficulty": 1.5}, "difficulty must be a non-negative integer, got 1.5"),
    ({"difficulty": "abc"}, "difficulty must be a non-negative integer, got 'abc'"),
    ({"difficulty": True}, "difficulty must be a non-negative integer, got True"),
    ({"difficulty": None}, "difficulty must be a non-negative integer, got None"),
    ({"difficulty": float("nan")}, "difficulty must be a non-negative integer, got nan"),
    ({"samples": 0}, "samples must be an integer >= 1, got 0"),
    ({"samples": -3}, "samples must be an integer >= 1, got -3"),
    ({"samples": "abc"}, "samples must be an integer >= 1, got 'abc'"),
    ({"samples": True}, "samples must be an integer >= 1, got True"),
    ({"seed": -1}, "seed must be an integer >= 0, got -1"),
    ({"seed": "x"}, "seed must be an integer >= 0, got 'x'"),
    ({"strict": "maybe"}, "strict must be true or false, got 'maybe'"),
    ({"strict": 1}, "strict must be true or false, got 1"),
    ({"catalog": "/no/such/file.parquet"}, "catalog path does not exist: '/no/such/file.parquet'"),
    ({"catalog": "./missing/catalog.jsonl"}, "catalog path does not exist: './missing/catalog.jsonl'"),
    ({"catalog": ""}, "catalog must be 'synthetic' or a local file, folder or dataset id, got ''"),
    ({"catalog": "   "}, "catalog must be 'synthetic' or a local file, folder or dataset id, got '   '"),
    ({"catalog_size": 5}, "catalog_size must be an integer >= 500, got 5"),
    ({"catalog_size": "abc"}, "catalog_size must be an integer >= 500, got 'abc'"),
    ({"catalog_size": -1}, "catalog_size must be an integer >= 500, got -1"),
    ({"catalog_seed": -1}, "catalog_seed must be an integer >= 0, got -1"),
    ({"embedder": "bogus"}, "unknown embedder spec 'bogus'"),
    ({"embedder": ""}, "unknown embedder spec ''"),
    ({"embedder": "st:"}, "unknown embedder spec 'st:'"),
    pytest.param({"embedder": "st:/no/such/model"}, "embedder model path does not exist: '/no/such/model'",
                 marks=NEEDS_ST),
    pytest.param({"embedder": "st:./no-such-model"}, "embedder model path does not exist: './no-such-model'",
                 marks=NEEDS_ST),
])
def test_task_parameters_fail_fast(args, message):
    with pytest.raises(ValueError) as e:
        tasks.cart(**{**FAST, **args})
    assert message in str(e.value)


@NEEDS_ST
def test_uncached_hub_embedder_names_the_model():
    """Offline, a hub id that is not in the local cache fails at task creation, not in a sample."""
    with pytest.raises(ValueError, match=r"embedder 'st:no-such-org/no-such-model' could not be loaded"):
        tasks.cart(**FAST, embedder="st:no-such-org/no-such-model")


@pytest.mark.parametrize("task_name", ["cart", "journey", "collection"])
def test_misspelt_parameters_are_refused_by_name(task_name):
    """Inspect would only warn and run the default (d = 0): a typo must not change what is measured."""
    with pytest.raises(ValueError) as e:
        getattr(tasks, task_name)(difficuly=6, **FAST)
    assert f"unknown parameter 'difficuly' (did you mean 'difficulty'?) for task '{task_name}'" in str(e.value)
    assert "it takes: " in str(e.value) and "embedder" in str(e.value)
    with pytest.raises(ValueError, match=r"unknown parameters 'colour', 'smaples' \(did you mean 'samples'\?\) "):
        tasks.cart(colour="red", smaples=3, catalog_size=TEST_CATALOG_SIZE)


def test_missing_catalogue_name_is_named():
    """Bad input leaves a task function as an Inspect PrerequisiteError (and ValueError); the cause is kept."""
    with pytest.raises(InputError, match="catalogue source not found: no-such-catalogue") as e:
        tasks.cart(**FAST, catalog="no-such-catalogue")
    assert isinstance(e.value, PrerequisiteError) and isinstance(e.value.__cause__, FileNotFoundError)


@pytest.mark.parametrize("envs,message", [
    ("C9", "unknown environment 'C9' in envs='C9'"),
    ("cart,carts", "unknown environment 'carts'"),
    ("", "envs must name a collection"),
    (" , ", "envs must name a collection"),
    ("cart,cart", "envs='cart,cart' names an environment twice"),
    ("cart,,tracking", "has an empty name between commas"),
    (None, "envs must name a collection (C1, C2, C4, C8) or a comma list of environments, got None"),
    (5, "got 5"),
    (["cart", "discovry"], "unknown environment 'discovry' in envs='cart,discovry' (did you mean 'discovery'?)"),
    ("c9", "unknown environment 'c9' in envs='c9'; environments:"),
])
def test_collection_envs_fail_fast(envs, message):
    with pytest.raises(ValueError) as e:
        tasks.collection(envs=envs, **FAST)
    assert message in str(e.value)


def test_collection_shared_parameters_are_validated_too():
    with pytest.raises(ValueError, match="samples must be an integer >= 1, got 0"):
        tasks.collection(envs="C2", samples=0, catalog_size=TEST_CATALOG_SIZE)
    with pytest.raises(ValueError, match="difficulty must be a non-negative integer, got -2"):
        tasks.collection(envs="C2", difficulty=-2, samples=2, catalog_size=TEST_CATALOG_SIZE)


# ------------------------------------------------------------------ inspect eval (subprocess)
def _small_jsonl(path: Path) -> Path:
    """A loaded catalogue of two leaf categories: too few for any bundle project."""
    rows = [{"parent_asin": f"P{i:03d}", "title": f"Wireless Mouse {i}", "price": 10 + i,
             "categories": ["Electronics", "Computers & Accessories", "Mice"]} for i in range(6)]
    rows += [{"parent_asin": f"K{i:03d}", "title": f"Fry Pan {i}", "price": 20 + i,
              "categories": ["Home & Kitchen", "Cookware", "Skillets"]} for i in range(6)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


_ST_MESSAGE = ("embedder 'st:nonexistent' could not be loaded" if HAS_ST
               else "SentenceTransformerEmbedder needs the optional 'st' extra")


@pytest.mark.parametrize("task,arg,display,message", [
    ("cart", "difficulty=abc", "full", "difficulty must be a non-negative integer, got 'abc'"),
    ("tracking", "difficuly=6", "none", "unknown parameter 'difficuly' (did you mean 'difficulty'?) for task "
                                        "'tracking'"),
    ("cart", "samples=0", "full", "samples must be an integer >= 1, got 0"),
    ("policy", "catalog=/no/such/catalog.parquet", "none", "catalog path does not exist: '/no/such/catalog.parquet'"),
    ("collection", "envs=C9", "full", "unknown environment 'C9'"),
    ("collection", "envs=cart,discovry", "none", "unknown environment 'discovry' in envs='cart,discovry'"),
    ("collection", "envs=", "none", "envs must name a collection (C1, C2, C4, C8) or a comma list of environments, "
                                    "got None"),
    ("cart", "embedder=st:nonexistent", "full", _ST_MESSAGE),
    ("bundle", "catalog={jsonl}", "full", "no bundle project has enough categories with in-stock products"),
])
def test_inspect_eval_cli_rejects_bad_parameters(tmp_path, task, arg, display, message):
    """The message alone, no traceback, exit 1 (also under --display none)."""
    arg = arg.format(jsonl=_small_jsonl(tmp_path / "small.jsonl"))
    cmd = [str(BIN / "inspect"), "eval", f"ecom_bench/{task}", "-T", f"catalog_size={TEST_CATALOG_SIZE}",
           "-T", "samples=2", "-T", arg, "--model", "ecom/oracle", "--log-dir", str(tmp_path), "--display", display]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "Traceback" not in output, output[-3000:]
    # Inspect prints it on stdout (wrapped by rich); a silenced display leaves it to stderr
    printed = proc.stdout if display == "full" else proc.stderr
    assert " ".join(printed.split()).startswith(message) and "\n\n" not in printed.strip(), output


def test_inspect_eval_cli_rejects_a_misspelt_scripted_model(tmp_path):
    proc = subprocess.run([str(BIN / "inspect"), "eval", "ecom_bench/cart", "--model", "ecom/orcale",
                           "--log-dir", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert " ".join(proc.stdout.split()).startswith("unknown scripted model 'ecom/orcale'; available: ecom/oracle")


def test_a_misspelt_task_name_gets_inspects_own_one_line(tmp_path):
    """Inspect alone resolves a task name (its registry, then files): the documented message, exit 1.
    `ecom-bench show carts` is where a misspelt name gets the closest ones."""
    proc = subprocess.run([str(BIN / "inspect"), "eval", "ecom_bench/carts", "--model", "ecom/oracle",
                           "--log-dir", str(tmp_path)], capture_output=True, text=True, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "Traceback" not in output, output
    assert "No inspect tasks were found at the specified paths." in " ".join(output.split())


@pytest.mark.parametrize("model,model_args,message", [
    ("ecom/orcale", {}, "unknown scripted model 'ecom/orcale'; available: ecom/oracle, ecom/heuristic"),
    ("ecom/oracle", {"temperature_x": 1}, "scripted model 'ecom/oracle' takes no model args, got: temperature_x"),
])
def test_scripted_model_names_and_args_are_checked(tmp_path, model, model_args, message):
    task = tasks.cart(samples=1, catalog_size=TEST_CATALOG_SIZE)
    with pytest.raises(ValueError) as e:
        inspect_eval(task, model=model, model_args=model_args, log_dir=str(tmp_path), display="none")
    assert message in str(e.value)


# ------------------------------------------------------------------ ecom-bench CLI
def _argparse_error(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv,message", [
    (["show", "cart", "-d", "-1"], "difficulty must be a non-negative integer, got '-1'"),
    (["show", "cart", "-d", "1.5"], "difficulty must be a non-negative integer, got '1.5'"),
    (["show", "cart", "-d", "abc"], "difficulty must be a non-negative integer, got 'abc'"),
    (["show", "cart", "--seed", "-1"], "argument --seed: must be an integer >= 0, got '-1'"),
    (["show", "cart", "--index", "-1"], "argument --index: must be an integer >= 0, got '-1'"),
    (["show", "cart", "--index", "x"], "argument --index: must be an integer >= 0, got 'x'"),
    (["run", "cart", "-n", "0"], "argument -n/--samples: must be an integer >= 1, got '0'"),
    (["run", "cart", "-n", "-3"], "argument -n/--samples: must be an integer >= 1, got '-3'"),
    (["run", "cart", "-n", "abc"], "argument -n/--samples: must be an integer >= 1, got 'abc'"),
    (["run", "cart", "--catalog-size", "abc"], "argument --catalog-size: invalid int value: 'abc'"),
    (["core-sweep", "cart", "-n", "0"], "argument -n/--samples: must be an integer >= 1, got '0'"),
    (["core-sweep", "cart", "-d", "0", "-4"], "difficulty must be a non-negative integer, got '-4'"),
    (["core-sweep", "cart", "--seed", "-1"], "argument --seed: must be an integer >= 0, got '-1'"),
    (["play", "cart", "--index", "-2"], "argument --index: must be an integer >= 0, got '-2'"),
    (["play", "cart", "-d", "true"], "difficulty must be a non-negative integer, got 'true'"),
    (["build-index", "--catalog-size", "abc"], "argument --catalog-size: invalid int value: 'abc'"),
    (["teleport"], "invalid choice: 'teleport'"),
    (["serve", "--port", "99999"], "argument --port: must be an integer between 0 and 65535, got '99999'"),
    (["show", "carts"], "argument ENV: unknown environment 'carts' (did you mean 'cart'?); environments: cart, "),
    (["run", "discovry", "-n", "1"], "unknown environment 'discovry' (did you mean 'discovery'?)"),
    (["play", "C8"], "unknown environment 'C8'; environments: cart, "),
])
def test_cli_argument_errors(capsys, argv, message):
    assert message in _argparse_error(capsys, argv)


@pytest.mark.parametrize("argv,message", [
    (["show", "cart", "--catalog-size", "5"], "catalog_size must be an integer >= 500, got 5"),
    (["run", "cart", "--catalog-size", "-5", "-n", "1"], "catalog_size must be an integer >= 500, got -5"),
    (["run", "cart", "--policy", "bogus", "-n", "1"], "no scripted policy 'bogus' for env 'cart'"),
    (["core-sweep", "C9"], "unknown environment 'C9'"),
    (["core-sweep", "trakcing"], "unknown environment 'trakcing' in envs='trakcing' (did you mean 'tracking'?)"),
    (["core-sweep", ""], "envs must name a collection"),
    (["core-sweep", "cart,cart"], "names an environment twice"),
    (["core-sweep", "cart", "--policies", "oracle", "bogus", "-n", "1"], "no scripted policy 'bogus'"),
    (["play", "cart", "--catalog", "/no/such.parquet"], "catalog path does not exist: '/no/such.parquet'"),
    (["build-index", "--catalog", ""], "catalog must be 'synthetic' or a local file, folder or dataset id"),
    (["build-index", "--catalog", "no-such-catalogue"], "catalogue source not found: no-such-catalogue"),
    (["build-index", "--embedder", "bogus"], "unknown embedder spec 'bogus'"),
    pytest.param(["build-index", "--embedder", "st:/no/such/model"],
                 "embedder model path does not exist: '/no/such/model'", marks=NEEDS_ST),
])
def test_cli_value_errors(capsys, argv, message):
    """Errors found after parsing: exit 2 with `ecom-bench: error: ...`, never a traceback."""
    assert main(argv) == 2
    out = capsys.readouterr()
    assert out.err.startswith("ecom-bench: error: ") and message in out.err, out.err
    assert "sweep" not in argv or "env " not in out.out  # fails before printing the table header


@pytest.mark.parametrize("argv,message", [
    (["run", "cart", "-n", "0"], "ecom-bench run: error: argument -n/--samples: must be an integer >= 1, got '0'"),
    (["run", "bundle", "-n", "1", "--catalog", "{jsonl}"],
     "ecom-bench: error: no bundle project has enough categories with in-stock products"),
])
def test_installed_cli_exits_non_zero_with_the_message(tmp_path, argv, message):
    """A usage error and an error found while generating: the last stderr line is the message, no traceback."""
    argv = [a.format(jsonl=_small_jsonl(tmp_path / "small.jsonl")) for a in argv]
    proc = subprocess.run([str(BIN / "ecom-bench"), *argv], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.splitlines()[-1].startswith(message), proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


# ------------------------------------------------------------------ catalogues too small for an env
def test_a_catalogue_too_small_for_an_env_is_named_not_a_hang():
    """Generators draw products until one fits: on a 10-product catalogue that must end in a clear error."""
    from ecom_bench.catalog import CatalogTooSparse
    from ecom_bench.catalog.search import SearchEngine
    from ecom_bench.envs import ENVIRONMENTS, get_env
    from ecom_bench.envs.context import EnvContext

    catalog = generate_synthetic_catalog(10, 0)
    context = EnvContext(catalog, SearchEngine(catalog, get_embedder()))
    outcomes = {}
    for env in ENVIRONMENTS:
        for d in (0, 12):
            try:
                get_env(env).generate(context, 7, Difficulty.from_level(d))
                outcomes.setdefault(env, "ok")
            except ValueError as e:  # CatalogTooSparse is one
                outcomes[env] = str(e)
    assert "has no in-stock product with variants and an in-stock compatible alternative" in outcomes["substitution"]
    assert "catalogue 'synthetic-10-s0' (10 products)" in outcomes["substitution"]
    assert "no bundle project has enough categories" in outcomes["bundle"]
    with pytest.raises(CatalogTooSparse, match="has no in-stock product with variants"):
        get_env("substitution").generate(context, 7, Difficulty.from_level(3))


def _leaves_context(tmp_path: Path, leaves: int):  # noqa: ANN202
    """A loaded catalogue of `leaves` leaf categories, 8 products each."""
    from ecom_bench.catalog.loaders import load_catalog
    from ecom_bench.catalog.search import SearchEngine
    from ecom_bench.envs.context import EnvContext

    rows = [{"parent_asin": f"C{c:02d}P{i:02d}", "title": f"Brand{i} Model {c}x{i} Gadget{c}", "price": 10 + i + c,
             "store": f"Brand{i % 3}", "categories": ["Things", f"Gadget{c}s"]} for c in range(leaves) for i in range(8)]
    path = tmp_path / f"leaves{leaves}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    catalog = load_catalog(str(path))
    return EnvContext(catalog, SearchEngine(catalog, get_embedder()))


@pytest.mark.parametrize("env", ["returns", "tracking"])
def test_an_order_history_needs_nine_leaf_categories_and_says_so(tmp_path, env):
    """The minimum docs/catalogue.md states, and the error names it with the catalogue's own count."""
    from ecom_bench.envs import get_env

    with pytest.raises(ValueError, match="needs at least 9 leaf categories, 8 for the account's older orders .*"
                                         "this catalogue has 8, 8 of them used by this world's orders"):
        get_env(env).generate(_leaves_context(tmp_path, 8), 0, Difficulty.from_level(6))
    for d in (0, 6, 12):
        get_env(env).generate(_leaves_context(tmp_path, 9), 0, Difficulty.from_level(d))


@pytest.mark.parametrize("d,fewest", [(0, 41), (2, 25), (4, 20), (6, 19), (12, 19)])
def test_two_order_histories_in_one_world_need_the_leaves_docs_state(tmp_path, d, fewest):
    """A journey's return and tracking requests: 9 leaves plus the first history's groups."""
    from ecom_bench.envs import get_env
    from ecom_bench.envs.base import new_world

    level = Difficulty.from_level(d)
    for leaves, works in ((fewest - 1, False), (fewest, True)):
        world = new_world(_leaves_context(tmp_path, leaves), "journey", 0, level)
        get_env("returns").build(world, 1, level, intent=0)
        if works:
            get_env("tracking").build(world, 2, level, intent=1)
        else:
            with pytest.raises(ValueError, match=f"this catalogue has {leaves}, .*used by this world's orders"):
                get_env("tracking").build(world, 2, level, intent=1)


def test_bundle_on_a_loaded_catalogue_says_it_needs_the_synthetic_leaves(tmp_path):
    from ecom_bench.envs import get_env

    with pytest.raises(ValueError, match="it has 0 of the 64 the projects name\\): bundle, and a journey that "
                                         "draws a bundle request, needs leaf categories named as the synthetic"):
        get_env("bundle").generate(_leaves_context(tmp_path, 9), 0, Difficulty.from_level(3))


# ------------------------------------------------------------------ corrupt index cache
def test_damaged_index_cache_is_detected_and_rebuilt(tmp_path, caplog):
    """Gaps of the test in test_search.py: empty, truncated, and damage between the spot checks."""
    catalog = generate_synthetic_catalog(600, 3)
    emb = get_embedder()
    path = index_cache_path(catalog, emb, "flat", tmp_path)
    load_or_build_index(catalog, emb, kind="flat", cache_dir=tmp_path)
    good = path.read_bytes()
    row = 4 * emb.dim  # bytes per stored vector; the vectors are the file's tail, in catalogue order
    start = len(good) - (len(catalog) - 7) * row  # row 7: not one of the spot-checked rows
    nan_row = good[:start] + np.full(emb.dim, np.nan, np.float32).tobytes() + good[start + row:]
    scaled = good[:start] + (np.frombuffer(good[start:start + row], np.float32) * 2).tobytes() + good[start + row:]
    for damaged, why in [(b"", "unreadable"), (good[: len(good) // 2], "unreadable"),
                         (nan_row, "stored vector 7 is damaged"), (scaled, "stored vector 7 is damaged")]:
        path.write_bytes(damaged)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="ecom_bench.catalog.vector_index"):
            rebuilt = load_or_build_index(catalog, emb, kind="flat", cache_dir=tmp_path)
        assert not rebuilt.from_cache and why in caplog.text
        assert path.read_bytes() == good  # rewritten
        assert load_or_build_index(catalog, emb, kind="flat", cache_dir=tmp_path).from_cache
    assert faiss.read_index(str(path)).ntotal == len(catalog)


def test_cache_path_taken_by_a_directory_still_gives_an_index(tmp_path, caplog):
    catalog = generate_synthetic_catalog(200, 4)
    emb = get_embedder()
    index_cache_path(catalog, emb, "flat", tmp_path).mkdir(parents=True)
    with caplog.at_level(logging.WARNING, logger="ecom_bench.catalog.vector_index"):
        vi = load_or_build_index(catalog, emb, kind="flat", cache_dir=tmp_path)
    assert not vi.from_cache and vi.ntotal == len(catalog) and "could not write" in caplog.text


def test_collection_takes_envs_as_inspect_splits_them():
    """`-T envs=cart,policy` reaches the task split at the comma, as a list: the same two envs."""
    task = tasks.collection(envs=["cart", "policy"], **FAST)
    assert {s.metadata["env"] for s in task.dataset} == {"cart", "policy"}


def test_cli_output_cut_short_by_its_reader_is_no_error():
    """`ecom-bench show ... | head -1`: the reader closes the pipe; no error line, exit 0."""
    cli = str(Path(sys.executable).parent / "ecom-bench")
    proc = subprocess.run(f"'{cli}' show cart -d 6 --index 2 --hidden --catalog-size {TEST_CATALOG_SIZE} | head -1",
                          shell=True, capture_output=True, text=True, timeout=300)
    assert proc.stdout.startswith("# E_CART") and proc.stderr == ""
