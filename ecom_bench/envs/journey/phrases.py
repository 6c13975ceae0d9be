"""E_JOURNEY's customer, in words: what opens each request (the requests are the sub-tasks' customers').

The prefixes are part of the customer's visible words; `goal.request_segments` splits a
conversation at them.
"""

from ecom_bench.users.phrases import PhraseTable

PHRASES: PhraseTable = {
    "request": "{prefix} {text}",
    "first": "I have a few things to sort out today. First:",
    "next": ("Thanks! One more thing:", "Great, thank you. Next:", "Perfect. I also need help with this:"),
    "switch": ("Oh wait, before that, something more urgent:", "Actually, hold on, one thing first:"),
    "resume": ("OK, back to my earlier request:", "Now, about what I asked before:"),
}
