"""The LLM customer (`users.llm.LLMPhraser`): a model words the decisions, the guards keep it honest.

Scripted customer models (`users.scripted_models`) stand in for a real one: a faithful one that
rewords the draft, and one per failure the guards must catch. For each: what the guards did, the
counts, and that no withheld value reaches the agent (the leak scanner of `test_no_leak`).
"""

from __future__ import annotations

import asyncio

import pytest
from test_no_leak import play_and_scan

from ecom_bench.agents import get_policy
from ecom_bench.conversation import AgentAction, Message
from ecom_bench.envs.bundle.phrases import PHRASES as BUNDLE_PHRASES
from ecom_bench.envs.cart.phrases import PHRASES as CART_PHRASES
from ecom_bench.envs.policy.phrases import PHRASES as POLICY_PHRASES
from ecom_bench.envs.returns.phrases import PHRASES as RETURNS_PHRASES
from ecom_bench.envs.tracking.phrases import PHRASES as TRACKING_PHRASES
from ecom_bench.episode import new_episode
from ecom_bench.runner import run_policy
from ecom_bench.training.env import EcomEnv
from ecom_bench.users.llm import (
    FileCache,
    LLMPhraser,
    breaks_character,
    build_prompt,
    check_reply,
    says_goodbye,
)
from ecom_bench.users.phrases import CONSTRAINT_PHRASES, ORDER_PHRASES, PHRASES
from ecom_bench.users.phrasing import CustomerDecision, PhrasingContext, PhrasingError, template_text
from ecom_bench.users.scripted_models import INVENTED_ORDER_ID, SCRIPTED_CUSTOMERS, draft, section

ENVS = ("cart", "substitution", "discovery", "returns", "tracking", "policy", "bundle")


class Recording:
    """A customer model that records every prompt it is given."""

    def __init__(self, model) -> None:  # noqa: ANN001
        self.model = model
        self.prompts: list[list[dict[str, str]]] = []

    async def __call__(self, messages):  # noqa: ANN001, ANN204
        self.prompts.append(messages)
        return await self.model(messages)


def _play(context, env: str, d: int, index: int, model, policy: str = "oracle"):  # noqa: ANN001, ANN202
    phraser = LLMPhraser(model)
    episode = new_episode(env, d, 0, index, context=context, phraser=phraser)
    return episode, run_policy(episode, get_policy(env, policy)).result


def _templates(table) -> list[tuple[str, str]]:  # noqa: ANN001
    return [(key, t) for key, found in table.items() for t in ((found,) if isinstance(found, str) else found)]


# --------------------------------------------------------------------------- the checks
TABLES = (PHRASES, CONSTRAINT_PHRASES, ORDER_PHRASES, CART_PHRASES, BUNDLE_PHRASES, POLICY_PHRASES,
          RETURNS_PHRASES, TRACKING_PHRASES)


def test_every_goodbye_template_says_goodbye_and_no_other_does():
    for table in TABLES:
        for key, text in _templates(table):
            assert says_goodbye(text) == key.endswith("_quit"), (key, text)
            assert not breaks_character(text), (key, text)


@pytest.mark.parametrize("env", (*ENVS, "journey"))
def test_the_published_words_pass_every_check(context, env):
    """The guards never reject the templates: the draft is always an acceptable reply."""
    failures = []

    class Checking:
        def phrase(self, decision, ctx):  # noqa: ANN001, ANN202
            text = template_text(decision.say)
            if (failed := check_reply(text, decision, ctx)) is not None:
                failures.append((failed, text))
            return text

        async def aphrase(self, decision, ctx):  # noqa: ANN001, ANN202
            return self.phrase(decision, ctx)

    for d, index, policy in ((0, 0, "oracle"), (9, 1, "heuristic"), (15, 2, "random")):
        episode = new_episode(env, d, 0, index, context=context, phraser=Checking())
        run_policy(episode, get_policy(env, policy))
    assert not failures


def _decision(**kw) -> CustomerDecision:  # noqa: ANN003
    from ecom_bench.users.messages import UserAct
    from ecom_bench.users.phrasing import Phrase

    say = Phrase("x", kw.pop("draft", "I need 2 of the Blue mugs."))
    return CustomerDecision(kw.pop("act", UserAct.CLARIFY), say, **kw)


