"""No hidden value reaches the agent before it was legitimately obtained (reliability suite).

Every string an agent can see is scanned while the heuristic, random and adversarial
policies play every env at d = 0..15 over several seeds: the system prompt, every tool's
name / description / JSON schema, the opening, every user reply and every tool result.

Secrets are collected generically from `problem.hidden_state()` (each sub-task's, for
E_JOURNEY), plus a small per-env table of withheld slot values (`_slot_phrases`):

* **hidden ids** (every id-shaped string of the hidden goal: target / ideal-ranking /
  substitute / replacement product ids, variant ids, order and line ids, rule ids) —
  never in the system prompt or tool schemas; in a tool result only if that tool marked
  it retrieved (it is in `world.seen_ids` after the call) or the agent itself wrote it
  before (an echo: a carted id in the cart view); in a user message only once the agent has seen it
  (retrieved, or written it itself), or when the customer legitimately knows it: the
  order id of a tracking / returns customer who refers to their order by its number
  (`reference.kind == "order_id"`), once their "order" slot is told.
* **persona weights** (the floats of every hidden persona dict with 3+ decimals; shorter
  ones such as 0.25 collide with prices) — nowhere.
* **withheld slots** (`user.disclosure()`): a slot still untold after a user message must
  not have its phrase in that message (nor in the system prompt / schemas). Phrases are
  what the user would say to reveal it (`_slot_phrases`); names the user legitimately
  says anyway (the item / original product / category names) are cut from the text
  before matching.
* **E_POLICY's computed answer** — never in a user message (unless the same text is one
  of the customer's own facts: "the item cost $40" and a refund of $40), never in a tool
  result outside the verbatim text of a policy document (documents are static rules; the
  answer comes from applying them to the customer's facts).
* **E_TRACK's status** — never in a user message.
The tool schemas are static (the same every episode); the fixed examples in their
descriptions ("store credit", "SHIP-1234") carry no episode information and are cut, and
the policy answer is not looked for there (an outcome such as "not eligible" is also
ordinary wording of the return tools). In E_JOURNEY a user message is checked against
the slots of the request it speaks for (the active one): requests share words (a cart
item "Dog Treats" and a withheld bundle category "dog treats").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from ecom_bench.agents import get_policy
from ecom_bench.agents.adversarial import ADVERSARIAL_NAMES
from ecom_bench.domains.policy.rulebook import Rulebook
from ecom_bench.envs import ENVIRONMENTS
from ecom_bench.episode import Episode, new_episode
from ecom_bench.users import UserMessage
from ecom_bench.world.state import World
from ecom_bench.world.toolkit import ToolError

pytestmark = pytest.mark.reliability

ENVS = list(ENVIRONMENTS)
POLICIES = ("heuristic", "random", *ADVERSARIAL_NAMES)
_ID = re.compile(r"^[A-Z]{1,4}-?\d{4,}(?:-[A-Za-z]*\d+)*$")
_STATIC_EXAMPLES = ("store credit", "SHIP-1234")


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _personas(value: Any):
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("persona", "weights") and isinstance(v, dict):
                yield from (x for x in v.values() if isinstance(x, float))
            else:
                yield from _personas(v)
    elif isinstance(value, list):
        for v in value:
            yield from _personas(v)


def _has(text: str, phrase: str, *, word: bool = True) -> bool:
    if not phrase:
        return False
    if not word:
        return phrase.lower() in text.lower()
    return re.search(rf"(?<![A-Za-z0-9])(?<!\d[.,]){re.escape(phrase)}(?![A-Za-z0-9]|[.,]\d)", text, re.I) is not None


def _subtasks(problem) -> list:  # noqa: ANN001
    """(slot prefix, sub-task) pairs: the journey's requests, or the problem's own task."""
    if problem.env == "journey":
        return [(f"{t.intent}:{t.env}:", t) for t in problem.goal.tasks]
    return [("", problem.task)]


# ------------------------------------------------------------- per-env slot phrases
def _slot_phrases(task) -> tuple[dict[str, list[str]], list[str]]:  # noqa: ANN001
    """{slot: phrases that would reveal it}, and names the user says anyway (cut before matching)."""
    env, g, user = task.env, task.goal, task.user
    slots: dict[str, list[str]] = {}
    said: list[str] = []
    if env == "cart":
        told_values = {t.variant_value for t in g.targets if user.disclosure().get(t.variant_slot, True)}
        for t in g.targets:
            if t.variant_value and t.variant_value not in told_values:
                slots[t.variant_slot] = [f"the {t.variant_value} one", f"in {t.variant_value}",
                                         f": {t.variant_value})"]
            slots[t.quantity_slot] = [f"{t.quantity} {w} {t.short_name}" for w in ("x", "of the", "units of the")]
    elif env in ("discovery", "substitution"):
        from ecom_bench.users.constraints import fmt

        noun = user._noun()
        said += [noun.one, noun.many] + ([user.original_name] if env == "substitution" else [])
        for c in user.stated_constraints():
            v = fmt(c.value)
            slots.setdefault(c.slot, []).extend({
                "price": [f"${v}"], "rating": [f"{v} stars", f"{v}+ stars"],
                "ship": [f"within {v} days", f"in {v} days"], "brand": [f"from {v}", f"the {v} brand"],
                "attribute": [f"must be {v}"], "category": []}[c.kind])
    elif env == "tracking":
        slots["order"] = [g.reference_text] if g.reference["kind"] not in ("noun",) else []
    elif env == "returns":
        from ecom_bench.users.phrasing import template_text

        s = user.script
        slots["order"] = [g.reference_text] if g.reference["kind"] != "order_id" else [g.order_id]
        slots["item"] = [s.item] if s.item.lower() != f"the {s.noun}".lower() else []
        slots["reason"] = [template_text(s.reason)]
        slots["method"] = [template_text(s.method)]
        if g.new_variant_value:
            slots["variant"] = [f"the {g.new_variant_value} one"]
    elif env == "policy":
        from ecom_bench.users import render
        from ecom_bench.domains.policy.rules import SLOTS

        slots = {k: [render(SLOTS[k].say(g.situation[k]))] for k in g.slots}
    elif env == "bundle":
        from ecom_bench.envs.bundle.goal import BUDGET_SLOT, item_name
        from ecom_bench.envs.bundle.user import money

        told = [item_name(i.category) for i in g.items if user.disclosure().get(i.slot, True)]
        for i in g.items:
            name = item_name(i.category)
            if not any(name in t for t in told):
                slots[i.slot] = [name]
        if g.budget is not None:
            slots[BUDGET_SLOT] = [f"budget is {money(g.budget)}", f"budget of {money(g.budget)}"]
        for c in g.constraints:
            slots[c.slot] = [c.describe()]
    return slots, said


class Scan:
    """Collects the secrets of one episode and checks each string the agent is shown."""

    def __init__(self, episode) -> None:  # noqa: ANN001
        self.episode = episode
        self.problem = p = episode.problem
        self.world = p.world
        hidden = p.hidden_state()
        self.ids = {s for s in _strings(hidden) if _ID.match(s)}
        self.weights = {str(w) for w in _personas(hidden) if len(str(w).split(".")[-1]) >= 3}
        self.subtasks = _subtasks(p)
        self.direct: dict[str, str] = {}  # order id -> the slot that must be told before the user says it
        self.never_user: list[tuple[int, str]] = []  # (request, phrase) the user never says
        self.policy_answers: list[tuple[str, list[str]]] = []
        for prefix, t in self.subtasks:
            g = t.goal
            if t.env in ("tracking", "returns") and g.reference["kind"] == "order_id":
                self.direct[g.order_id] = prefix + "order"
            if t.env == "tracking":
                self.never_user += [(t.intent, g.status), (t.intent, g.status.replace("_", " "))]
            if t.env == "policy":
                from ecom_bench.users import render
                from ecom_bench.domains.policy.rules import SLOTS

                facts = [render(SLOTS[k].say(v)) for k, v in g.situation.items()]
                self.policy_answers.append((g.answer_text(), facts))
        self.agent_said: set[str] = set()
        self.problems: list[str] = []

    def _flag(self, where: str, what: str, text: str) -> None:
        self.problems.append(f"{self.problem.env} d={self.problem.difficulty.level} seed={self.problem.seed}: "
                             f"{what} in {where}: {text[:300]!r}")

    def _weights(self, where: str, text: str) -> None:
        for w in self.weights:
            if re.search(rf"(?<![\d.]){re.escape(w)}(?!\d)", text):
                self._flag(where, f"persona weight {w}", text)

    def _slots(self, where: str, text: str, disclosure: dict[str, bool], everyone: bool = False) -> None:
        for prefix, t in self.subtasks:
            if not everyone and t.intent != self.world.intent:
                continue  # E_JOURNEY: a reply speaks for the active request (others may share words)
            phrases, said = _slot_phrases(t)
            cut = text
            for name in sorted(said, key=len, reverse=True):
                cut = re.sub(re.escape(name), " ", cut, flags=re.I)
            for slot, options in phrases.items():
                if disclosure.get(prefix + slot, True):
                    continue
                for phrase in options:
                    if _has(cut, phrase):
                        self._flag(where, f"withheld slot {prefix + slot} ({phrase!r})", text)

    # ----------------------------------------------------------------- checks
    def static(self, system: str, schemas: str) -> None:
        for name, text in (("system prompt", system), ("tool schemas", schemas)):
            for ex in _STATIC_EXAMPLES:
                text = text.replace(ex, " ")
            for i in self.ids:
                if _has(text, i):
                    self._flag(name, f"hidden id {i}", text)
            self._weights(name, text)
            self._slots(name, text, {k: False for k in self.episode.problem.user.disclosure()}, everyone=True)
            for answer, _ in self.policy_answers:
                if name == "system prompt" and _has(text, answer):
                    self._flag(name, f"policy answer {answer!r}", text)

    def user(self, text: str, seen_before: set[str], where: str = "user message") -> None:
        disclosure = self.problem.user.disclosure()
        for i in self.ids:
            if not _has(text, i) or i in seen_before or i in self.agent_said:
                continue
            if i in self.direct and disclosure.get(self.direct[i], False):
                continue
            self._flag(where, f"hidden id {i} (never retrieved)", text)
        self._weights(where, text)
        self._slots(where, text, disclosure)
        for intent, phrase in self.never_user:
            if intent == self.world.intent and _has(text, phrase):
                self._flag(where, f"tracking status {phrase!r}", text)
        for answer, facts in self.policy_answers:
            if _has(text, answer) and not any(_has(f, answer) for f in facts):
                self._flag(where, f"policy answer {answer!r}", text)

    def tool(self, name: str, args: dict[str, Any], text: str) -> None:
        echoed = json.dumps(args, default=str)
        for i in self.ids:
            if _has(text, i) and i not in self.world.seen_ids and not _has(echoed, i) and i not in self.agent_said:
                self._flag(f"{name} result", f"hidden id {i} shown but not marked retrieved", text)
        self._weights(f"{name} result", text)
        if self.policy_answers:
            rest = text
            docs = [r.document() for r in self.world.state(Rulebook).rules.values()]
            data = _json(text)
            if data is not None:
                rest = json.dumps([r for r in _records(data) if r not in docs], ensure_ascii=False)
            for answer, _ in self.policy_answers:
                # the answer tool echoes what it recorded: the agent's own answer, said back in words
                figures = {float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*(?:\.\d+)?", echoed)}
                number = re.match(r"\$?([\d,]+(?:\.\d+)?)", answer)
                said = _has(echoed, answer) or number is not None and float(number.group(1).replace(",", "")) in figures
                if _has(rest, answer) and not (name == "answer_policy_question" and said):
                    self._flag(f"{name} result", f"policy answer {answer!r} outside a document", text)

    def agent(self, text: str, args: list[dict[str, Any]]) -> None:
        blob = text + json.dumps(args, default=str)
        self.agent_said.update(i for i in self.ids if _has(blob, i))


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _records(value: Any) -> list[Any]:
    """The scalar leaves of a JSON value (document texts compared whole)."""
    out: list[Any] = []
    if isinstance(value, dict):
        for v in value.values():
            out += _records(v)
    elif isinstance(value, list):
        for v in value:
            out += _records(v)
    else:
        out.append(value)
    return out


def _watch(episode: Episode, scan: Scan) -> list[str]:
    """Scan what the customer and the tools say at the moment they say it, inside a step: the
    state a string is judged against (the ids retrieved so far, the slots told, the active
    request) is the state when it was produced, not after the rest of the action. Returns the
    list the tools' texts are put in, in order, for `play_and_scan` to skip."""
    produced: list[str] = []
    user = episode.problem.user
    reply = user.reply

    def customer_replies(text: str, world: World, **kw: Any) -> UserMessage:
        seen = set(world.seen_ids)
        message = reply(text, world, **kw)
        scan.user(message.text, seen)
        return message

    def scanned(name: str, run: Callable[..., str]) -> Callable[..., str]:
        def tool(**args: Any) -> str:
            text = ""
            try:
                text = run(**args)
            except ToolError as e:
                text = str(e)
                raise
            finally:
                scan.tool(name, args, text)
                produced.append(text)
            return text
        return tool

    user.reply = customer_replies
    for name in episode.env.tool_names:
        if name != "ask_user":  # its result is the customer's reply, scanned above
            setattr(episode.toolkit, name, scanned(name, getattr(episode.toolkit, name)))
    return produced


