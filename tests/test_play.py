"""`ecom-bench play` driven as a person would, through the real CLI entry point and stdin."""

from __future__ import annotations

import io
import re

import pytest

from ecom_bench.cli import main
from ecom_bench.play import WIDTH, Call, Meta, Note, Say, fold, layout, parse_arguments, parse_line
from ecom_bench.episode import new_episode
from ecom_bench.envs import get_env

from conftest import TEST_CATALOG_SIZE

ARGS = ["play", "cart", "-d", "3", "--seed", "0", "--index", "0", "--catalog-size", str(TEST_CATALOG_SIZE)]


def _play(monkeypatch, capsys, lines: list[str], *extra: str) -> str:
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(line + "\n" for line in lines)))
    assert main([*ARGS, *extra]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return out


def _targets(context) -> list[dict]:
    """The hidden goal of the episode the CLI plays (the same arguments build the same episode)."""
    return new_episode("cart", 3, 0, 0, context=context).problem.hidden_state()["goal"]["targets"]


def test_a_person_finishes_a_cart_episode_from_help(monkeypatch, capsys, context):
    first, second = _targets(context)
    out = _play(monkeypatch, capsys, [
        "/help", "/tools", "/hlep",
        f"/catalog_get_product {first['product_id']}",  # a tool's one required argument, bare
        f"/cart_add product={first['product_id']} quantity={first['quantity']}",  # wrong name: game goes on
        f"/cart_add product_id={first['product_id']} variant_id={first['variant_id']} "
        f"quantity={first['quantity']}",
        "I have added the first item; finding the second now.",
        f'/catalog_get_variants {{"product_id": "{second["product_id"]}"}}',
        f"/cart_add {second['product_id']} variant_id={second['variant_id']} quantity={second['quantity']}",
        "/checkout",
    ])
    # /help: how to talk and call a tool, with examples from the real specs; /tools: arguments
    assert "Talk to the customer: type a plain message" in out
    assert "/catalog_search query=" in out and '/catalog_search {"query": ' in out
    assert "Final answer (it ends the game and shows your score): /checkout" in out
    assert "variant_id (string or null, optional, default null): The variant's id" in out
    assert "quantity (integer, optional, default 1)" in out
    assert "Unknown command /hlep. Did you mean /help?" in out
    # the wrong argument name came back as an error with a hint, and cost neither a turn nor a call
    assert "TOOL ERROR (cart_add): invalid arguments to cart_add" in out
    assert "'product' is not an argument (did you mean product_id?)" in out
    assert "[turn 1/5, 1 tool call(s) left] > /cart_add product=" in out
    assert "[turn 1/5, 1 tool call(s) left] > /cart_add product_id=" in out
    assert "CUSTOMER: " in out and "RESULT (catalog_get_variants):" in out
    # the end: the reward breakdown, a success, no hard fail
    assert "=== Game over: answered ===" in out
    assert re.search(r"success\s+yes", out) and re.search(r"hard fail\s+no", out)
    assert re.search(r"task\s+\+1\.00", out) and re.search(r"total\s+\+0\.900", out)
    assert "Turns: 2, 2 needed within the tool budget. Ended: answered." in out
    # /help, /tools and the typo cost nothing: the first call still had the whole budget of 2
    assert "[turn 1/5, 2 tool call(s) left] > /catalog_get_product" in out
    assert max(len(line) for line in out.splitlines()) <= 200  # folded and wrapped: no 3,000-character line


def test_strict_mode_ends_the_game_on_a_bad_call(monkeypatch, capsys, context):
    first, _ = _targets(context)
    out = _play(monkeypatch, capsys, ["/help", f"/cart_add product={first['product_id']}", "never read"],
                "--strict")
    assert "STRICT mode (the published rule)" in out.split("CUSTOMER:")[0]  # said before the game
    assert "The episode has ended (strict mode)" in out
    assert re.search(r"total\s+-1\.000", out) and re.search(r"hard fail\s+yes: invalid tool call", out)
    assert "never read" not in out


def test_quit_and_end_of_input_leave_cleanly(monkeypatch, capsys, context):
    for lines in (["/quit", "never read"], []):  # /quit, then Ctrl-D (end of input) at the first prompt
        out = _play(monkeypatch, capsys, lines)
        assert "Game over: you left before a final answer" in out
        assert "Recorded as unfinished (not_finished)" in out and "never read" not in out


def test_ctrl_c_leaves_without_a_traceback(monkeypatch, capsys, context):
    class CtrlC(io.StringIO):
        def readline(self, *args: object) -> str:
            raise KeyboardInterrupt

    monkeypatch.setattr("sys.stdin", CtrlC())
    assert main(ARGS) == 0
    out, err = capsys.readouterr()
    assert "Recorded as unfinished" in out and "Traceback" not in out + err


def test_lines_parse_into_messages_calls_and_free_commands():
    specs = get_env("journey").toolkit_class().specs()
    assert parse_line("  ", specs) is None
    assert parse_line("hello there", specs) == Say("hello there")
    assert parse_line("/TOOLS cart_add", specs) == Meta("tools", "cart_add")
    assert parse_line("/exit", specs) == Meta("quit")
    assert parse_line("/Cart-Add P1", specs) == Call("cart_add", {"product_id": "P1"})
    assert parse_line("/cart_add {bad", specs) == Note(
        "Could not read the arguments to /cart_add: not JSON (Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1)). Nothing was sent; see /tools cart_add.")
    assert "Did you mean /cart_add" in parse_line("/cart_ad x=1", specs).text


@pytest.mark.parametrize("tool,raw,expected", [
    ("catalog_search", "query=usb c charger max_price=20 brand=null",
     {"query": "usb c charger", "max_price": 20, "brand": None}),
    ("catalog_search", 'query="42" limit=5', {"query": "42", "limit": 5}),
    ("cart_add", "product_id=123 quantity=2", {"product_id": "123", "quantity": 2}),  # a string stays text
    ("cart_add", "P1 variant_id=P1-v2", {"product_id": "P1", "variant_id": "P1-v2"}),
    ("ask_user", "Which size, S=small or M?", {"question": "Which size, S=small or M?"}),
    ("recommend_products", "product_ids=P1, P2", {"product_ids": ["P1", "P2"]}),
    ("recommend_products", 'product_ids=["P1"]', {"product_ids": ["P1"]}),
    ("cart_add", "produkt=P1 qty=two", {"produkt": "P1", "qty": "two"}),  # unknown names reach the schema
    ("checkout", "", {}),
])
def test_forgiving_arguments(tool, raw, expected):
    assert parse_arguments(get_env("journey").toolkit_class().specs()[tool], raw) == expected


def test_long_results_are_folded():
    title = "Sturdy steel widget " * 25  # 500 characters
    result = {"results": [{"product_id": f"P{i}", "title": title, "category": "c", "price": i}
                          for i in range(12)], "count": 12, "note": "n" * 3000}
    folded = fold(result)
    assert folded["results"][:1] == [{"product_id": "P0", "title": title[:160] + "... (500 characters)",
                                      "price": 0, "...": "1 more field"}]
    assert folded["results"][-1] == "... 7 more (/full shows all)" and len(folded["results"]) == 6
    assert folded["note"] == "n" * 1500 + "... (3000 characters)"  # one object's text is read, not skimmed
    shown, full = layout(folded), layout(result)
    assert max(len(line) for line in shown.splitlines()) <= WIDTH
    assert shown.count("\n") < 100 < full.count("\n")
    assert '"title": """' in shown  # long text is a wrapped block, not one long line
