"""E_SUB's own words (the rest are `users.phrases.CONSTRAINT_PHRASES`)."""

from ecom_bench.users.phrases import PhraseTable

PHRASES: PhraseTable = {
    "intro": ("I wanted to buy the {name} again, but {its} out of stock. Can you suggest a substitute?",
              "My usual {name} {is} out of stock. I need something similar instead."),
    "state_compatibility": "The {label} must be {value}, like my old one.",
    # proposals failing the hard gate
    "proposed_original": "The {name} {is} what's out of stock; I need a substitute.",
    "incompatible_as_said": "The {name} {isnt} available with that {label}; the {label} must be {value}, "
                            "like my old one.",
    "incompatible": "The {name} won't work with what I had; the {label} has to match my old one.",
}
