"""The words every template customer shares: greetings, goodbyes, "there's more".

A phrase table maps a key to its alternatives; the customer draws one (`Customer.pick`),
and the phraser fills it. An env's own words are in `envs/<env>/phrases.py`.
"""

from __future__ import annotations

from collections.abc import Mapping

#: key -> its alternatives (a single template is a one-element tuple or a plain str)
PhraseTable = Mapping[str, "tuple[str, ...] | str"]

PHRASES: PhraseTable = {
    "greeting": ("Hi!", "Hello,", "Hey there.", "Hi there,", ""),
    # the customer's patience (T_max) ran out
    "patience_quit": ("This is taking too long; I'll sort it out another way. Bye.",
                      "Sorry, I have to go now. I'll try again another time."),
    # too many mistakes the customer had to object to
    "mistake_quit": ("This isn't going anywhere; you keep getting it wrong. I'll sort it out myself. Bye.",
                     "I've had to correct you too many times. I'll do this another way. Goodbye."),
    # what an opening adds when something is withheld, so a careful agent knows to ask
    "missing_signal": ("There are a couple of other things that matter to me too, if you need them.",
                       "I have a few more requirements as well; just ask.",
                       "That's not all I need, by the way."),
}

#: A shopper with hard constraints (`users.constraints`: E_PD, E_SUB).
CONSTRAINT_PHRASES: PhraseTable = {
    "closing": ("Thanks!", "Thank you.", ""),
    "patience_quit": ("This is taking too long, I'll look elsewhere. Bye.",
                      "Sorry, I have to go. I'll shop another time."),
    # one sentence per constraint stated
    "state_price": ("My budget is ${value}.", "It should cost under ${value}.",
                    "I don't want to spend more than ${value}."),
    "state_brand": ("It should be from {value}.", "I'd like the {value} brand."),
    "state_rating": ("It should be rated at least {stars}.", "I only buy things with {value}+ stars."),
    "state_ship": ("It needs to ship within {days}.", "I need it delivered in {days} or less."),
    "state_attribute": ("The {label} must be {value}.", "The {label} must be {value}, please."),
    # asking for the list, k > 1 and k == 1 (never "top 1 picks"): only products meeting
    # everything count, fewer if fewer do (the success rule)
    "ask_list": ("Please recommend your top {k} picks, only ones that meet everything I need (fewer if fewer do).",
                 "Send me your top {k} options; only ones that fit all of it, even if that's fewer."),
    "ask_top_pick": ("Please recommend your top pick.", "Send me your top option."),
    "go_ahead_list": "Please go ahead and recommend your top {k} picks, only ones that meet everything (fewer if "
                     "fewer do).",
    "go_ahead_top_pick": "Please go ahead and recommend your top pick.",
    "okay": "Okay.",
    "yes": "Yes.",
    "nothing_else": ("No, that's everything I need.", "Nothing else, that's all."),
    "more_to_say": ("There's something else that matters to me too, if you want to know.",
                    "That's not all, by the way; there's more if you need it."),
    # what is wrong with a proposal, by kind: never a value (a stated one is in the request,
    # a withheld one is given when asked)
    "complaint_price": "The {name} {is} over my budget.",
    "complaint_rating": "The {name} {isnt} rated highly enough for me.",
    "complaint_ship": "The {name} would take too long to get here.",
    "complaint_category": "The {name} {isnt} {value}.",
    "complaint_brand": "The {name} {isnt} the brand I want.",
    "complaint_attribute": "The {name} {isnt} available with the {label} I need.",
    # after a complaint about something already stated
    "as_i_said": ("As I said.", "I mentioned that."),
    "not_all": ("Not all of these work for me.", "Hmm, that's not quite right.", ""),
    "out_of_stock_now": "The {name} show{s} as out of stock now.",
    "fewer_than_asked": "Those work for me. I asked for up to {k} picks, though: if more meet everything, "
                        "please include them in your recommendation.",
    "looks_good": ("Those look good to me. Please send them as your final recommendation.",
                   "That works for me. Go ahead and send your recommendation."),
}

#: A customer asking about one of their orders (`users.orders`: E_TRACK, E_RETURN).
ORDER_PHRASES: PhraseTable = {
    "as_i_said": "As I said, it's {ref}.",
    "as_i_said_in_other_words": "As I said, it's {ref}; in other words, {alt}.",
    "no_order_numbers": "I don't have the order numbers in front of me. I mean {ref}.",
    "my_order_number": "My order number is {id}.",
    "not_my_order": "That's not my order. My order number is {id}.",
}
