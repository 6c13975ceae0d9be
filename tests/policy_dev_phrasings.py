"""Development phrasings for the E_POLICY customer's question reading (never the held-out set).

`QUESTIONS[slot]`: plain ways to ask for one fact, none using the policy's label.
`COMPOUND`: (question, the facts it asks for). `GENERAL`: asks about the situation as a
whole. `CHECK_INS`: asks whether the customer is satisfied or needs more, no fact.
`UNRELATED`: asks about nothing in the customer's situation.
"""

from __future__ import annotations

from plain_policy_agent import PLAIN_QUESTIONS

QUESTIONS: dict[str, tuple[str, ...]] = {
    "subtotal": ("What's the order total?", "How much was the whole order, before shipping?",
                 "What did everything in your basket come to?", "How much did you spend altogether?",
                 "Roughly how much is the order worth?", "What does the order add up to?"),
    "weight": ("Do you know how much it weighs?", "How heavy is the parcel, roughly?", "What's the weight of the box?",
               "About how many pounds is the package?"),
    "items": ("How many items did you order?", "How many things are you buying?", "Is it just one item or several?",
              "How many units are in the order?"),
    "days_since_delivery": ("When did it arrive?", "How long ago was it delivered?", "When did you receive it?",
                            "How many days ago did the parcel reach you?", "When did it get to you?"),
    "days_since_purchase": ("When did you buy it?", "How long ago did you order it?", "What date did you purchase it?",
                            "How many days has it been since your purchase?", "When did you place your order?"),
    "item_price": ("How much did you pay for it?", "What did it cost?", "What was the price you paid?",
                   "How much was the item?", "How expensive was it?"),
    "price_gap": ("How much lower is their price?", "What's the difference in price?",
                  "By how much does the other store beat our price?", "How much would you save buying it there?"),
    "item_age": ("How old is it?", "How long have you owned it?", "How many months have you had the product?",
                 "Have you had it long?"),
    "orders_year": ("How often do you order from us?", "How many purchases have you made with us in the past year?",
                    "How many times did you shop with us over the last 12 months?",
                    "Are you a frequent customer? How many orders this year?"),
    "card_amount": ("How much is going on the gift card?", "What amount do you want to put on the card?",
                    "How much are you loading onto it?", "What's the value of the gift card you're buying?"),
    "tier": ("Are you a member?", "Do you belong to our loyalty programme?", "Which membership level do you have?",
             "What's your status with us?", "Are you signed up for our rewards?"),
    "size_class": ("Is the item large or bulky?", "How big is it?", "Is it a fragile item?",
                   "Is the package oversized?"),
    "speed": ("Which shipping did you choose?", "Did you pick express delivery?", "How fast is it being shipped?",
              "What delivery option did you select?"),
    "payment": ("How are you paying?", "What payment did you use?", "Did you pay by card?", "What did you pay with?"),
    "channel": ("Did you buy it online or in a store?", "Where did you buy it?", "Did you order through our app?",
                "Did you call in the order by phone?"),
    "condition": ("Has it been opened?", "Is it damaged?", "Is the item still in its box?",
                  "What condition is it in?", "Does it still work?"),
    "reason": ("Why do you want to return it?", "What's wrong with it?", "Why are you returning the item?",
               "What's the problem with it?"),
    "category": ("What sort of item is it?", "What did you buy?", "Which department is it from?",
                 "Is it clothing, electronics or something else?"),
    "region": ("Where are you located?", "Where are we shipping it?", "Which country do you live in?",
               "What's the delivery address?", "Are you in the mainland US?"),
    "season": ("Did you buy it during the holidays?", "Was it bought in a sale?", "What season was the purchase?",
               "Was it a Black Friday purchase?"),
    "competitor_type": ("Who's selling it cheaper?", "Which store has the better price?",
                        "What kind of seller is offering it for less?", "Is the lower price from another retailer?"),
    "item_state": ("Did you buy it new?", "Was it refurbished?", "Was it new or used when you bought it?",
                   "Was it an open-box item?"),
    "registered": ("Did you register it?", "Is it registered with us?", "Have you registered your product?"),
}
#: The plain agent's own wordings count as dev phrasings too.
for _slot, _texts in PLAIN_QUESTIONS.items():
    QUESTIONS[_slot] = tuple(dict.fromkeys(QUESTIONS[_slot] + _texts))

COMPOUND: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("How heavy is the package, and are you a member?", ("weight", "tier")),
    ("When did you buy it and how much did it cost?", ("days_since_purchase", "item_price")),
    ("Could you tell me what the order came to and how many items are in it?", ("subtotal", "items")),
    ("Where did you see the lower price, and how much lower is it?", ("competitor_type", "price_gap")),
    ("Is it still sealed? Also, why are you sending it back?", ("condition", "reason")),
    ("What department is it from; did you buy it online or in a store?", ("category", "channel")),
    ("How did you pay, and what speed of shipping did you pick?", ("payment", "speed")),
    ("Tell me about the item: how old it is, whether it's registered and what it cost.",
     ("item_age", "registered", "item_price")),
    ("Where are you shipping to and how big is the parcel?", ("region", "size_class")),
    ("How long ago did it arrive, and what shape is it in?", ("days_since_delivery", "condition")),
)
GENERAL = ("Could you tell me more about your situation?", "Can you give me some details about your order?",
           "What else should I know about your case?", "Please share any other details that might matter.",
           "I need a bit more information before I can answer. Can you help?")
CHECK_INS = ("Does that sound good?", "Anything else?", "Is that okay with you?", "Does that help?",
             "Are you happy with that?", "Is there anything else I can do for you?", "Does that make sense?")
UNRELATED = ("What's the weather like where you are today?", "Do you like our new logo?",
             "What's your favourite colour?")