@pytest.mark.parametrize(("reply", "failed"), [
    ("Two Blue mugs, 2 of them.", None),
    ("", "empty"), ("   ", "empty"),
    ("As an AI, I need 2 Blue mugs.", "character"),
    ("Per the system prompt, I need 2 Blue mugs.", "character"),
    ("I need 2 Blue mugs, and prompt delivery.", None),
    ("I need 2 of the Blue mugs, in ceramic.", "withheld"),
    ("I need two of the blue mugs.", "dropped"),
    ("I need 2 Blue mugs, like order ORD-123456.", "invented_id"),
    ("I need 2 Blue mugs, like product P0001234.", "invented_id"),
    ("I need 2 Blue mugs, P0000007-v2 please.", None),  # a variant of a product the agent was shown
    ("I need 2 Blue mugs. Goodbye!", "early_end"),
])
def test_check_reply(reply, failed):
    decision = _decision(convey=(("qty", "2"), ("colour", "Blue")), withhold=("ceramic",))
    context = PhrasingContext("cart", seen_ids=frozenset({"P0000007"}))
    assert check_reply(reply, decision, context) == failed


def test_a_withheld_value_the_draft_says_may_be_said_as_often():
    """A quantity "3" stated for one item and withheld for another: saying it once is the draft's."""
    decision = _decision(draft="3 x pans; some cups.", convey=(("pans", "3"),), withhold=("3",))
    context = PhrasingContext("cart")
    assert check_reply("Some cups, and 3 x pans.", decision, context) is None
    assert check_reply("3 pans and 3 cups.", decision, context) == "withheld"


def test_a_goodbye_decision_must_say_goodbye():
    from ecom_bench.users.messages import UserAct

    decision = _decision(act=UserAct.QUIT, draft="This is taking too long. Bye.", ends_episode=True)
    assert check_reply("Too slow, I'll shop elsewhere.", decision, PhrasingContext("cart")) is None
    assert check_reply("This is taking a while.", decision, PhrasingContext("cart")) == "missing_end"


def test_the_prompt_says_what_to_say_and_what_not(context):
    model = Recording(SCRIPTED_CUSTOMERS["faithful"])
    _play(context, "cart", 9, 0, model, policy="heuristic")
    withheld = [p for p in model.prompts if section(p, "Must not say")]
    assert withheld and any(section(p, "Must say") for p in model.prompts)
    later = model.prompts[-1]
    assert later[0]["role"] == "system" and "customer" in later[0]["content"]
    assert "Agent: " in later[-1]["content"] and "You: " in later[-1]["content"]
    assert draft(later)
    episode = new_episode("discovery", 9, 0, 0, context=context)
    weights = episode.problem.hidden_state()["persona"]
    prompt = build_prompt(episode.problem.user.decide_opening(), episode.problem.user.context(), "Hi.")
    text = str(prompt)
    assert not [w for w in weights.values() if str(w) in text], "the persona's hidden weights are never in the prompt"


# ------------------------------------------------------------------- a faithful customer
@pytest.mark.parametrize("env", (*ENVS, "journey"))
def test_the_oracle_understands_a_faithful_rewording(context, env):
    for d, index in ((0, 0), (6, 1), (12, 2)):
        model = Recording(SCRIPTED_CUSTOMERS["faithful"])
        _, result = _play(context, env, d, index, model)
        assert result.reward.success, (env, d, result.explanation())
        assert result.guards["fell_back"] == 0 and result.guards["replies"] == len(model.prompts)


def test_faithful_words_reach_the_agent(context):
    episode, _ = _play(context, "cart", 0, 0, SCRIPTED_CUSTOMERS["faithful"])
    templated = new_episode("cart", 0, 0, 0, context=context)
    run_policy(templated, get_policy("cart", "oracle"))
    assert [m.text for m in episode.user_messages] != [m.text for m in templated.user_messages]


# ------------------------------------------------------------------- misbehaving customers
def _expected(model: str, prompts) -> tuple[int, str]:  # noqa: ANN001
    """How many first prompts the guards reject for `model`, and the check that rejects them."""
    firsts = [p for p in prompts if "Your last attempt was rejected" not in p[-1]["content"]]
    if model == "leaky":
        return sum(1 for p in firsts if section(p, "Must not say")), "withheld"
    if model == "early_goodbye":
        return sum(1 for p in firsts if "do not say goodbye" in p[-1]["content"]), "early_end"
    return len(firsts), {"empty": "empty", "invented_id": "invented_id", "out_of_character": "character"}[model]


@pytest.mark.parametrize("model_name", ["leaky", "empty", "early_goodbye", "invented_id", "out_of_character"])
@pytest.mark.parametrize(("env", "d", "index"), [("cart", 9, 0), ("discovery", 12, 1), ("returns", 9, 2),
                                                 ("bundle", 12, 0), ("policy", 9, 1), ("journey", 12, 0)])
