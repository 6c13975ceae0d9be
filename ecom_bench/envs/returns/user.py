"""E_RETURN's template customer: asks for a return or exchange, withholds slots, corrects, confirms.

Slots (each withheld at p_missing(d)): "order" (the order id or the description),
"item" (which line, when the order id is given), "reason", "method", and "variant"
(the one wanted, for an exchange). Any request from the agent discloses: what it asks
about (`ASKS`), or everything withheld when it names nothing withheld
(`Customer.to_disclose`); "go ahead" only once nothing is withheld, and it is a plain
CONTINUE (only the customer seeing their return started is a CONFIRM). The customer
sees their returns page: a return started for another line is objected to at once and
counts as a strike (`Customer.count_mistake`: two and they give up), and so does one for the right
line with details they did not ask for (the method, the reason, a return instead of an
exchange, another variant): they say which, in their own words, and never thank the agent for
it (the verifier scores such a return b = 0). A claim that an eligible
item cannot be returned is disputed with the delivery date. Order ids the agent names
get `OrderUserBase.order_feedback`: the same reply whether or not theirs is among them.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import ClassVar

from ecom_bench.catalog.taxonomy import attribute_label
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.returns.goal import ReturnsGoal
from ecom_bench.envs.returns.phrases import PHRASES
from ecom_bench.users import UserAct, is_request, says, topics_asked
from ecom_bench.users.messages import Disclosure
from ecom_bench.users.orders import OrderUserBase
from ecom_bench.users.phrases import PhraseTable
from ecom_bench.users.phrasing import CustomerDecision, Phrase, Speech, choose, template_text
from ecom_bench.users.understanding import is_check_in
from ecom_bench.world import World
from ecom_bench.domains.orders.book import OrderBook, returns_of
from ecom_bench.domains.orders.records import ReturnRecord
from ecom_bench.domains.orders.references import RefKind

#: Words that carry the meaning of a reason or method: never noised.
KEY_WORDS = ("working", "defective", "work", "damaged", "broken", "wrong", "different", "described", "description",
             "fit", "mind", "need", "courier", "pick", "picked", "drop", "drop-off", "mail", "exchange", "return",
             "replacement", "brand", "stars", "under", "one")
#: What a request asks about, per slot. Topic words only *narrow* a reply
#: (`Customer.to_disclose`): a request naming none of them gets every withheld slot, so
#: these are kept specific (a cue of one slot inside another slot's question would
#: narrow the reply to the wrong slot), and bare words like "item" or "return" are not cues.
ASKS = {
    "order": ("which order", "what order", "order number", "order id", "order #", "order no", "which purchase",
              "when did you", "when was it", "what date", "which date", "placed", "that order", "the order",
              "your orders", "which of your", "most recent order", "referring to", "which one do you mean"),
    "item": ("which item", "what item", "which product", "what product", "which of the items",
             "which of the products", "which line", "what are you sending", "what are you returning",
             "returning everything", "is it the", "which one do you want to", "which one would you like to"),
    "reason": ("reason", "why", "wrong with", "went wrong", "go wrong", "problem", "issue", "damaged", "faulty",
               "defective", "broken", "not work", "doesn't work", "change your mind", "changed your mind",
               "made you decide", "made you want", "unhappy", "as expected"),
    "method": ("method", "how would you like to send", "how do you want to send", "how would you like to return",
               "how do you want to return", "how would you prefer", "how you'd like", "send it back",
               "ship it back", "get it back to us", "pickup", "pick up", "pick-up", "pick it up", "drop", "mail",
               "courier", "collection", "label", "bring it", "ship it", "return option", "sending it",
               "get it to us", "how will you send", "how will you return"),
    "variant": ("size", "color", "colour", "variant", "instead", "swap it for", "exchange it for", "version",
                "option", "replacement", "larger", "smaller"),
}
INELIGIBLE_CLAIMS = ("not eligible", "ineligible", "can't be returned", "cannot be returned", "can not be returned",
                     "final sale", "final-sale", "window has closed", "window closed", "past the return window",
                     "already been returned", "already returned", "not returnable", "isn't returnable")

@dataclass(frozen=True)
class UserScript:
    """The words this customer uses, drawn once at build time."""

    noun: str
    item: str  # "the VoltEdge PowerPort Wall Charger" or "the wall charger"
    reason: Phrase
    method: Phrase
    variant_label: str
    window: int | None
    replacement: Phrase | None  # the request sentence, if a replacement is wanted

    @classmethod
    def draw(cls, goal: ReturnsGoal, noun: str, item: str, attribute: str | None, window: int | None,
             rng: random.Random, a_replacement: str = "") -> "UserScript":
        """`a_replacement` is the noun as the replacement request says it ("a replacement mouse",
        "a replacement pair of jeans"); by default "a replacement {noun}"."""
        wish = goal.replacement
        replacement = None
        if wish is not None:
            digits = {"max_price": ".0f", "min_rating": ".1f"}.get(wish.kind)
            value = format(float(wish.value), digits) if digits else ""
            constraint = choose(PHRASES, f"wish_{wish.kind}", {"value": value})
            what = a_replacement or choose(PHRASES, "a_replacement", {"noun": noun})
            replacement = choose(PHRASES, "replacement", {"constraint": constraint, "what": what})
        return cls(noun, item, choose(PHRASES, f"reason_{goal.reason}", rng=rng),
                   choose(PHRASES, f"method_{goal.method}", rng=rng),
                   attribute_label(attribute) if attribute else "version", window, replacement)


class ReturnsUser(OrderUserBase):
    rng_prefix: ClassVar[tuple[str, ...]] = ("returns",)
    phrases: ClassVar[PhraseTable] = {**OrderUserBase.phrases, **PHRASES}

    def __init__(self, goal: ReturnsGoal, script: UserScript, difficulty: Difficulty, seed: int,
                 disclosure: Disclosure, intent: int = 0, alternates: tuple[str, ...] = ()) -> None:
        protect = {goal.reference_text, goal.order_id, script.item, script.noun, *KEY_WORDS, *alternates}
        if goal.new_variant_value:
            protect.add(goal.new_variant_value)
        if goal.replacement is not None:
            protect.update({str(goal.replacement.value), template_text(script.replacement) if script.replacement else ""})
        super().__init__(difficulty, seed, disclosure, frozenset(protect))
        self.goal = goal
        self.script = script
        self.intent = intent
        self.target_order_id = goal.order_id
        self.direct = goal.reference["kind"] == RefKind.ORDER_ID.value
        self.full_reference = (template_text(self.line("my_order_item", id=goal.order_id, item=script.item))
                               if self.direct else goal.reference_text)
        self.alternates = alternates
        self._objected: set[str] = set()  # wrong returns already objected to
        self._thanked = False

    def slot_value(self, slot: str) -> str | None:
        if slot == "item":
            return self.script.item
        if slot == "variant":
            return self.goal.new_variant_value
        return super().slot_value(slot)

    # --------------------------------------------------------- the request
    def _ref_part(self) -> Phrase | str:
        s, g = self.script, self.goal
        if not self.direct:
            return g.reference_text if self.told("order") else self.line("vague_ref", noun=s.noun)
        if self.told("order"):
            return self.line("from_my_order", item=s.item if self.told("item") else self.line("an_item"), id=g.order_id)
        return self.line("bought_recently", item=s.item) if self.told("item") else self.line("something_bought_recently")

    def _action(self) -> Phrase:
        g = self.goal
        if g.kind == "return":
            return self.line("return", ref=self._ref_part())
        if self.told("variant"):
            return self.line("exchange_for", ref=self._ref_part(), value=g.new_variant_value or "")
        return self.line("exchange_other", ref=self._ref_part(), label=self.script.variant_label)

    def _slot_answer(self, slot: str) -> Phrase:
        s, g = self.script, self.goal
        if slot == "order":
            return (self.line("order_id", id=g.order_id) if self.direct
                    else self.line("i_mean", ref=g.reference_text))
        return {
            "item": lambda: self.line("item", item=s.item),
            "reason": lambda: s.reason,
            "method": lambda: s.method,
            "variant": lambda: self.line("variant", value=g.new_variant_value or ""),
        }[slot]()

    def decide_opening(self) -> CustomerDecision:
        rng = self.rng("opening")
        parts = [self.pick(rng, "greeting"), self._action()]
        if self.told("reason"):
            parts.append(self.script.reason)
        if self.told("method"):
            parts.append(self.script.method)
        if self.script.replacement:
            parts.append(self.script.replacement)
        if (signal := self.missing_signal(rng)) is not None:
            parts.append(signal)
        parts.append(self.pick(rng, "closing"))
        return self.decision(UserAct.OPENING, Speech(tuple(parts)), rng)

    # ------------------------------------------------------------- replies
    def decide_reply(self, agent_text: str, world: World, last_turn: bool) -> CustomerDecision:
        rng = self.next_reply_rng()
        if last_turn:
            return self.goodbye(rng)
        wrong = [r for r in world.state(OrderBook).returns if r.intent == self.intent and r.line_id != self.goal.line_id
                 and r.return_id not in self._objected]
        if wrong:
            return self._wrong_return(wrong, world, rng)
        mine = [r for r in returns_of(world, self.goal.line_id) if r.intent == self.intent]
        if mine and not self._thanked and mine[-1].return_id not in self._objected:
            problems = self._wrong_details(mine[-1])
            if problems:
                return self._wrong_details_reply(mine[-1], problems, rng)
            self._thanked = True  # the customer checked their returns page: confirmed once
            return self.decision(UserAct.CONFIRM, self.pick(rng, "started"), rng)
        feedback = self.order_feedback(agent_text, rng)
        if feedback is not None:
            return feedback
        text_l = agent_text.lower()
        if not mine and any(says(text_l, c) for c in INELIGIBLE_CLAIMS):
            return self._eligibility_feedback(rng)
        if is_request(agent_text):
            return self._answer(agent_text, rng)
        if mine:
            return self.decision(UserAct.CONTINUE, self.pick(rng, "thanks"), rng)
        what = "exchange" if self.goal.kind == "exchange" else "return"
        return self.decision(UserAct.CONTINUE, self.line("go_ahead_with", what=what), rng)

    def _wrong_return(self, wrong: list, world: World, rng: random.Random) -> CustomerDecision:
        """A return started for another line: the customer sees it on their returns page and objects
        (a strike: at `max_strikes` they give up)."""
        self._objected.update(r.return_id for r in wrong)
        goodbye = self.count_mistake(rng)
        if goodbye is not None:
            return goodbye
        self._disclosure.reveal("order")
        self._disclosure.reveal("item")
        p = world.product(wrong[-1].product_id)
        text = self.line("wrong_line", kind=wrong[-1].kind, title=p.title if p else wrong[-1].product_id,
                         ref=self.full_reference)
        return self.decision(UserAct.CORRECT, text, rng)

    def _wrong_details(self, record: ReturnRecord) -> list[tuple[str, Phrase]]:
        """(slot, sentence) for each detail of the customer's own return that is not what they asked for,
        as their returns page shows it: the kind, the variant wanted, the reason, the method."""
        g, s = self.goal, self.script
        problems = []
        if record.kind != g.kind:
            problems.append(("variant", self.line("not_a_refund")) if g.kind == "exchange"
                            else ("", self.line("not_an_exchange")))
        elif g.kind == "exchange" and record.new_variant_id != g.new_variant_id:
            problems.append(("variant", self.line("wrong_new_variant", label=s.variant_label,
                                                  value=g.new_variant_value or "")))
        if record.reason.value != g.reason:
            problems.append(("reason", self.line("wrong_reason", reason=s.reason)))
        if record.method.value != g.method:
            problems.append(("method", self.line("wrong_method", method=s.method)))
        return problems

    def _wrong_details_reply(self, record: ReturnRecord, problems: list[tuple[str, Phrase]],
                             rng: random.Random) -> CustomerDecision:
        """The right item, started with details the customer did not ask for (a strike, like a wrong line):
        they object in their own words; the started return cannot be redone, so this tells the agent
        nothing it could still act on, but a confirmation would be untrue."""
        self._objected.add(record.return_id)
        goodbye = self.count_mistake(rng)
        if goodbye is not None:
            return goodbye
        for slot, _ in problems:
            if slot in self._disclosure.told:  # the customer has now said it
                self._disclosure.reveal(slot)
        text = self.line("not_as_asked", kind=record.kind)
        return self.decision(UserAct.CORRECT, Speech((text, *(sentence for _, sentence in problems))), rng)
    def _asked(self, agent_text: str) -> list[str]:
        asked = topics_asked(agent_text, ASKS)
        if not self.direct and "item" in asked:
            # a customer who described the line has no separate "item" slot: "which item?" asks
            # for that description, not for another slot asked beside it
            asked = [s for s in asked if s != "item"] + ([] if "order" in asked else ["order"])
        variant_values = re.findall(r"[a-z0-9]+", (self.goal.new_variant_value or "").lower())
        if self.goal.kind == "exchange" and variant_values and says(agent_text.lower(), " ".join(variant_values)):
            asked.append("variant")
        return list(dict.fromkeys(asked))

    def _answer(self, agent_text: str, rng: random.Random) -> CustomerDecision:
        """A request: disclose what it asks for (everything withheld when it names nothing withheld)."""
        asked = self._asked(agent_text)
        scope = self.to_disclose(asked)
        if scope:
            return self.decision(UserAct.CLARIFY, Speech(tuple(self._slot_answer(s) for s in scope)), rng, scope)
        again = [s for s in asked if s in self._disclosure.told and s != "order"]
        parts: list[Phrase] = [self.restate()] if "order" in asked else []
        parts += [self._slot_answer(s) for s in again]
        # Nothing withheld is asked: whatever the agent proposes or checks ("is it the X you want
        # to send back?"), the customer restates what they mean and lets it proceed. A bare "yes"
        # confirmed look-alikes too; a yes only to the right one would be a free oracle.
        if parts and is_check_in(agent_text.lower()):
            # "..., reason 'changed mind', by mail. Shall I go ahead?": what they want, then the go-ahead
            # they give whatever the agent proposes (they cannot check it)
            parts.append(self.line("go_ahead"))
        text = Speech(tuple(parts)) if parts else self.line("restated_go_ahead", ref=self.restate())
        said = [(s, v) for s in again if (v := self.slot_value(s)) is not None]
        return self.decision(UserAct.CONTINUE, text, rng, convey=said)

    def _eligibility_feedback(self, rng: random.Random) -> CustomerDecision:
        """The agent says the item cannot be returned: the customer cannot check store rules.

        The same reply whether the claim is true or not, and not excused: a dispute that read
        out the delivery age and the window ("delivered 12 days ago, your window is 30 days")
        would locate the line without reading the request, and a "that's a pity" (a free
        CONFIRM) would confirm ineligibility.
        """
        return self.decision(UserAct.CONTINUE, self.pick(rng, "ineligible"), rng)
