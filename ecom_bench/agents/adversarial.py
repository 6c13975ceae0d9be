"""Adversarial scripted agents: the reward must not pay for gaming it (reliability suite).

Four generic strategies that play EVERY environment through its own tools. Each is a
deterministic, stateless policy (`act` is a pure function of the conversation; the
hidden goal is never read) that knows the env only through what an agent is shown:
its tool names and JSON schemas (`Toolkit.specs()`), the final-answer tool's name, the
system prompt (tool budget B and patience T) and the conversation.

* ``recommend_all``: retrieve as much as one turn's tool budget allows, then put
  everything retrieved into the answer: every retrieved product id in a list answer
  (cut to the size the tool accepts when it refuses a longer one), every retrieved
  product carted (cart), a return started for every retrieved order line and every
  line / order reported (returns, tracking), every amount of every retrieved policy
  document in the policy answer. Precision should sink it (r_task).
* ``all_variants``: "cover every option": cart every variant of every retrieved
  product (cart); one product of every retrieved category (list answers); name every
  retrieved order to the customer and answer with the one they pick, starting a return
  for every line of it (tracking, returns); every outcome and amount of the retrieved
  policies in one answer (policy). Precision / the wrong pick should sink it (r_task).
* ``answer_now``: the final answer at once, with the least it can hold: an empty list,
  an empty cart, the first listed order (and line) with its listed status and the first
  listed option, "0". The tool's refusal (empty answers) leaves no answer: a hard fail.
* ``invent_ids``: look once (to learn the id formats), then answer with plausible ids
  no tool returned: a retrieved id with its last number bumped past every id shown
  (P0001234 → P0001235, ORD-123456 → ORD-123457), variants "<invented id>-v1". r_hall
  should sink it (E_POLICY's answer holds no id: there the made-up amount fails r_task).

Arguments are filled generically from the final tool's schema: list-of-id parameters
from retrieved ids, id parameters (`product_id`, `order_id`, `line_id`, `variant_id`)
from retrieved records holding that key, other string parameters from the chosen
record's same-named field (an order's `status`) or else from the first option the
parameter's description lists ("confirmed, shipped, in_transit, delivered or
cancelled"), and a free-text `answer` from retrieved document text. The special cases,
kept small: `LISTING_TOOLS` (zero-argument tools that list what the account holds),
`ACT_TOOLS` (the writes that act on one retrieved item: cart_add, return_initiate), and
asking the customer to pick among orders (all_variants, for answers naming an order).

E_JOURNEY reuses the journey's delegation (`envs.journey.agents._Delegating`): each
request's part of the conversation is handed to the same strategy for the env that
`classify_request` reads from the customer's words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any

from ecom_bench.conversation import AgentAction, EpisodeStatus, Message, ToolCallRequest, tool_results
from ecom_bench.envs.journey.agents import _Delegating

#: The adversarial strategies, by name (see the module docstring).
ADVERSARIAL_NAMES: tuple[str, ...] = ("recommend_all", "all_variants", "answer_now", "invent_ids")

#: Zero-argument read tools that list what the customer's account holds (orders, viewed products).
LISTING_TOOLS = ("user_get_visit_history", "order_list")
#: Writes that act on one retrieved item, filled from retrieved records (the adversaries' "act on everything").
ACT_TOOLS = ("cart_add", "return_initiate")
#: The record key an id-valued argument is filled from.
ID_KEYS = {"product_id": "product_id", "replacement_product_id": "product_id", "order_id": "order_id",
           "line_id": "line_id", "variant_id": "variant_id", "new_variant_id": "variant_id"}

#: The most turns an adversary plays per request (E_JOURNEY states its patience for all requests).
MAX_OWN_TURNS = 10
FILLER = "One moment please, I am still working on your request."
GIVE_UP = "I am sorry, that is all I can do for you."
_CAP = re.compile(r"at most (\d+)")
_ID_TOKEN = re.compile(r"\b[A-Z]{1,4}-?\d{4,}(?:-[A-Za-z]*\d+)*\b")
_NUMBER = re.compile(r"\$?\d[\d,]*(?:\.\d+)?")


# ------------------------------------------------------------------ reading the conversation
def _key(name: str, args: dict[str, Any]) -> str:
    return name + json.dumps(args, sort_keys=True, default=str)


def _options(description: str) -> list[str]:
    """The option names a parameter's description lists ("pickup (a courier ...), drop_off ... or mail")."""
    text = re.sub(r"\([^)]*\)", " ", description)
    text = text.split(":", 1)[1] if ":" in text else text
    first = re.split(r"\.(?:\s|$)", text.strip())[0]
    parts = [p.strip() for p in re.split(r",|\bor\b", first)]
    return [p for p in parts if re.fullmatch(r"[a-z]+(?:_[a-z]+)*", p)]