def test_the_guards_fall_back_to_the_template_words(context, model_name, env, d, index):
    """Each misbehaving reply is retried once, then the draft is said: the transcript and the score
    are the template customer's, and the counts say what happened."""
    model = Recording(SCRIPTED_CUSTOMERS[model_name])
    episode, result = _play(context, env, d, index, model, policy="heuristic")
    templated = new_episode(env, d, 0, index, context=context)
    expected = run_policy(templated, get_policy(env, "heuristic")).result
    assert [m.text for m in episode.user_messages] == [m.text for m in templated.user_messages]
    assert result.reward == expected.reward
    rejected, check = _expected(model_name, model.prompts)
    guards = result.guards
    assert guards["replies"] == guards["accepted"] + guards["fell_back"]
    assert guards["retried"] == guards["fell_back"] == rejected
    assert guards["failed"] == ({check: 2 * rejected} if rejected else {})
    assert len(model.prompts) == guards["replies"] + guards["retried"]
    if model_name == "invented_id":
        assert not any(INVENTED_ORDER_ID in m.text for m in episode.user_messages)


@pytest.mark.parametrize("env", (*ENVS, "journey"))
def test_no_withheld_value_reaches_the_agent_from_a_leaky_customer(context, env):
    problems = []
    for d, index in ((6, 0), (9, 1), (12, 2), (15, 0)):
        problems += play_and_scan(context, env, d, index, "heuristic", phraser=LLMPhraser(SCRIPTED_CUSTOMERS["leaky"]))
    assert not problems, "\n".join(problems[:10])


def test_the_scanner_would_see_the_leaky_customer_unguarded(context):
    """The leak test above has teeth: with the guards off, the leaky customer's words leak."""

    class Unguarded(LLMPhraser):
        async def aphrase(self, decision, ctx):  # noqa: ANN001, ANN202
            return await self._ask(build_prompt(decision, ctx, template_text(decision.say)))

    problems = []
    for env, d, index in (("cart", 9, 0), ("discovery", 12, 1), ("returns", 9, 2)):
        problems += play_and_scan(context, env, d, index, "heuristic", phraser=Unguarded(SCRIPTED_CUSTOMERS["leaky"]))
    assert problems


def test_a_reply_fixed_on_the_retry_is_kept(context):
    """A model that leaks, then rewords properly when told why: retried, not replaced."""

    async def learns(messages):  # noqa: ANN001, ANN202
        if "Your last attempt was rejected" in messages[-1]["content"]:
            return await SCRIPTED_CUSTOMERS["faithful"](messages)
        return await SCRIPTED_CUSTOMERS["leaky"](messages)

    episode, result = _play(context, "cart", 9, 0, learns)
    guards = result.guards
    assert guards["retried"] > 0 and guards["fell_back"] == 0
    assert guards["failed"] == {"withheld": guards["retried"]}
    assert result.reward.success


def test_a_model_that_returns_no_text_gets_a_clear_error(context):
    async def broken(messages):  # noqa: ANN001, ANN202
        return {"content": "hi"}

    episode = new_episode("tracking", 3, 0, 0, context=context, phraser=LLMPhraser(broken))
    with pytest.raises(PhrasingError, match="customer model returned dict"):
        episode.opening  # noqa: B018


def test_template_results_carry_no_guard_counts(context):
    episode = new_episode("cart", 3, 0, 0, context=context)
    run_policy(episode, get_policy("cart", "oracle"))
    assert episode.result().guards is None and "guards" not in episode.result().to_dict()
    assert "guards" not in episode.info()


# ------------------------------------------------------------------------- reproducibility
def test_the_same_prompt_is_answered_from_the_cache(context, tmp_path):
    for cache in ({}, FileCache(tmp_path / "customer")):
        runs = []
        for _ in range(2):
            model = Recording(SCRIPTED_CUSTOMERS["faithful"])
            episode = new_episode("discovery", 9, 0, 1, context=context,
                                  phraser=LLMPhraser(model, model_id="faithful", cache=cache))
            run_policy(episode, get_policy("discovery", "oracle"))
            runs.append(([m.text for m in episode.user_messages], len(model.prompts)))
        assert runs[0][0] == runs[1][0] and runs[0][1] > 0 and runs[1][1] == 0
        assert len(cache) == runs[0][1]


