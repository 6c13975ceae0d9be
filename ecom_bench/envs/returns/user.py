"""E_RETURN's template customer: asks for a return or exchange, withholds slots, corrects, confirms.

Slots (each withheld at p_missing(d), given when the agent asks): "order" (the order
id or the description), "item" (which line, when the order id is given), "reason",
"method", and "variant" (the one wanted, for an exchange). The customer sees their
returns page: a return started for another line is corrected at once, and a claim
that an eligible item cannot be returned is disputed with the delivery date.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ecom_bench.catalog.taxonomy import attribute_label
from ecom_bench.difficulty import Difficulty
from ecom_bench.envs.returns.goal import ReturnsGoal
from ecom_bench.envs.tracking.references import OrderUserBase, is_question, says
from ecom_bench.users import UserAct, UserMessage, render
from ecom_bench.users.base import Disclosure
from ecom_bench.world import World
from ecom_bench.world.orders import RefKind, find_order, returns_of

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
ASKS = {
    "order": ("which order", "order number", "order id", "order #", "when did you", "when was", "what date",
              "which date", "placed", "which one", "more detail", "describe", "when you"),
    "item": ("which item", "what item", "which product", "what product", "which one", "which of"),
    "reason": ("reason", "why", "what's wrong", "what is wrong", "what went wrong", "problem", "issue"),
    "method": ("method", "pickup", "pick up", "pick-up", "drop", "mail", "send it back", "ship it back",
               "how would you like", "courier"),
    "variant": ("size", "color", "colour", "variant", "instead", "option", "which one"),
}
CONFIRM_ASKS = ("shall i", "should i", "do you want me", "would you like me", "go ahead", "is that right",
                "is that correct", "can i proceed", "proceed")
INELIGIBLE_CLAIMS = ("not eligible", "ineligible", "can't be returned", "cannot be returned", "can not be returned",
                     "final sale", "final-sale", "window has closed", "window closed", "past the return window",
                     "already been returned", "already returned", "not returnable", "isn't returnable")
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
             rng: random.Random) -> "UserScript":
        wish = goal.replacement
        replacement = None
        if wish is not None:
            constraint = {"max_price": lambda v: f"under ${float(v):.0f}",
                          "other_brand": lambda v: "from a different brand",
                          "min_rating": lambda v: f"rated at least {float(v):.1f} stars"}[wish.kind](wish.value)
            replacement = render("Could you also recommend a replacement {noun} {constraint}?", noun=noun,
                                 constraint=constraint)
        return cls(noun, item, rng.choice(REASON_PHRASES[goal.reason]), rng.choice(METHOD_PHRASES[goal.method]),
                   attribute_label(attribute) if attribute else "version", window, replacement)


class ReturnsUser(OrderUserBase):
    env = "returns"

    def __init__(self, goal: ReturnsGoal, script: UserScript, difficulty: Difficulty, seed: int,
                 disclosure: Disclosure, intent: int = 0) -> None:
        protect = {goal.reference_text, goal.order_id, script.item, script.noun, *KEY_WORDS}
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

    # ------------------------------------------------------------ phrasing
    def _told(self, slot: str) -> bool:
        return self._disclosure.is_told(slot)

    def _ref_part(self) -> str:
        s, g = self.script, self.goal
        if not self.direct:
            return g.reference_text if self._told("order") else render("the {noun} I ordered", noun=s.noun)
        if self._told("order"):
            return render("{item} from my order {id}", item=s.item if self._told("item") else "an item", id=g.order_id)
        return render("{item} I bought recently", item=s.item) if self._told("item") else "something I bought recently"

    def _action(self) -> str:
        g = self.goal
        if g.kind == "return":
            return render("I'd like to return {ref}.", ref=self._ref_part())
        if self._told("variant"):
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
        rng = self._rng("opening")
        parts = [rng.choice(GREETINGS), self._action()]
        if self._told("reason"):
            parts.append(self.script.reason)
        if self._told("method"):
            parts.append(self.script.method)
        if self.script.replacement:
            parts.append(self.script.replacement)
        parts.append(rng.choice(CLOSINGS))
        return self._say(render(" ".join(p for p in parts if p)), UserAct.OPENING, rng)

    # ------------------------------------------------------------- replies
    def reply(self, agent_text: str, world: World, *, last_turn: bool) -> UserMessage:
        rng = self._next_reply_rng()
        if last_turn:
            return self._quit(rng)
        wrong = [r for r in world.returns if r.intent == self.intent and r.line_id != self.goal.line_id]
        if wrong:
            p = world.product(wrong[-1].product_id)
            self._disclosure.reveal("order")
            self._disclosure.reveal("item")
            text = render("You started a {kind} for the {title}, but that's not the item I meant. I meant {ref}.",
                          kind=wrong[-1].kind, title=p.title if p else wrong[-1].product_id, ref=self.full_reference)
            return self._say(text, UserAct.CORRECT, rng)
        feedback = self._order_feedback(agent_text, rng)
        if feedback is not None:
            return feedback
        text_l = agent_text.lower()
        mine = [r for r in returns_of(world, self.goal.line_id) if r.intent == self.intent]
        if mine:
            return self._say(rng.choice(("Great, thank you!", "Perfect, thanks for sorting that out.")),
                             UserAct.CONFIRM, rng)
        if any(says(text_l, c) for c in INELIGIBLE_CLAIMS):
            return self._eligibility_feedback(world, rng)
        if is_question(agent_text):
            return self._answer(text_l, rng)
        what = "exchange" if self.goal.kind == "exchange" else "return"
        return self._say(render("Could you please go ahead with the {what}?", what=what), UserAct.CONTINUE, rng)

    def _answer(self, text_l: str, rng: random.Random) -> UserMessage:
        hidden = self._disclosure.hidden()
        asked = [slot for slot, keys in ASKS.items() if any(says(text_l, k) for k in keys)]
        variant_values = re.findall(r"[a-z0-9]+", (self.goal.new_variant_value or "").lower())
        if self.goal.kind == "exchange" and variant_values and says(text_l, " ".join(variant_values)):
            asked.append("variant")
        scope = [s for s in hidden if s in asked] if asked else hidden
        if scope:
            for slot in scope:
                self._disclosure.reveal(slot)
            return self._say(" ".join(self._slot_answer(s) for s in scope), UserAct.CLARIFY, rng, tuple(scope))
        if any(says(text_l, c) for c in CONFIRM_ASKS) or not asked:
            return self._say("Yes, please go ahead.", UserAct.CONFIRM, rng)
        told = [s for s in asked if s in self._disclosure.told]
        text = " ".join(self._slot_answer(s) for s in told) or "Yes, please go ahead."
        return self._say(text, UserAct.CONTINUE, rng)

    def _eligibility_feedback(self, world: World, rng: random.Random) -> UserMessage:
        if not self.goal.eligible:
            return self._say(rng.choice(("Oh, I see. That's a pity, thanks for checking.",
                                         "Ah, okay. Thanks for letting me know.")), UserAct.CONFIRM, rng)
        order = find_order(world, self.goal.order_id)
        days = (world.now.date() - order.delivered_at.date()).days if order and order.delivered_at else 0
        text = render("Are you sure? It was delivered {days} days ago, and your return window is {window} days.",
                      days=days, window=self.script.window)
        return self._say(text, UserAct.CORRECT, rng)
