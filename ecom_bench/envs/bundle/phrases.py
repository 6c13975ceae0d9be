"""E_BUNDLE's customer, in words: the project, the list, answers, the review of a proposed bundle."""

from ecom_bench.users.phrases import PhraseTable

PHRASES: PhraseTable = {
    "projects": "{projects}.",
    "and_also": ", and {also}",
    "need_intro": ("Here's what I need:", "Could you put together a shopping list for me:", "I'll need:",
                   "Can you help me find:"),
    "items": "{items}.",
    "listing": "{rest}; and {last}",
    "more_signal": ("I'll need a few other things too.", "There's a bit more I need as well.",
                    "That's not everything, there are a few more things."),
    "budget_signal": ("I have a budget in mind as well.", "I also have a budget to stick to."),
    "requirement_signal": ("I also have a requirement for the products.",
                           "The products have to meet a requirement of mine."),
    "closing": ("Thanks!", "Thank you.", ""),
    # answers
    "also_need": "I also need {items}.",
    "dont_need": "No, I don't need {what}.",
    "do_need": "Yes, I need {what}.",
    "budget": "My budget is {b} in total.",
    "no_budget": "I don't have a fixed budget, just keep it sensible.",
    "requirements": "Please note: {text}.",
    "no_requirements": "No special requirements.",
    "everything_listed": "That's everything on my list.",
    "ok": ("Okay, thanks.", "Sounds good.", "Sure, go ahead."),  # the last only once nothing is withheld
    # the review of a proposed list: the kinds of problem, never which item or value
    "out_of_stock": "The {name} ({pid}) {is} out of stock.",
    "just_sold_out": "Heads up: the {name} ({pid}) just sold out.",
    "item": "item",
    "missing": "That's not everything I need yet.",
    "extra": "Some of these aren't things I need.",
    "duplicates": "I only need one of each thing.",
    "violations": "Some of these don't meet my requirements.",
    "over_budget": "That's over my budget.",
    "confirm": ("That looks perfect. Please submit that list.", "Great, that's everything I need. Go ahead and submit it.",
                "Yes, that list works for me. Please submit it."),
}