def test_the_cache_keys_the_model():
    phraser_a = LLMPhraser(SCRIPTED_CUSTOMERS["faithful"], model_id="a", cache={})
    phraser_b = LLMPhraser(SCRIPTED_CUSTOMERS["leaky"], model_id="b", cache=phraser_a.cache)
    decision = _decision(convey=(("qty", "2"),), withhold=("ceramic",))
    context = PhrasingContext("cart")
    assert phraser_a.phrase(decision, context) == "I need 2 of the Blue mugs."
    assert phraser_b.phrase(decision, context) == "I need 2 of the Blue mugs."  # its own leak, refused
    assert phraser_b.guard_stats.fell_back == 1 and len(phraser_a.cache) == 3


def test_sync_and_async_episodes_agree(context):
    texts = []
    for run_async in (False, True):
        episode = new_episode("returns", 9, 0, 1, context=context, phraser=LLMPhraser(SCRIPTED_CUSTOMERS["faithful"]))
        policy = get_policy("returns", "oracle")
        opening = asyncio.run(episode.aopen()) if run_async else episode.opening
        messages = [Message("system", episode.system_prompt()), Message("user", opening)]
        hidden = episode.problem.hidden_state()
        while not episode.done:
            action = policy.act(messages, hidden, episode.status())
            messages.append(Message("assistant", action.text, tool_calls=action.tool_calls))
            observation, *_ = asyncio.run(episode.astep(action)) if run_async else episode.step(action)
            messages.extend(observation)
        texts.append([m.text for m in messages if m.role == "user"])
    assert texts[0] == texts[1]


def test_a_sync_model_and_a_running_event_loop_both_work():
    def sync_model(messages):  # noqa: ANN001, ANN202
        return asyncio.run(SCRIPTED_CUSTOMERS["faithful"](messages))

    decision = _decision(convey=(("qty", "2"),))
    assert LLMPhraser(sync_model).phrase(decision, PhrasingContext("cart")) == "I need 2 of the Blue mugs."

    async def inside_a_loop() -> str:
        return LLMPhraser(SCRIPTED_CUSTOMERS["faithful"]).phrase(decision, PhrasingContext("cart"))

    assert asyncio.run(inside_a_loop()) == "I need 2 of the Blue mugs."


# ----------------------------------------------------------------------------- training front
def _play_env(env: EcomEnv, name: str, d: int) -> tuple[float, dict]:
    env.reset(seed=0, options={"env": name, "difficulty": d, "index": 0})
    while True:
        _, reward, terminated, truncated, info = env.step(env.scripted_action("oracle"))
        if terminated or truncated:
            return reward, info


@pytest.mark.parametrize("model_name", ["faithful", "leaky"])
def test_the_training_env_takes_a_customer_model(context, model_name):
    env = EcomEnv(context=context, user="llm", customer_model=SCRIPTED_CUSTOMERS[model_name], customer_cache={})
    reward, info = _play_env(env, "cart", 9)
    assert info["success"] and info["guards"]["replies"] > 0
    assert (info["guards"]["fell_back"] > 0) == (model_name == "leaky")
    assert "guards" not in _play_env(EcomEnv(context=context), "cart", 9)[1]


def test_the_training_env_takes_a_phraser_and_a_sync_model(context):
    def sync_model(messages):  # noqa: ANN001, ANN202
        return asyncio.run(SCRIPTED_CUSTOMERS["faithful"](messages))

    _, info = _play_env(EcomEnv(context=context, user="llm", customer_model=sync_model), "tracking", 6)
    assert info["success"] and info["guards"]["accepted"] == info["guards"]["replies"]
    phraser = LLMPhraser(SCRIPTED_CUSTOMERS["faithful"])
    _, info = _play_env(EcomEnv(context=context, user="llm", phraser=phraser), "tracking", 6)
    assert info["success"] and phraser.guard_stats.replies > 0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"user": "llm"}, "customer_model="),
    ({"user": "gpt"}, "'template' or 'llm'"),
    ({"customer_model": SCRIPTED_CUSTOMERS["faithful"]}, "user='llm'"),
    ({"user": "llm", "customer_model": SCRIPTED_CUSTOMERS["faithful"], "phraser": LLMPhraser(str)}, "not both"),
])
def test_the_training_env_refuses_a_customer_it_cannot_use(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EcomEnv(**kwargs)


def test_an_agent_message_reaches_the_llm_customer(context):
    model = Recording(SCRIPTED_CUSTOMERS["faithful"])
    episode = new_episode("tracking", 3, 0, 0, context=context, phraser=LLMPhraser(model))
    episode.step(AgentAction(text="Which order do you mean, and when did you place it?"))
    assert "Agent: Which order do you mean" in model.prompts[-1][-1]["content"]