def play_and_scan(context, env: str, d: int, index: int, policy_name: str,  # noqa: ANN001
                  phraser=None) -> list[str]:  # noqa: ANN001
    """`runner.run_policy`'s loop, with every string the agent is shown scanned as it appears
    (`phraser`: who words the customer; default the templates)."""
    episode = new_episode(env, d, 0, index, context=context, phraser=phraser)
    policy = get_policy(env, policy_name)
    scan = Scan(episode)
    schemas = json.dumps([s.openai_schema() for s in episode.tool_specs()], ensure_ascii=False)
    scan.static(episode.system_prompt(), schemas)
    scan.user(episode.opening, set(), "opening")
    produced = _watch(episode, scan)
    for _ in range(500):
        if episode.done:
            break
        action = policy.act(episode.messages, None, episode.status())
        scan.agent(action.text, [c.arguments for c in action.tool_calls])
        observation, *_ = episode.step(action)
        # The episode's own texts (a refusal over the budget, an invalid call, a call after the
        # end) only say the agent's own arguments back: scanned once the step is over.
        for call, out in zip(action.tool_calls, observation if action.tool_calls else [], strict=True):
            if produced and out.text == produced[0]:
                produced.pop(0)
            elif call.name != "ask_user":
                scan.tool(call.name, call.arguments if isinstance(call.arguments, dict) else {}, out.text)
        assert not produced, produced
    return scan.problems


