"""The E_POLICY heuristic asking in plain English: the same agent, no slot labels in its questions.

`PlainPolicyHeuristic` reads, searches and computes exactly as `PolicyHeuristic`; only its one
question is worded the way people ask ("What do the items in your order add up to?" rather than
"What is your order subtotal?"). Each fact has several wordings (`PLAIN_QUESTIONS`, written for
development; the held-out wordings are tests/data/honest_policy_phrasings.json); an episode picks
one per fact, and whether to ask them as separate sentences or as one compound question, from its
opening, so runs are deterministic. `PlainJourneyHeuristic` hands policy requests to it.
"""

from __future__ import annotations

import zlib

from ecom_bench.conversation import Policy
from ecom_bench.envs.journey import agents as journey_agents
from ecom_bench.envs.policy.agents import PolicyHeuristic

#: Plain questions per fact: no slot label, the way a person asks (dev set).
PLAIN_QUESTIONS: dict[str, tuple[str, ...]] = {
    "subtotal": ("What do the items in your order add up to?", "How much does the order come to?",
                 "How much did you spend on the whole order?", "What's the total for everything in the order?"),
    "weight": ("How heavy is the package?", "What does the parcel weigh?", "How much does the box weigh?"),
    "items": ("How many things are in the order?", "How many products did you order?",
              "How many pieces are in the order?"),
    "days_since_delivery": ("How long ago did it arrive?", "When did the package get to you?",
                            "How many days ago was it delivered?"),
    "days_since_purchase": ("How long ago did you buy it?", "When did you place the order?",
                            "How many days has it been since you bought it?"),
    "item_price": ("How much did the item cost?", "What did you pay for it?", "What was the price of the product?"),
    "price_gap": ("How much cheaper is it elsewhere?", "By how much is the other price lower?",
                  "How big is the difference between the two prices?"),
    "item_age": ("How long have you had it?", "How old is the item?", "How many months have you owned it?"),
    "orders_year": ("How many times have you ordered from us this past year?",
                    "How many orders have you placed with us in the last year?",
                    "How often have you shopped with us over the last twelve months?"),
    "card_amount": ("How much are you putting on the gift card?", "What value will the gift card have?",
                    "How much money are you adding to the card?"),
    "tier": ("Are you a rewards member?", "What level is your membership?", "Which loyalty level are you at?"),
    "size_class": ("Is it a big or awkward item, or a regular size?", "How big is the item?",
                   "Is it oversized or fragile?"),
    "speed": ("How fast did you choose to have it shipped?", "Which delivery option did you pick?",
              "Did you go for standard or faster shipping?"),
    "payment": ("How did you pay?", "What did you pay with?", "Which way did you pay for it?"),
    "channel": ("Did you order online, in the app, in a store or by phone?", "Where did you place the order?",
                "How did you place the order?"),
    "condition": ("Is it still sealed, or has it been opened or damaged?", "What shape is it in?",
                  "Has the item been opened?"),
    "reason": ("Why are you sending it back?", "What's the reason for returning it?",
               "What made you want to return it?"),
    "category": ("What kind of product is it?", "What department is it from?", "What type of item is it?"),
    "region": ("Where is it going?", "Where should it be delivered?", "Where do you live?"),
    "season": ("What time of year did you buy it?", "Did you buy it during a sale or over the holidays?",
               "Was it bought at a special time, like a holiday or a sale?"),
    "competitor_type": ("Where did you see the lower price?", "Who is selling it for less?",
                        "What kind of shop has the lower price?"),
    "item_state": ("Did you buy it new, refurbished or open-box?", "Was it brand new when you got it?",
                   "Was it new or second-hand?"),
    "registered": ("Have you registered the product?", "Did you register it with us?",
                   "Is the product registered?"),
}


def _pick(options: tuple[str, ...], key: str, opening: str) -> str:
    return options[zlib.crc32(f"{key}|{opening}".encode()) % len(options)]


def _compound(questions: list[str]) -> str:
    """Several questions as one: "How heavy is it, and are you a member?"."""
    parts = [q.rstrip("?") for q in questions]
    parts = [parts[0]] + [p[0].lower() + p[1:] for p in parts[1:]]
    if len(parts) == 1:
        return parts[0] + "?"
    return ", ".join(parts[:-1]) + " and " + parts[-1] + "?"


class PlainPolicyHeuristic(PolicyHeuristic):
    name = "plain_heuristic"

    def question(self, missing: list[str], opening: str) -> str:
        asked = [_pick(PLAIN_QUESTIONS[k], k, opening) for k in missing]
        if zlib.crc32(opening.encode()) % 2:
            return "To work out the answer I need a few details. " + " ".join(asked)
        return "To work out the answer I need a few details. " + _compound(asked)


class PlainJourneyHeuristic(journey_agents.JourneyHeuristic):
    """The journey heuristic whose policy requests go to `PlainPolicyHeuristic`."""

    name = "plain_heuristic"

    def _policy_for(self, env: str) -> Policy:
        return PlainPolicyHeuristic() if env == "policy" else super()._policy_for(env)
