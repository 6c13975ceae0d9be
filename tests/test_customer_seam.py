"""The customer as decision + phrasing: templates reproduce the published words, a phraser of
one's own words every customer message, noise spares protected values, sync == async."""

from __future__ import annotations

import asyncio
import random
import time

import pytest
from customer_transcripts import PINNED, dump, transcripts

from ecom_bench import CustomerDecision, Phraser, PhrasingContext, TemplatePhraser
from ecom_bench.agents import get_policy
from ecom_bench.conversation import AgentAction, Message, ToolCallRequest
from ecom_bench.envs import env_names
from ecom_bench.envs.journey.goal import request_opening
from ecom_bench.episode import EndReason, EpisodeOver, new_episode
from ecom_bench.runner import run_policy
from ecom_bench.users.noise import add_noise
from ecom_bench.users.phrasing import PhrasingError, template_text

CASES = [(env, d, i) for env in ("cart", "substitution", "discovery", "returns", "tracking", "policy", "bundle",
                                 "journey") for d, i in ((3, 0), (9, 1))]


def test_template_phraser_keeps_every_customer_message(context):
    """Every scripted agent's conversation, word for word as pinned before the seam existed."""
    assert dump(transcripts(context)) == PINNED.read_text()


class Wrapping:
    """A phraser of one's own: the template words, wrapped, so every message shows who worded it."""

    def __init__(self) -> None:
        self.decisions: list[CustomerDecision] = []
        self.contexts: list[PhrasingContext] = []

    def phrase(self, decision: CustomerDecision, context: PhrasingContext) -> str:
        self.decisions.append(decision)
        self.contexts.append(context)
        return f"<< {template_text(decision.say)} >>"

    async def aphrase(self, decision: CustomerDecision, context: PhrasingContext) -> str:
        await asyncio.sleep(0)
        return self.phrase(decision, context)


def _play(episode, policy, *, run_async: bool) -> list[str]:
    """`runner.run_policy`'s loop, with `step` or `astep`; every customer message's text."""

    async def opening() -> str:
        return await episode.aopen()

    first = asyncio.run(opening()) if run_async else episode.opening
    messages = [Message("system", episode.system_prompt()), Message("user", first)]
    hidden = episode.problem.hidden_state() if policy.reads_hidden_goal else None
    while not episode.done:
        action = policy.act(messages, hidden, episode.status())
        messages.append(Message("assistant", action.text, tool_calls=action.tool_calls))
        observation, *_ = asyncio.run(episode.astep(action)) if run_async else episode.step(action)
        messages.extend(observation)
    return [m.text for m in episode.user_messages]


@pytest.mark.parametrize(("env", "d", "index"), CASES)
def test_a_phraser_words_every_customer_message(context, env, d, index):
    phraser = Wrapping()
    assert isinstance(phraser, Phraser)
    episode = new_episode(env, d, 0, index, context=context, phraser=phraser)
    texts = _play(episode, get_policy(env, "heuristic"), run_async=True)
    assert phraser.decisions and texts
    for text in texts:  # noise may touch the words a phraser returned, never its wrapping
        if env == "journey" and (opened := request_opening(text)) is not None:
            text = opened[1]  # a journey's request markers are said as written, whatever the phraser
        assert text.startswith("<< ") and text.endswith(" >>"), text
    for decision, ctx in zip(phraser.decisions, phraser.contexts, strict=True):
        assert ctx.env == env or env == "journey" and ctx.env in env_names()
        words = template_text(decision.say).lower()
        for value in decision.must_appear:
            assert value.lower() in words, (value, words)
    # the text that reached the agent holds every fact the decision conveyed (noise spares them)
    said = " ".join(texts).lower()
    for decision in phraser.decisions:
        for value in decision.must_appear:
            assert value.lower() in said, (value, said[:300])


def test_the_context_carries_the_conversation_and_the_seen_ids(context):
    phraser = Wrapping()
    episode = new_episode("discovery", 3, 0, 0, context=context, phraser=phraser)
    _play(episode, get_policy("discovery", "heuristic"), run_async=False)
    last = phraser.contexts[-1]
    assert last.env == "discovery" and last.persona
    roles = [role for role, _ in last.conversation]
    assert roles[0] == "customer" and roles[-1] == "agent" and "agent" in roles
    assert last.seen_ids <= episode.world.seen_ids and last.seen_ids


