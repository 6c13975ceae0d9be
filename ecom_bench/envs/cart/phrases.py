"""E_CART's customer, in words: the shopping list, answers, corrections, the go-ahead."""

from ecom_bench.users.phrases import PhraseTable

PHRASES: PhraseTable = {
    "opening": "{greeting} {intro} {listing}. {closing}",
    "intro": ("Please add these to my cart:", "Could you put the following in my cart:",
              "I'd like to order", "Shopping list:", "Can you add to my cart"),
    "closing": ("Thanks!", "That's all.", "Thank you.", ""),
    "listing": "{rest}; and {last}",
    # one item of the list: how many ({head}), then which variant ({tail}, may be empty)
    "item": "{head}{tail}",
    "some_of": ("a few of the {name}", "some of the {name}", "several of the {name}"),
    "count_of": ("{qty} x {name}", "{qty} of the {name}", "{qty} units of the {name}"),
    "one_of": ("the {name}", "{one_name}", "{a_name}"),
    "in_variant": (" in {value}", " ({label}: {value})", ", the {value} one"),
    "in_some_variant": (" (I need a specific {label})", ", in a particular {label}", " - the right {label} matters"),
    # answers
    "which_variant": "For the {name}, I need the {value} one.",
    "how_many": "I need {qty} of the {name}.",
    "any_variant": "Any {label} is fine for the {name}.",
    "asked_for": "asked for",
    "need": "need",
    # corrections: the line and the kind of error, never the value asked for
    "not_that_variant": "No, that's not the {label} I {want} for the {name}.",
    "several_variants": "There's more than one {label} of the {name} in my cart; I only want the one I {want}.",
    "wrong_variant": "The {name} in my cart {is} the {wrong} {one}; that's not the {label} I {want}.",
    "wrong": "wrong",
    "wrong_quantity": "That's not how many of the {name} I {want}.",
    "stray": "I didn't ask for the {title}; please remove it.",
    "mess": ("I didn't ask for most of these; please only add what I listed.",
             "That's a lot of things I never asked for. Please only put in what I listed.",
             "Most of this isn't what I asked for. Please just add the items on my list."),
    "unasked": ("That's not what I asked for. I only want the items I listed.",
                "I didn't ask for that. Please stick to my list."),
    "missing_first": "Please add the items I listed.",
    "missing_some": "You haven't added everything I asked for yet.",
    "already_listed": ("Please just add what I asked for.", "I've already told you what I need; please add just those."),
    "confirm": ("That's everything, thanks. Please check out.", "Yes, that's all I need. Please place the order.",
                "Looks right to me. Go ahead and check out."),
}