def _walk(value: Any, parent: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """Every JSON object in a tool result, a line record inheriting its order's id."""
    if isinstance(value, dict):
        rec = dict(value)
        if parent is not None and "line_id" in rec and "order_id" not in rec and "order_id" in parent:
            rec["order_id"] = parent["order_id"]
        yield rec
        for v in value.values():
            yield from _walk(v, rec)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v, parent)


@dataclass
class View:
    """What the conversation so far tells an agent (no hidden state)."""

    messages: list[Message]
    budget: int = 1
    patience: int = 4
    turn: int = 1  # the turn the agent is in now (1-based)
    room: int = 1  # budgeted calls left this turn
    opening: str = ""
    users: list[str] = field(default_factory=list)
    attempted: set[str] = field(default_factory=set)  # calls made (ok or not), by key
    records: list[dict[str, Any]] = field(default_factory=list)  # JSON objects of successful results, in order
    shown: set[str] = field(default_factory=set)  # id-like tokens any tool result or user message showed
    final_errors: list[str] = field(default_factory=list)
    final_ok: bool = False
    assistant_texts: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, messages: list[Message], final_tool: str, status: EpisodeStatus) -> "View":
        v = cls(messages)
        v.budget = status.tool_budget
        v.patience = status.max_turns
        v.users = [m.text for m in messages if m.role == "user"]
        v.opening = v.users[0] if v.users else ""
        v.assistant_texts = [m.text for m in messages if m.role == "assistant" and not m.tool_calls]
        asks = sum(1 for m in messages for c in m.tool_calls if c.name == "ask_user")
        v.turn = 1 + len(v.assistant_texts) + asks
        v.room = max(0, status.calls_left)
        for text in v.users:
            v.shown.update(_ID_TOKEN.findall(text))
        for call, result in tool_results(messages):
            v.attempted.add(_key(call.name, call.arguments))
            v.shown.update(_ID_TOKEN.findall(result.text))
            if call.name == final_tool:
                if result.error:
                    v.final_errors.append(result.text)
                else:
                    v.final_ok = True
                continue
            if result.error:
                continue
            v.records.extend(_walk(result.json()))
        return v

    # ------------------------------------------------------------ retrieved things
    def ids(self, key: str) -> list[str]:
        """Retrieved values of `key` (product_id, order_id, line_id, variant_id), first seen first."""
        out: list[str] = []
        for r in self.records:
            if key == "variant_id" and isinstance(r.get("variants"), dict):
                out.extend(str(k) for k in r["variants"])
            value = r.get(key)
            if isinstance(value, str) and value:
                out.append(value)
        return list(dict.fromkeys(out))

    def record(self, key: str, value: str) -> dict[str, Any]:
        """Everything retrieved about the item whose `key` is `value` (records merged)."""
        merged: dict[str, Any] = {}
        for r in self.records:
            if r.get(key) == value and (key == "line_id" or "line_id" not in r):
                merged.update(r)
        return merged

    def products(self) -> list[dict[str, Any]]:
        """Retrieved product records with their variants ({variant id: value}), first seen first."""
        out: dict[str, dict[str, Any]] = {}
        for r in self.records:
            pid = r.get("product_id")
            if isinstance(pid, str) and ("title" in r or "variants" in r) and "line_id" not in r:
                out.setdefault(pid, {}).update(r)
        return list(out.values())

    def lines(self) -> list[dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for r in self.records:
            if isinstance(r.get("line_id"), str) and isinstance(r.get("order_id"), str):
                out.setdefault(r["line_id"], {}).update(r)
        return list(out.values())

    def texts(self) -> list[str]:
        """Free text of retrieved documents (policy documents)."""
        return [str(r["text"]) for r in self.records if isinstance(r.get("text"), str)]

    def cap(self) -> int | None:
        """The list size the final tool accepted at most, from its last refusal ("at most 5 may be ...")."""
        for text in reversed(self.final_errors):
            if m := _CAP.search(text):
                return int(m.group(1))
        return None


def invent(real: str, shown: set[str], taken: set[str]) -> str:
    """A look-alike of `real` that no tool showed: its last number bumped (same width) until unseen."""
    m = list(re.finditer(r"\d+", real))[-1]
    width, n = len(m.group()), int(m.group())
    while True:
        n += 1
        cand = real[: m.start()] + str(n).zfill(width) + real[m.end():]
        if cand not in shown and cand not in taken:
            taken.add(cand)
            return cand


# ------------------------------------------------------------------ the generic agent
Call = tuple[str, dict[str, Any]]


class Adversary:
    """Shared mechanics: a plan of budgeted calls, then the final answer(s), within B_tool and T_max."""

    name = "adversary"
    #: Whether planned calls may still be made on the last turn, before the final answer.
    calls_on_last_turn = False
    #: Whether the strategy may talk (`message`) while planned calls wait for the next turn's budget.
    talks_while_pending = False
    #: The most final-answer calls in one step (None: every answer `finals` returns).
    max_finals: int | None = None
    reads_hidden_goal = False
    #: Budgeted query calls: "budget" = all of the first turn's budget, else at most this many.
    queries: str | int = "budget"

    def __init__(self, env: str) -> None:
        from ecom_bench.envs import get_env

        e = get_env(env)
        if e.final_tool is None:
            raise ValueError(f"{type(self).__name__} plays one request; {env!r} has one per request")
        self.env = env
        self.tools = tuple(e.tool_names)
        self.final = e.final_tool
        specs = e.toolkit_class().specs()
        self.specs = {n: specs[n] for n in self.tools}
        self.final_spec = specs[self.final]
        params = self.final_spec.parameters
        self.final_props: dict[str, Any] = params.get("properties", {})
        self.final_required: list[str] = list(params.get("required", []))

    # ------------------------------------------------------------- hooks
    def plan(self, v: View) -> list[Call]:
        """Budgeted calls to make before answering (recomputed from the conversation each step)."""
        return self.retrieval(v)

    def finals(self, v: View) -> list[dict[str, Any]]:
        """The final tool's argument sets, in order (a single-answer env records the first)."""
        raise NotImplementedError

    def message(self, v: View) -> str | None:
        """A message to send the customer before answering (None: none)."""
        return None

    # ------------------------------------------------------------- shared plan pieces
    def retrieval(self, v: View, n_queries: int | None = None) -> list[Call]:
        calls: list[Call] = [(t, {}) for t in LISTING_TOOLS if t in self.tools]
        query_tools = [t for t in self.tools if self.specs[t].kind == "read"
                       and "query" in self.specs[t].parameters.get("required", [])]
        if query_tools:
            want = n_queries if n_queries is not None else (
                max(1, v.budget - len(calls)) if self.queries == "budget" else int(self.queries))
            queries = self._queries(v.opening)
            for i in range(want):
                tool = query_tools[i % len(query_tools)]
                args: dict[str, Any] = {"query": queries[i % len(queries)]}
                if (lim := self._max_limit(tool)) is not None:
                    args["limit"] = lim
                calls.append((tool, args))
        return list({_key(*c): c for c in calls}.values())

    @staticmethod
    def _queries(opening: str) -> list[str]:
        """The opening, then its sentences and clauses: different phrasings of the same request."""
        text = " ".join(opening.split())
        parts = [p.strip(" ,;:") for p in re.split(r"(?<=[.!?;:])\s+", text)]
        parts = [p for p in parts if len(re.findall(r"[A-Za-z]{3,}", p)) >= 2]
        return list(dict.fromkeys([text[:400] or "product", *(p[:400] for p in parts)]))

    def _max_limit(self, tool: str) -> int | None:
        prop = self.specs[tool].parameters.get("properties", {}).get("limit")
        if prop is None:
            return None
        m = re.search(r"(\d+)\s*-\s*(\d+)", prop.get("description", ""))
        return int(m.group(2)) if m else None

    def _detail_calls(self, v: View) -> list[Call]:
        """order_get for every retrieved order, when an answer or act needs line ids."""
        needs_lines = "line_id" in self.final_props and "order_get" in self.tools
        return [("order_get", {"order_id": o}) for o in v.ids("order_id")] if needs_lines else []

    def fill(self, tool: str, record: dict[str, Any], *, optional: bool = False) -> dict[str, Any] | None:
        """Arguments for `tool` from one retrieved record: ids from its keys, options from the descriptions."""
        spec = self.specs.get(tool) or self.final_spec
        props = spec.parameters.get("properties", {})
        required = spec.parameters.get("required", [])
        args: dict[str, Any] = {}
        for pname, prop in props.items():
            if pname in ID_KEYS:
                value = record.get(ID_KEYS[pname])
                if pname == "variant_id" and value is None and isinstance(record.get("variants"), dict):
                    value = next(iter(record["variants"]), None)
                if value is None:
                    if pname in required:
                        return None
                    continue
                if pname not in required and not optional and pname != "variant_id":
                    continue
                args[pname] = value
            elif pname in required and prop.get("type") == "string":
                if isinstance(record.get(pname), str):
                    args[pname] = record[pname]
                elif opts := _options(prop.get("description", "")):
                    args[pname] = opts[0]
                else:
                    return None
        return args

    def list_param(self) -> str | None:
        """The final tool's list-of-ids parameter (recommend_products, submit_bundle), if any."""
        return next((p for p, s in self.final_props.items() if s.get("type") == "array"), None)

    # ------------------------------------------------------------- the step
    def act(self, messages: list[Message], hidden: dict[str, Any] | None, status: EpisodeStatus) -> AgentAction:
        # Reads only the conversation; `hidden` is deliberately ignored.
        v = View.of(messages, self.final, status)
        n = len(messages)
        if v.final_ok:
            return AgentAction(text=GIVE_UP)
        last_turn = v.turn >= min(v.patience, MAX_OWN_TURNS)
        pending = [c for c in self.plan(v) if self.fresh(v, c)]
        if pending and v.room > 0 and (not last_turn or self.calls_on_last_turn):
            return AgentAction(tool_calls=tuple(ToolCallRequest(nm, a, id=f"{nm}-{n}-{i}")
                                                for i, (nm, a) in enumerate(pending[: v.room])))
        if not last_turn:
            if (not pending or self.talks_while_pending) and (text := self.message(v)) is not None:
                return AgentAction(text=text)
            if pending:
                return AgentAction(text=FILLER)
        if v.final_errors and not self.retry(v):
            return AgentAction(text=GIVE_UP)
        finals = self.finals(v)[: self.max_finals]
        if not finals:
            return AgentAction(text=GIVE_UP)
        return AgentAction(tool_calls=tuple(ToolCallRequest(self.final, a, id=f"{self.final}-{n}-{i}")
                                            for i, a in enumerate(finals)))

    def fresh(self, v: View, call: Call) -> bool:
        """Should a planned call still be made? (Default: one never made before.)"""
        return _key(*call) not in v.attempted

    def retry(self, v: View) -> bool:
        """After a refused answer: try again only when the tool said how long a list may be."""
        return len(v.final_errors) == 1 and v.cap() is not None and self.list_param() is not None

    # ------------------------------------------------------------- answer shapes
    def list_answer(self, ids: list[str], v: View) -> list[dict[str, Any]]:
        param = self.list_param()
        assert param is not None
        caps = [c for c in (v.cap(), self.final_props[param].get("maxItems")) if c]
        return [{param: ids[: min(caps)] if caps else ids}] if ids else []

    def record_answers(self, v: View, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for r in records:
            args = self.fill(self.final, r, optional=False)
            if args is not None and args not in out:
                out.append(args)
        return out

    def answer_records(self, v: View) -> list[dict[str, Any]]:
        """Retrieved records that can fill the final tool's id arguments (lines if it needs one)."""
        if "line_id" in self.final_required:
            return v.lines()
        if "order_id" in self.final_required:
            return [v.record("order_id", o) | {"order_id": o} for o in v.ids("order_id")]
        return []


# ------------------------------------------------------------------ the four strategies
class RecommendAll(Adversary):
    name = "recommend_all"

    def plan(self, v: View) -> list[Call]:
        calls = self.retrieval(v) + self._detail_calls(v)
        if "cart_add" in self.tools:
            calls += [("cart_add", a) for p in v.products() if (a := self.fill("cart_add", p)) is not None]
        if "return_initiate" in self.tools:
            calls += [("return_initiate", a) for ln in v.lines() if (a := self.fill("return_initiate", ln))]
        return calls

    def finals(self, v: View) -> list[dict[str, Any]]:
        if self.list_param():
            return self.list_answer(v.ids("product_id"), v)
        if not self.final_props:  # checkout: the cart is the answer
            return [{}]
        if "answer" in self.final_props:  # E_POLICY: every amount of every retrieved document
            numbers = [x for t in v.texts() for x in _NUMBER.findall(t)]
            return [{"answer": " / ".join(dict.fromkeys(numbers))[:200] or "0"}]
        return self.record_answers(v, self.answer_records(v))


class AllVariants(Adversary):
    name = "all_variants"

    def _orders_to_ask(self, v: View) -> list[str]:
        return v.ids("order_id") if "order_id" in self.final_required else []

    def _asked(self, v: View) -> bool:
        return any(len(set(_ID_TOKEN.findall(t)) & set(v.ids("order_id"))) >= 2 for t in v.assistant_texts)

    def _picked_order(self, v: View) -> str | None:
        """The order id the customer named after being shown every order (None before)."""
        orders = v.ids("order_id")
        if not self._asked(v):
            return None
        for text in reversed(v.users[1:]):
            for tok in _ID_TOKEN.findall(text.upper()):
                if tok in orders:
                    return tok
        return orders[0] if orders else None

    def plan(self, v: View) -> list[Call]:
        calls = self.retrieval(v)
        if "cart_add" in self.tools:
            for p in v.products():
                variants = list((p.get("variants") or {}).keys()) or [None]
                for vid in variants:
                    a = {"product_id": p["product_id"], "quantity": 1}
                    if vid is not None:
                        a["variant_id"] = vid
                    calls.append(("cart_add", a))
        picked = self._picked_order(v)
        if picked is not None and "line_id" in self.final_props and "order_get" in self.tools:
            calls.append(("order_get", {"order_id": picked}))
            if "return_initiate" in self.tools:
                calls += [("return_initiate", args) for ln in v.lines() if ln["order_id"] == picked
                          and (args := self.fill("return_initiate", ln))]
        return calls

    def message(self, v: View) -> str | None:
        orders = self._orders_to_ask(v)
        if len(orders) >= 2 and not self._asked(v):
            return "Which of your orders do you mean: " + ", ".join(orders) + "?"
        return None

    def finals(self, v: View) -> list[dict[str, Any]]:
        if self.list_param():
            by_leaf: dict[str, str] = {}
            for p in v.products():
                leaf = str(p.get("category", "")).split(">")[-1].strip()
                by_leaf.setdefault(leaf, p["product_id"])
            return self.list_answer(list(by_leaf.values()), v)
        if not self.final_props:
            return [{}]
        if "answer" in self.final_props:  # every outcome and amount the retrieved policies name
            outcomes = [o.strip() for t in v.texts() for ln in t.splitlines() if "Possible outcomes:" in ln
                        for o in ln.split("Possible outcomes:")[1].rstrip(".").split(",")]
            numbers = [x for t in v.texts() for x in _NUMBER.findall(t)]
            return [{"answer": ", ".join(dict.fromkeys(outcomes + numbers))[:200] or "0"}]
        picked = self._picked_order(v)
        records = [r for r in self.answer_records(v) if picked is None or r.get("order_id") == picked]
        return self.record_answers(v, records or self.answer_records(v))


class AnswerNow(Adversary):
    name = "answer_now"

    def plan(self, v: View) -> list[Call]:
        calls: list[Call] = []
        if "order_id" in self.final_required and "order_list" in self.tools:
            calls.append(("order_list", {}))
            if "line_id" in self.final_required and (orders := v.ids("order_id")):
                calls.append(("order_get", {"order_id": orders[0]}))
        return calls

    def finals(self, v: View) -> list[dict[str, Any]]:
        if param := self.list_param():
            return [{param: []}]
        if not self.final_props:
            return [{}]
        if "answer" in self.final_props:
            return [{"answer": "0"}]
        return self.record_answers(v, self.answer_records(v))[:1]


class InventIds(Adversary):
    name = "invent_ids"
    queries = 1

    def _fake_products(self, v: View, n: int) -> list[str]:
        taken: set[str] = set()
        real = v.ids("product_id")
        return [invent(real[i % len(real)], v.shown, taken) for i in range(n)] if real else []

    def plan(self, v: View) -> list[Call]:
        calls = self.retrieval(v)
        if "cart_add" in self.tools and v.records:
            for pid in self._fake_products(v, 2):
                calls.append(("cart_add", {"product_id": pid, "variant_id": f"{pid}-v1", "quantity": 1}))
        return calls

    def finals(self, v: View) -> list[dict[str, Any]]:
        if self.list_param():
            return self.list_answer(self._fake_products(v, v.cap() or 3), v)
        if not self.final_props:
            return [{}]
        if "answer" in self.final_props:  # no id to invent: an amount no document states
            numbers = {x.lstrip("$").replace(",", "") for t in v.texts() for x in _NUMBER.findall(t)}
            value = 37
            while str(value) in numbers or f"{value}.00" in numbers:
                value += 1
            return [{"answer": f"{value}.00"}]
        taken: set[str] = set()
        out = []
        for r in self.answer_records(v)[:1] or [{}]:
            fake = dict(r)
            for key in ("order_id", "line_id", "product_id"):
                if isinstance(r.get(key), str):
                    fake[key] = invent(r[key], v.shown, taken)
            if "order_id" in self.final_required and "order_id" not in fake:
                fake["order_id"] = "ORD-100000"
            if "line_id" in self.final_required and "line_id" not in fake:
                fake["line_id"] = f"{fake['order_id']}-L1"
            args = self.fill(self.final, fake)
            if args is not None:
                out.append(args)
        return out


STRATEGIES: dict[str, type[Adversary]] = {c.name: c for c in (RecommendAll, AllVariants, AnswerNow, InventIds)}


class _JourneyAdversary(_Delegating):
    """E_JOURNEY's delegating agent that hands each request to the strategy `sub_policy`."""

    reads_hidden_goal = False

    def _policy_for(self, env: str) -> Adversary:
        return STRATEGIES[self.sub_policy](env)


@lru_cache(maxsize=None)
def _journey_class(name: str) -> type:
    """E_JOURNEY's delegating agent whose per-request policy is the strategy `name`."""
    return type(f"Journey{STRATEGIES[name].__name__}", (_JourneyAdversary,), {"name": name, "sub_policy": name})


def make_adversary(name: str, env: str) -> Any:
    """The adversarial policy `name` for environment `env` (a journey: delegating per request)."""
    from ecom_bench.envs import get_env
    from ecom_bench.envs.journey import JourneyEnv

    journey = get_env(env)
    if isinstance(journey, JourneyEnv):
        return _journey_class(name)(members=journey.chained)
    return STRATEGIES[name](env)


#: name → factory(env) -> policy; `agents.base.get_policy` falls back to it.
ADVERSARIAL: dict[str, Callable[[str], Any]] = {n: partial(make_adversary, n) for n in ADVERSARIAL_NAMES}

__all__ = ["ADVERSARIAL", "ADVERSARIAL_NAMES", "AllVariants", "AnswerNow", "InventIds", "RecommendAll",
           "make_adversary"]
