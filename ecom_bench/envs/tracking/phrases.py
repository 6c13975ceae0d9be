"""E_TRACK's customer, in words (the order ones they share with E_RETURN are `users.phrases.ORDER_PHRASES`)."""

from ecom_bench.users.phrases import PhraseTable

PHRASES: PhraseTable = {
    "opening": "{greeting} {ask}",
    "ask": ("Could you check the status of {ref}?", "What's happening with {ref}? I'd like to know its status.",
            "Can you tell me the current status of {ref}?", "I'm wondering where {ref} {be}. What's its status?"),
    "is": "is",
    "are": "are",
    "i_mean": "I mean {ref}.",
    "just_status": "I just need its status.",
    "status_please": "Could you please tell me the status of {ref}?",
}
