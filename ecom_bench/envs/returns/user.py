"""E_RETURN's template customer: asks for a return or exchange, withholds slots, corrects, confirms.

Slots (each withheld at p_missing(d)): "order" (the order id or the description),
"item" (which line, when the order id is given), "reason", "method", and "variant"
(the one wanted, for an exchange). Any request from the agent discloses: what it asks
about (`ASKS`), or everything withheld when it names nothing withheld
(`Customer.to_disclose`); "go ahead" only once nothing is withheld, and it is a plain
CONTINUE (only the customer seeing their return started is a CONFIRM). The customer
sees their returns page: a return started for another line is objected to at once and
counts as a strike (`Customer.strike`: two and they give up), and so does one for the right
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
from ecom_bench.envs.tracking.references import OrderUserBase
from ecom_bench.users import UserAct, UserMessage, is_request, render, says, topics_asked
from ecom_bench.users.understanding import is_check_in
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World
from ecom_bench.domains.orders.book import OrderBook, returns_of
from ecom_bench.domains.orders.records import ReturnRecord
from ecom_bench.domains.orders.references import RefKind

REASON_PHRASES = {
    "defective": ("It stopped working after a few days.", "It's defective: it doesn't work properly."),
    "damaged": ("It arrived damaged.", "It came broken in the box."),
    "wrong_item": ("You sent me the wrong item.", "I received a different item than the one I ordered."),
    "not_as_described": ("It's not as described in the listing.", "It looks nothing like the description."),
    "does_not_fit": ("It doesn't fit me.", "The size doesn't fit me."),
    "changed_mind": ("I changed my mind about it.", "I don't need it anymore."),
}
METHOD_PHRASES = {
    "pickup": ("I'd like a courier to pick it up from my home.", "Please have it picked up from my address."),
    "drop_off": ("I'll drop it off at a drop-off point.", "I can take it to a drop-off location."),
    "mail": ("I'll mail it back with a prepaid label.", "I'd rather send it back by mail."),
}
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
INELIGIBLE_REPLIES = ("Oh. I'll trust you've checked the store's rules for my order.",
                      "I see. Please make sure you've looked at the right order.")
GREETINGS = ("Hi!", "Hello,", "Hey there.", "Hi there,", "")
CLOSINGS = ("Thanks!", "Thank you.", "")


@dataclass(frozen=True)
class UserScript:
    """The words this customer uses, drawn once at build time."""

    noun: str
    item: str  # "the VoltEdge PowerPort Wall Charger" or "the wall charger"
    reason: str
    method: str
    variant_label: str
    window: int | None
    replacement: str | None  # the request sentence, if a replacement is wanted

    @classmethod
    def draw(cls, goal: ReturnsGoal, noun: str, item: str, attribute: str | None, window: int | None,
             rng: random.Random, a_replacement: str = "") -> "UserScript":
        """`a_replacement` is the noun as the replacement request says it ("a replacement mouse",
        "a replacement pair of jeans"); by default "a replacement {noun}"."""
        wish = goal.replacement
        replacement = None
        if wish is not None:
            constraint = {"max_price": lambda v: f"under ${float(v):.0f}",
                          "other_brand": lambda v: "from a different brand",
                          "min_rating": lambda v: f"rated at least {float(v):.1f} stars"}[wish.kind](wish.value)
            replacement = render("Could you also recommend {what} {constraint}?", constraint=constraint,
                                 what=a_replacement or f"a replacement {noun}")
        return cls(noun, item, rng.choice(REASON_PHRASES[goal.reason]), rng.choice(METHOD_PHRASES[goal.method]),
                   attribute_label(attribute) if attribute else "version", window, replacement)


class ReturnsUser(OrderUserBase):
    rng_prefix: ClassVar[tuple[str, ...]] = ("returns",)
    missing_signals: ClassVar[tuple[str, ...]] = ("I can give you more details if you need them.",
                                                  "Just ask if you need anything else from me.")

    def __init__(self, goal: ReturnsGoal, script: UserScript, difficulty: Difficulty, seed: int,
                 disclosure: Disclosure, intent: int = 0, alternates: tuple[str, ...] = ()) -> None:
        protect = {goal.reference_text, goal.order_id, script.item, script.noun, *KEY_WORDS, *alternates}
        if goal.new_variant_value:
            protect.add(goal.new_variant_value)
        if goal.replacement is not None:
            protect.update({str(goal.replacement.value), script.replacement or ""})
        super().__init__(difficulty, seed, disclosure, frozenset(protect))
        self.goal = goal
        self.script = script
        self.intent = intent
        self.target_order_id = goal.order_id
        self.direct = goal.reference["kind"] == RefKind.ORDER_ID.value
        self.full_reference = (render("my order {id} ({item})", id=goal.order_id, item=script.item) if self.direct
                               else goal.reference_text)
        self.alternates = alternates
        self._objected: set[str] = set()  # wrong returns already objected to
        self._thanked = False

    # ------------------------------------------------------------ phrasing
    def _ref_part(self) -> str:
        s, g = self.script, self.goal
        if not self.direct:
            return g.reference_text if self.told("order") else render("the {noun} I ordered", noun=s.noun)
        if self.told("order"):
            return render("{item} from my order {id}", item=s.item if self.told("item") else "an item", id=g.order_id)
        return render("{item} I bought recently", item=s.item) if self.told("item") else "something I bought recently"

    def _action(self) -> str:
        g = self.goal
        if g.kind == "return":
            return render("I'd like to return {ref}.", ref=self._ref_part())
        if self.told("variant"):
            return render("I'd like to exchange {ref} for the {value} one.", ref=self._ref_part(),
                          value=g.new_variant_value)
        return render("I'd like to exchange {ref} for a different {label}.", ref=self._ref_part(),
                      label=self.script.variant_label)

    def _slot_answer(self, slot: str) -> str:
        s, g = self.script, self.goal
        return {
            "order": render("It's from my order {id}.", id=g.order_id) if self.direct
            else render("I mean {ref}.", ref=g.reference_text),
            "item": render("It's {item}.", item=s.item),
            "reason": s.reason,
            "method": s.method,
            "variant": render("I'd like the {value} one instead.", value=g.new_variant_value or ""),
        }[slot]

    def opening(self) -> UserMessage:
        rng = self.rng("opening")
        parts = [rng.choice(GREETINGS), self._action()]
        if self.told("reason"):
            parts.append(self.script.reason)
        if self.told("method"):
            parts.append(self.script.method)
        if self.script.replacement:
            parts.append(self.script.replacement)
        parts.append(self.missing_signal(rng))
        parts.append(rng.choice(CLOSINGS))
        return self.say(render(" ".join(p for p in parts if p)), UserAct.OPENING, rng)

    # ------------------------------------------------------------- replies
    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        rng = self.next_reply_rng()
        if last_turn:
            return self.quit(rng)
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
            return self.say(rng.choice(("Great, thank you!", "Perfect, thanks for sorting that out.")),
                            UserAct.CONFIRM, rng)
        feedback = self.order_feedback(agent_text, rng)
        if feedback is not None:
            return feedback
        text_l = agent_text.lower()
        if not mine and any(says(text_l, c) for c in INELIGIBLE_CLAIMS):
            return self._eligibility_feedback(rng)
        if is_request(agent_text):
            return self._answer(agent_text, rng)
        if mine:
            return self.say(rng.choice(("Thanks.", "Thank you, that's all.")), UserAct.CONTINUE, rng)
        what = "exchange" if self.goal.kind == "exchange" else "return"
        return self.say(render("Could you please go ahead with the {what}?", what=what), UserAct.CONTINUE, rng)

    def _wrong_return(self, wrong: list, world: World, rng: random.Random) -> UserMessage:
        """A return started for another line: the customer sees it on their returns page and objects
        (a strike: at `max_strikes` they give up)."""
        self._objected.update(r.return_id for r in wrong)
        quit_ = self.strike(rng)
        if quit_ is not None:
            return quit_
        self._disclosure.reveal("order")
        self._disclosure.reveal("item")
        p = world.product(wrong[-1].product_id)
        text = render("You started a {kind} for the {title}, but that's not the item I meant. I meant {ref}.",
                      kind=wrong[-1].kind, title=p.title if p else wrong[-1].product_id, ref=self.full_reference)
        return self.say(text, UserAct.CORRECT, rng)

    def _wrong_details(self, record: ReturnRecord) -> list[tuple[str, str]]:
        """(slot, sentence) for each detail of the customer's own return that is not what they asked for,
        as their returns page shows it: the kind, the variant wanted, the reason, the method."""
        g, s = self.goal, self.script
        problems = []
        if record.kind != g.kind:
            problems.append(("variant", "I asked for an exchange, not a refund.") if g.kind == "exchange"
                            else ("", "I wanted to return it for a refund, not exchange it."))
        elif g.kind == "exchange" and record.new_variant_id != g.new_variant_id:
            problems.append(("variant", render("That's not the {label} I asked for: I'd like the {value} one.",
                                               label=s.variant_label, value=g.new_variant_value or "")))
        if record.reason.value != g.reason:
            problems.append(("reason", render("That's not why I'm sending it back. {reason}", reason=s.reason)))
        if record.method.value != g.method:
            problems.append(("method", render("That's not how I want to send it back. {method}", method=s.method)))
        return problems

    def _wrong_details_reply(self, record: ReturnRecord, problems: list[tuple[str, str]],
                             rng: random.Random) -> UserMessage:
        """The right item, started with details the customer did not ask for (a strike, like a wrong line):
        they object in their own words; the started return cannot be redone, so this tells the agent
        nothing it could still act on, but a confirmation would be untrue."""
        self._objected.add(record.return_id)
        quit_ = self.strike(rng)
        if quit_ is not None:
            return quit_
        for slot, _ in problems:
            if slot in self._disclosure.told:  # the customer has now said it
                self._disclosure.reveal(slot)
        text = render("You started the {kind}, but it's not set up the way I asked.", kind=record.kind)
        return self.say(" ".join([text, *(sentence for _, sentence in problems)]), UserAct.CORRECT, rng)

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

    def _answer(self, agent_text: str, rng: random.Random) -> UserMessage:
        """A request: disclose what it asks for (everything withheld when it names nothing withheld)."""
        asked = self._asked(agent_text)
        scope = self.to_disclose(asked)
        if scope:
            return self.say(" ".join(self._slot_answer(s) for s in scope), UserAct.CLARIFY, rng, tuple(scope))
        again = [s for s in asked if s in self._disclosure.told and s != "order"]
        parts = [self.restate()] if "order" in asked else []
        parts += [self._slot_answer(s) for s in again]
        # Nothing withheld is asked: whatever the agent proposes or checks ("is it the X you want
        # to send back?"), the customer restates what they mean and lets it proceed. A bare "yes"
        # confirmed look-alikes too; a yes only to the right one would be a free oracle.
        if parts and is_check_in(agent_text.lower()):
            # "..., reason 'changed mind', by mail. Shall I go ahead?": what they want, then the go-ahead
            # they give whatever the agent proposes (they cannot check it)
            parts.append("Please go ahead.")
        text = " ".join(parts) or render("{ref} Please go ahead.", ref=self.restate())
        return self.say(text, UserAct.CONTINUE, rng)

    def _eligibility_feedback(self, rng: random.Random) -> UserMessage:
        """The agent says the item cannot be returned: the customer cannot check store rules.

        The same reply whether the claim is true or not, and not excused: a dispute that read
        out the delivery age and the window ("delivered 12 days ago, your window is 30 days")
        would locate the line without reading the request, and a "that's a pity" (a free
        CONFIRM) would confirm ineligibility.
        """
        return self.say(rng.choice(INELIGIBLE_REPLIES), UserAct.CONTINUE, rng)