@pytest.mark.parametrize("env", ENVS)
def test_no_hidden_value_reaches_the_agent(context, env):
    problems: list[str] = []
    for d in range(16):  # every d, each policy at 2-3 of them, three episode seeds
        policy = POLICIES[(d + ENVS.index(env)) % len(POLICIES)]
        problems += [f"[{policy}] {p}" for p in play_and_scan(context, env, d, d % 3, policy)]
    assert not problems, f"{len(problems)} leak(s):\n" + "\n".join(problems[:15])


def test_scanner_catches_a_planted_leak(context):
    """The scanner itself works: planted hidden ids, a status, a withheld quantity, a persona weight."""
    episode = new_episode("discovery", 9, 0, 0, context=context)
    scan = Scan(episode)
    scan.user(f"I'd take {episode.problem.goal.target_id}.", set())
    scan.tool("catalog_search", {"query": "x"}, f"[{episode.problem.goal.ranked_ids[0]}]")
    weight = next(iter(scan.weights))
    scan.static(f"Persona {weight}.", "")
    assert [p for p in scan.problems if "never retrieved" in p]
    assert [p for p in scan.problems if "not marked retrieved" in p]
    assert [p for p in scan.problems if "persona weight" in p]
    tracking = new_episode("tracking", 9, 0, 0, context=context)
    scan = Scan(tracking)
    scan.user(f"It is {tracking.problem.goal.status}.", set())
    assert [p for p in scan.problems if "tracking status" in p]
    for i in range(10):
        cart = new_episode("cart", 9, 0, i, context=context)
        withheld = [t for t in cart.problem.goal.targets if t.quantity > 1
                    and not cart.problem.user.disclosure().get(t.quantity_slot, True)]
        if withheld:
            scan = Scan(cart)
            scan.user(f"Add {withheld[0].quantity} x {withheld[0].short_name}.", set())
            assert [p for p in scan.problems if "withheld slot" in p]
            break
    else:
        pytest.fail("no cart episode with a withheld quantity")
