"""E_RETURN's customer, in words (the order ones they share with E_TRACK are `users.phrases.ORDER_PHRASES`)."""

from ecom_bench.users.phrases import PhraseTable

#: Why the customer sends the item back, by reason (one alternative drawn per episode).
REASON_PHRASES: dict[str, tuple[str, ...]] = {
    "defective": ("It stopped working after a few days.", "It's defective: it doesn't work properly."),
    "damaged": ("It arrived damaged.", "It came broken in the box."),
    "wrong_item": ("You sent me the wrong item.", "I received a different item than the one I ordered."),
    "not_as_described": ("It's not as described in the listing.", "It looks nothing like the description."),
    "does_not_fit": ("It doesn't fit me.", "The size doesn't fit me."),
    "changed_mind": ("I changed my mind about it.", "I don't need it anymore."),
}
#: How the customer wants to send it back, by method.
METHOD_PHRASES: dict[str, tuple[str, ...]] = {
    "pickup": ("I'd like a courier to pick it up from my home.", "Please have it picked up from my address."),
    "drop_off": ("I'll drop it off at a drop-off point.", "I can take it to a drop-off location."),
    "mail": ("I'll mail it back with a prepaid label.", "I'd rather send it back by mail."),
}

PHRASES: PhraseTable = {
    **{f"reason_{k}": v for k, v in REASON_PHRASES.items()},
    **{f"method_{k}": v for k, v in METHOD_PHRASES.items()},
    "closing": ("Thanks!", "Thank you.", ""),
    "missing_signal": ("I can give you more details if you need them.", "Just ask if you need anything else from me."),
    # the request: which order, and what to do with it
    "my_order_item": "my order {id} ({item})",
    "vague_ref": "the {noun} I ordered",
    "from_my_order": "{item} from my order {id}",
    "an_item": "an item",
    "bought_recently": "{item} I bought recently",
    "something_bought_recently": "something I bought recently",
    "return": "I'd like to return {ref}.",
    "exchange_for": "I'd like to exchange {ref} for the {value} one.",
    "exchange_other": "I'd like to exchange {ref} for a different {label}.",
    "replacement": "Could you also recommend {what} {constraint}?",
    "a_replacement": "a replacement {noun}",
    "wish_max_price": "under ${value}",
    "wish_other_brand": "from a different brand",
    "wish_min_rating": "rated at least {value} stars",
    # answers, by slot
    "order_id": "It's from my order {id}.",
    "i_mean": "I mean {ref}.",
    "item": "It's {item}.",
    "variant": "I'd like the {value} one instead.",
    # their returns page
    "started": ("Great, thank you!", "Perfect, thanks for sorting that out."),
    "wrong_line": "You started a {kind} for the {title}, but that's not the item I meant. I meant {ref}.",
    "not_as_asked": "You started the {kind}, but it's not set up the way I asked.",
    "not_a_refund": "I asked for an exchange, not a refund.",
    "not_an_exchange": "I wanted to return it for a refund, not exchange it.",
    "wrong_new_variant": "That's not the {label} I asked for: I'd like the {value} one.",
    "wrong_reason": "That's not why I'm sending it back. {reason}",
    "wrong_method": "That's not how I want to send it back. {method}",
    # the rest of the conversation
    "thanks": ("Thanks.", "Thank you, that's all."),
    "go_ahead_with": "Could you please go ahead with the {what}?",
    "go_ahead": "Please go ahead.",
    "restated_go_ahead": "{ref} Please go ahead.",
    # told the item cannot be returned: the customer cannot check store rules
    "ineligible": ("Oh. I'll trust you've checked the store's rules for my order.",
                   "I see. Please make sure you've looked at the right order."),
}