@pytest.mark.parametrize(("env", "d", "index"), [c for c in CASES if c[1] == 9])
def test_async_path_gives_the_sync_transcript(context, env, d, index):
    runs = []
    for run_async in (False, True):
        episode = new_episode(env, d, 0, index, context=context)
        runs.append((_play(episode, get_policy(env, "heuristic"), run_async=run_async),
                     episode.result().reward.total))
    assert runs[0] == runs[1]


def test_customer_async_methods_match_the_sync_ones(context):
    a = new_episode("cart", 6, 0, 2, context=context).problem.user
    b = new_episode("cart", 6, 0, 2, context=context).problem.user
    assert asyncio.run(a.aopening()) == b.opening()
    world = new_episode("cart", 6, 0, 2, context=context).world
    for text in ("Which variant do you need?", "How many would you like?", "Anything else?"):
        assert asyncio.run(a.areply(text, world, last_turn=False)) == b.reply(text, world, last_turn=False)


def test_noise_never_alters_protected_values():
    rng = random.Random(7)
    protected = ("Blue", "USB-C", "ORD-123456", "Rinse Wash", "4.5")
    for _ in range(300):
        words = " ".join(rng.choice(("please", "the", "really", "want", "because", "colour", *protected))
                         for _ in range(12))
        noised = add_noise(words, 1.0, random.Random(rng.random()), frozenset(protected))
        for value in protected:
            assert words.count(value) == noised.count(value), (words, noised)


def test_noise_spares_the_facts_a_decision_conveys(context):
    """At the highest noise, every value a reply conveys reaches the agent as the customer decided it."""
    seen = 0
    for env in ("cart", "returns", "discovery", "bundle"):
        for index in range(3):
            phraser = Wrapping()
            episode = new_episode(env, 12, 0, index, context=context, phraser=phraser)
            texts = _play(episode, get_policy(env, "heuristic"), run_async=False)
            said = " ".join(texts)
            for decision in phraser.decisions:
                for value in decision.must_appear:
                    seen += 1
                    assert value in said, (env, value)
    assert seen


class Raising:
    def phrase(self, decision, context):
        raise ValueError("model unavailable")

    async def aphrase(self, decision, context):
        raise ValueError("model unavailable")


class NotText:
    def phrase(self, decision, context):
        return {"text": "hi"}

    async def aphrase(self, decision, context):
        return None


@pytest.mark.parametrize("phraser", [Raising(), NotText()], ids=["raises", "not-text"])
def test_a_failing_phraser_gets_a_clear_error(context, phraser):
    episode = new_episode("tracking", 3, 0, 0, context=context, phraser=phraser)
    with pytest.raises(PhrasingError, match=type(phraser).__name__):
        episode.opening  # noqa: B018
    episode = new_episode("tracking", 3, 0, 0, context=context, phraser=phraser)
    with pytest.raises(PhrasingError, match=type(phraser).__name__):
        asyncio.run(episode.astep(AgentAction(text="Which order do you mean?")))


def test_template_phraser_is_the_default(context):
    episode = new_episode("cart", 3, 0, 0, context=context)
    assert isinstance(episode.phraser, TemplatePhraser)


class Rewording:
    """A faithful phraser that words differently: other greetings and verbs, sentences reversed."""

    SWAPS = (("Hi!", "Hello there!"), ("Hello,", "Good day,"), ("I need", "I require"), ("Please", "Kindly"),
             ("I'd like", "I would like"), ("Thanks!", "Many thanks!"))

    def phrase(self, decision: CustomerDecision, context: PhrasingContext) -> str:
        text = template_text(decision.say)
        for old, new in self.SWAPS:
            text = text.replace(old, new)
        sentences = [s for s in text.replace("! ", "!\n").replace(". ", ".\n").split("\n") if s]
        return " ".join(reversed(sentences))

    async def aphrase(self, decision: CustomerDecision, context: PhrasingContext) -> str:
        return self.phrase(decision, context)


