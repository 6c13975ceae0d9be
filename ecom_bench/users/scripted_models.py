"""Scripted customer models: stand-ins for an LLM wording the customer, one per behaviour the
guards of `users.llm` must handle. Each reads the `build_prompt` messages and answers as a model
would, deterministically and offline (tests, the `ecom-user/<name>` Inspect provider).

* `faithful`: the draft reworded (greetings swapped, sentences in another order), every fact kept;
* `leaky`: the draft plus a withheld value;  `empty`: nothing;
* `early_goodbye`: the draft plus a goodbye, whatever the decision;
* `invented_id`: the draft plus an order number nobody mentioned;
* `out_of_character`: the draft, introduced as a language model would.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from ecom_bench.users.llm import DRAFT_FENCE, ChatMessages

INVENTED_ORDER_ID = "ORD-999999"
_SWAPS = {"Hi": "Hello", "Hello": "Hi", "Hey": "Hello", "Thanks": "Thank you", "Okay": "OK", "Great": "Good"}
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _prompt(messages: ChatMessages) -> str:
    return messages[-1]["content"]


def draft(messages: ChatMessages) -> str:
    """The reference draft in a customer prompt."""
    return _prompt(messages).split(DRAFT_FENCE)[1].strip("\n")


def section(messages: ChatMessages, title: str) -> list[str]:
    """The items of a prompt's list (`title`: "Must say", "Must not say")."""
    lines = _prompt(messages).splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(title) and line[len(title):][:1] in (" ", ":")), None)
    if start is None:
        return []
    items = []
    for line in lines[start + 1:]:
        if not line.startswith("- "):
            break
        items.append(line[2:])
    return items


def reword(text: str) -> str:
    """The same message in other words: greeting words swapped, its sentences in reverse order
    (the last sentence first) when there are two or three, every value kept."""
    swapped = re.sub(r"\b(" + "|".join(_SWAPS) + r")\b", lambda m: _SWAPS[m.group(1)], text)
    sentences = _SENTENCE.split(swapped)
    if 2 <= len(sentences) <= 3 and all(s.rstrip()[-1:] in ".!?" for s in sentences):
        return " ".join(reversed(sentences))
    return swapped


async def faithful(messages: ChatMessages) -> str:
    return reword(draft(messages))


async def leaky(messages: ChatMessages) -> str:
    secrets = section(messages, "Must not say")
    return draft(messages) + (f" Oh, and it's {secrets[0]}." if secrets else "")


async def empty(messages: ChatMessages) -> str:
    return "  \n"


async def early_goodbye(messages: ChatMessages) -> str:
    return draft(messages) + " Anyway, goodbye!"


async def invented_id(messages: ChatMessages) -> str:
    return f"{draft(messages)} It's order {INVENTED_ORDER_ID}, I think."


async def out_of_character(messages: ChatMessages) -> str:
    return f"As an AI language model, here is the customer's message: {draft(messages)}"


SCRIPTED_CUSTOMERS: dict[str, Callable[[ChatMessages], Awaitable[str]]] = {
    "faithful": faithful, "leaky": leaky, "empty": empty, "early_goodbye": early_goodbye,
    "invented_id": invented_id, "out_of_character": out_of_character,
}

__all__ = ["INVENTED_ORDER_ID", "SCRIPTED_CUSTOMERS", "draft", "reword", "section"]
