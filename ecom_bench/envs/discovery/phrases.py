"""E_PD's own words (the rest are `users.phrases.CONSTRAINT_PHRASES`)."""

from ecom_bench.users.phrases import PhraseTable

PHRASES: PhraseTable = {
    "intro": ("I'm looking for {a_noun}.", "I need {a_new_noun}.", "Can you help me find {a_noun}?"),
}