@pytest.mark.parametrize("d", [0, 6, 12])
def test_the_journey_oracle_needs_none_of_the_customers_words(context, d):
    """Requests are told apart by the journey's markers, said as written, and matched to the hidden
    intents by order: a phraser that rewords every request leaves the oracle's work correct."""
    for index in range(3):
        episode = new_episode("journey", d, 0, index, context=context, phraser=Rewording())
        run_policy(episode, get_policy("journey", "oracle"))
        result = episode.result()
        assert result.verdict.success, (d, index, result.explanation())


class FailsOnItsSecondCall(Rewording):
    def __init__(self) -> None:
        self.calls = 0

    def phrase(self, decision: CustomerDecision, context: PhrasingContext) -> str:
        self.calls += 1
        if self.calls == 2:
            raise TimeoutError("the customer model did not answer")
        return super().phrase(decision, context)


@pytest.mark.parametrize("tool", [False, True])
def test_a_phraser_failing_mid_episode_ends_it(context, tool):
    """The customer had decided (a turn spent, slots marked told) when its words failed: the episode
    ends there, cut short, rather than going on as if the agent had been told."""
    episode = new_episode("discovery", 6, 1, 0, context=context, phraser=FailsOnItsSecondCall())
    assert episode.opening
    ask = "What else matters to you?"
    action = (AgentAction(tool_calls=(ToolCallRequest("ask_user", {"question": ask}, "c1"),)) if tool
              else AgentAction(text=ask))
    with pytest.raises(PhrasingError, match="did not answer"):
        episode.step(action)
    assert episode.done and episode.end is EndReason.ABORTED
    assert "phraser failed" in episode.result().end_reason
    with pytest.raises(EpisodeOver):
        episode.step(AgentAction(text=ask))


class SlowAsync(Rewording):
    """An async phraser that waits on a 'model' and counts how many calls wait at once."""

    def __init__(self, gate: asyncio.Event, counter: list[int]) -> None:
        self.gate, self.counter = gate, counter

    async def aphrase(self, decision: CustomerDecision, context: PhrasingContext) -> str:
        self.counter[0] += 1
        self.counter[1] = max(self.counter[1], self.counter[0])
        if self.counter[1] >= 40:
            self.gate.set()
        await asyncio.wait_for(self.gate.wait(), 10)
        self.counter[0] -= 1
        return self.phrase(decision, context)


def test_many_async_episodes_await_their_customers_at_once(context):
    """`astep`/`aopen` keep no cap below a rollout's width: 40 customers' words are awaited together."""

    async def run() -> int:
        gate, counter = asyncio.Event(), [0, 0]
        episodes = [new_episode("cart", 3, 0, i, context=context, phraser=SlowAsync(gate, counter))
                    for i in range(40)]
        await asyncio.gather(*(e.aopen() for e in episodes))
        return counter[1]

    assert asyncio.run(run()) == 40


def test_a_journey_phrasers_context_holds_only_what_was_said(context):
    """Building a journey records each request's opening for the hidden goal without saying it:
    the phraser's context never shows a customer line the agent did not read."""
    phraser = Wrapping()
    episode = new_episode("journey", 6, 0, 1, context=context, phraser=phraser)
    run_policy(episode, get_policy("journey", "oracle"))
    said = {opened[1] if (opened := request_opening(m.text)) else m.text for m in episode.user_messages}
    for ctx in phraser.contexts:
        for speaker, text in ctx.conversation:
            if speaker == "customer":
                assert " ".join(text.split()) in said, text


@pytest.mark.parametrize("text", ["x" * 200_000, "x" * 200_000 + "1", "a-" * 100_000, "Ab1 " * 50_000])
def test_a_huge_message_gets_its_reply_at_once(context, text):
    """A degenerate generation (one long token, a base64 blob) is read in linear time by every
    customer: a pattern that backtracked over a digit-free run took minutes on 100k characters."""
    for env in env_names():
        episode = new_episode(env, 3, 0, 0, context=context)
        assert episode.opening
        start = time.perf_counter()
        episode.step(AgentAction(text=text))
        assert time.perf_counter() - start < 20, env  # linear: ~0.05 s; quadratic: minutes
