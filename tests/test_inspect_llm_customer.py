"""The LLM customer on the Inspect front: the scripted customer models as a provider (`ecom-user/...`)."""

from __future__ import annotations

import asyncio

import pytest
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model

from ecom_bench.users.llm import build_prompt
from ecom_bench.users.messages import UserAct
from ecom_bench.users.phrasing import CustomerDecision, Phrase, PhrasingContext
from ecom_bench.users.scripted_models import SCRIPTED_CUSTOMERS, reword

DECISION = CustomerDecision(UserAct.CLARIFY, Phrase("x", "Hi! I need 2 of them. Thanks."), convey=(("qty", "2"),),
                            withhold=("Blue",))


def _ask(name: str) -> str:
    prompt = build_prompt(DECISION, PhrasingContext("cart"), "Hi! I need 2 of them. Thanks.")
    messages = [ChatMessageSystem(content=prompt[0]["content"]), ChatMessageUser(content=prompt[1]["content"])]
    return asyncio.run(get_model(f"ecom-user/{name}").generate(messages)).completion


def test_every_scripted_customer_model_is_served():
    assert _ask("faithful") == reword("Hi! I need 2 of them. Thanks.") == "Thank you. I need 2 of them. Hello!"
    assert _ask("leaky").endswith("Oh, and it's Blue.")
    assert set(SCRIPTED_CUSTOMERS) == {"faithful", "leaky", "empty", "early_goodbye", "invented_id",
                                       "out_of_character"}


@pytest.mark.parametrize(("name", "args", "message"), [
    ("faithfull", {}, "unknown scripted customer model 'ecom-user/faithfull'; available: ecom-user/faithful"),
    ("leaky", {"temperature_x": 1}, "scripted customer model 'ecom-user/leaky' takes no model args"),
])
def test_scripted_customer_names_and_args_are_checked(name, args, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        get_model(f"ecom-user/{name}", memoize=False, **args)
