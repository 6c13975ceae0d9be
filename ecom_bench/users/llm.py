"""`LLMPhraser`: a language model words the customer's decisions, behind guards.

The customer still decides everything in code (the act, the slots revealed, corrections,
the end); the model only rewrites the reference draft (the template words) as the customer's
next message. Its prompt gives a speaking style, the conversation from the customer's side,
the draft, the facts that must be conveyed and the values that must not be said.

A model's words are checked before the agent sees them (`check_reply`): a reply that says a
withheld value, drops a fact the decision conveys, names an id the agent was never shown, is
empty, breaks character, or says goodbye when the decision does not end the conversation (or
fails to when it does) is asked for once more, then replaced by the draft. `GuardStats` counts
what the guards did, per episode.

`generate` is any callable from chat messages (``[{"role", "content"}]``) to text, sync or
async: the Inspect front passes a model of the `user` role, a trainer any client. With a
`cache`, the same prompt to the same `model_id` gives the same words without a call.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ecom_bench.users.orders import ORDER_ID_RE
from ecom_bench.users.phrasing import CustomerDecision, PhrasingContext, PhrasingError, template_text

ChatMessages = list[dict[str, str]]
#: A customer model: chat messages -> the customer's words (sync or async).
Generate = Callable[[ChatMessages], "Awaitable[str] | str"]

_T = TypeVar("_T")

#: The checks, in the order they are applied (the first that fails names the failure).
CHECKS = ("empty", "character", "withheld", "dropped", "invented_id", "early_end", "missing_end")

# ----------------------------------------------------------------------------- the checks
#: Ids the envs and catalogues use: products ("P0001234", "P0001234-v2"), orders and lines
#: ("ORD-123456", "ORD-123456-L1"), rules ("MDSC-6811"), shipments, ASIN-style catalogue ids.
_ID = re.compile(r"\b(?:[A-Z]{1,4}-?\d{4,}(?:-[A-Za-z]*\d+)*|B0[A-Z0-9]{8})\b")
_SUFFIX = re.compile(r"(?:-(?:v|L)\d+)+$")

#: A customer leaving: what every goodbye template says, and what a model says instead.
_GOODBYE = re.compile(
    r"\b(?:good-?bye|bye|farewell|i(?:'ve| have) got to go|i (?:have|need) to go|i(?:'m| am) (?:leaving|off|done here)"
    r"|(?:look|shop|go) (?:elsewhere|somewhere else)|shop another time|try again (?:another|some other) time"
    r"|(?:sort|figure) (?:it|this) out (?:myself|another way|on my own)|do this another way|forget it"
    r"|i give up|never mind|i'?ll take my business)\b", re.I)

#: Words a customer never says: the model speaking as itself, about its instructions, or as the agent.
_OUT_OF_CHARACTER = re.compile(
    r"\b(?:as an? (?:ai|assistant|language model|chatbot)|i(?:'m| am) (?:an? |just an? )?(?:ai|assistant|language "
    r"model|chatbot|bot|simulated)|language model|(?:system|the|my|this|your) prompt|my instructions|the instructions|reference "
    r"draft|the draft|withheld|must not (?:say|mention|reveal)|simulated (?:customer|user)|role-?play|"
    r"here(?:'s| is) (?:the|my|a) (?:customer'?s? )?(?:next )?(?:message|reply|response)|"
    r"how (?:can|may) i (?:help|assist) you)\b", re.I)


def _pattern(value: str) -> re.Pattern[str]:
    """`value` as a whole word or number ("4" is not in "4.5" nor "$40")."""
    return re.compile(rf"(?<![A-Za-z0-9])(?<!\d[.,]){re.escape(value)}(?![A-Za-z0-9]|[.,]\d)", re.I)


def _count(value: str, text: str) -> int:
    return len(_pattern(value).findall(text)) if value else 0


def ids_in(text: str) -> set[str]:
    """The id-shaped tokens of `text` (order ids in any case, upper-cased)."""
    return {m.upper() for m in ORDER_ID_RE.findall(text)} | set(_ID.findall(text))


def says_goodbye(text: str) -> bool:
    """Whether `text` ends the conversation (a goodbye, leaving, giving up)."""
    return _GOODBYE.search(text) is not None


def breaks_character(text: str) -> bool:
    """Whether `text` speaks as a model or an agent, or about the instructions."""
    return _OUT_OF_CHARACTER.search(text) is not None


def check_reply(text: str, decision: CustomerDecision, context: PhrasingContext, draft: str | None = None) -> str | None:
    """The first check `text` fails as the customer's words for `decision` (None: it passes).

    The draft (the template words, leak-free by construction) is the yardstick: a withheld value
    leaks when the reply says it more often than the draft does (a quantity "3" may be one item's
    stated count and another's withheld one), and an id is invented unless the agent was shown
    it, wrote it, or the draft or the decision's facts carry it.
    """
    draft = template_text(decision.say) if draft is None else draft
    if not text.strip():
        return "empty"
    if breaks_character(text):
        return "character"
    if any(_count(v, text) > _count(v, draft) for v in decision.withhold):
        return "withheld"
    if any(_count(v, text) == 0 for v in decision.must_appear):
        return "dropped"
    known = set(context.seen_ids) | ids_in(draft) | ids_in(" ".join(decision.must_appear))
    known |= ids_in(" ".join(words for _, words in context.conversation))
    if any(i not in known and _SUFFIX.sub("", i) not in known for i in ids_in(text)):
        return "invented_id"
    if says_goodbye(text) and not decision.ends_episode:
        return "early_end"
    if decision.ends_episode and not says_goodbye(text):
        return "missing_end"
    return None


# ----------------------------------------------------------------------------- the counts
@dataclass
class GuardStats:
    """What the guards did in one episode: replies asked for, accepted at once, retried, replaced by
    the draft, and how often each check failed (`failed`, by `CHECKS` name)."""

    replies: int = 0
    accepted: int = 0
    retried: int = 0
    fell_back: int = 0
    failed: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {"replies": self.replies, "accepted": self.accepted, "retried": self.retried,
                "fell_back": self.fell_back, "failed": {k: self.failed[k] for k in CHECKS if self.failed[k]}}


# ----------------------------------------------------------------------------- the prompt
DRAFT_FENCE = '"""'
_STYLES = ("brief and to the point", "friendly and a little chatty", "polite and fairly formal",
           "casual and relaxed")

_SYSTEM = """You are role-playing a customer writing to an online shop's customer-service agent in a chat.
Write only the customer's next chat message: plain text, no quotes, no labels, no notes.
Your style: {style}.
What to say is decided already. Say exactly that, in your own words:
- Every fact marked "must say" must appear word for word (names, numbers and ids exactly as given).
- Never mention anything listed under "must not say", not even a hint of the value.
- Add no facts, products, order numbers, ids, prices or requirements of your own.
- Never say goodbye or end the conversation unless told to; when told to, say you are leaving.
- Stay in character: you are the customer, not an assistant; never mention these instructions."""


def _style(context: PhrasingContext) -> str:
    """A speaking style drawn from the persona. The persona's priorities themselves are hidden (the
    verifier ranks by them; the customer never states them), so the prompt never gives them."""
    key = json.dumps(sorted((context.persona or {}).items()))
    return _STYLES[int(hashlib.sha256(key.encode()).hexdigest(), 16) % len(_STYLES)]


def build_prompt(decision: CustomerDecision, context: PhrasingContext, draft: str,
                 rejected: str | None = None) -> ChatMessages:
    """The chat messages asking for the customer's next message (`rejected`: why the last try failed)."""
    lines = [f"Shop department: {context.env}.", "", "The conversation so far:"]
    lines += [f"{'You' if role == 'customer' else 'Agent'}: {text}" for role, text in context.conversation] or [
        "(none yet: this is your first message)"]
    lines += ["", f"Your message now ({decision.act.value}), as a draft to reword:", DRAFT_FENCE, draft, DRAFT_FENCE, ""]
    if decision.must_appear:
        lines += ["Must say (word for word):", *(f"- {v}" for v in decision.must_appear), ""]
    if decision.withhold:
        lines += ["Must not say:", *(f"- {v}" for v in decision.withhold), ""]
    lines.append("This message ends the conversation: say you are leaving." if decision.ends_episode else
                 "The conversation goes on after this message: do not say goodbye.")
    if rejected:
        lines += ["", f"Your last attempt was rejected: {rejected}. Write the message again."]
    lines.append("Reply with the customer's message only.")
    return [{"role": "system", "content": _SYSTEM.format(style=_style(context))},
            {"role": "user", "content": "\n".join(lines)}]


_WHY = {"empty": "it was empty", "character": "it stepped out of the customer's role",
        "withheld": "it said something listed under 'must not say'",
        "dropped": "it left out a fact you must say", "invented_id": "it named an id you were never given",
        "early_end": "it ended the conversation", "missing_end": "it did not say you are leaving"}


# ----------------------------------------------------------------------------- the cache
def cache_key(model_id: str, messages: ChatMessages) -> str:
    """The cache key of a prompt: the model and the full messages."""
    return hashlib.sha256(json.dumps([model_id, messages], sort_keys=True).encode()).hexdigest()


class FileCache(MutableMapping[str, str]):
    """A cache kept on disk, one file per prompt: replies survive the process (reruns, other workers)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.txt"

    def __getitem__(self, key: str) -> str:
        try:
            return self._path(key).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise KeyError(key) from None

    def __setitem__(self, key: str, value: str) -> None:
        tmp = self._path(key).with_suffix(".tmp")
        tmp.write_text(value, encoding="utf-8")
        tmp.replace(self._path(key))

    def __delitem__(self, key: str) -> None:
        self._path(key).unlink()

    def __iter__(self) -> Iterator[str]:
        return (p.stem for p in self.directory.glob("*.txt"))

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*.txt"))


# ----------------------------------------------------------------------------- the phraser
class LLMPhraser:
    """Words each decision with `generate`, checked by `check_reply`: a failed reply is asked for
    again `retries` times (the prompt says why), then replaced by the template draft.

    Use one per episode: `guard_stats` counts that episode's guard actions. `model_id` names the
    model in cache keys; `cache` (any mutable mapping: a dict, a `FileCache`) answers a prompt seen
    before without a call.
    """

    def __init__(self, generate: Generate, *, model_id: str = "", cache: MutableMapping[str, str] | None = None,
                 retries: int = 1) -> None:
        if not callable(generate):
            raise TypeError(f"generate must be a callable (chat messages -> text), got {type(generate).__name__}")
        self.generate = generate
        self.model_id = model_id
        self.cache = cache
        self.retries = retries
        self.guard_stats = GuardStats()

    async def aphrase(self, decision: CustomerDecision, context: PhrasingContext) -> str:
        draft = template_text(decision.say)
        self.guard_stats.replies += 1
        rejected: str | None = None
        for attempt in range(self.retries + 1):
            text = (await self._ask(build_prompt(decision, context, draft, rejected))).strip()
            failed = check_reply(text, decision, context, draft)
            if failed is None:
                if attempt == 0:
                    self.guard_stats.accepted += 1
                return text
            self.guard_stats.failed[failed] += 1
            if attempt < self.retries:
                self.guard_stats.retried += 1
            rejected = _WHY[failed]
        self.guard_stats.fell_back += 1
        return draft

    def phrase(self, decision: CustomerDecision, context: PhrasingContext) -> str:
        """`aphrase` for a caller without an event loop (or inside one: then on a thread of its own)."""
        return run_sync(self.aphrase(decision, context))

    async def _ask(self, messages: ChatMessages) -> str:
        key = cache_key(self.model_id, messages)
        if self.cache is not None and key in self.cache:
            return self.cache[key]
        if _is_async(self.generate):
            out = await self.generate(messages)  # type: ignore[misc]
        else:  # a blocking client: off the event loop (it may run one of its own)
            out = await asyncio.to_thread(self.generate, messages)
            if inspect.isawaitable(out):
                out = await out
        if not isinstance(out, str):
            raise PhrasingError(f"the customer model returned {type(out).__name__}, not text")
        if self.cache is not None:
            self.cache[key] = out
        return out


def _is_async(fn: object) -> bool:
    """Whether calling `fn` gives a coroutine (an async function, or an object with an async `__call__`)."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


def run_sync(coro: Awaitable[_T]) -> _T:
    """Run `coro` to completion from sync code, on a thread of its own if this one runs an event loop."""
    async def wrapped() -> _T:
        return await coro

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrapped())
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, wrapped()).result()


def guard_stats(phraser: object) -> dict[str, Any] | None:
    """A phraser's guard counts as data (None for one without guards, such as the templates)."""
    stats = getattr(phraser, "guard_stats", None)
    return stats.to_dict() if isinstance(stats, GuardStats) else None


def guard_summary(guards: dict[str, Any]) -> str:
    """The guard counts in words (the score explanation's last line)."""
    failed = ", ".join(f"{check} ×{n}" for check, n in guards["failed"].items())
    return (f"Customer worded by a model: {guards['replies']} replies, {guards['accepted']} accepted at once, "
            f"{guards['retried']} retried, {guards['fell_back']} replaced by the template words"
            + (f" (failed checks: {failed})." if failed else "."))


__all__ = ["CHECKS", "FileCache", "Generate", "GuardStats", "LLMPhraser", "breaks_character", "build_prompt",
           "cache_key", "check_reply", "guard_stats", "guard_summary", "ids_in", "says_goodbye"]
