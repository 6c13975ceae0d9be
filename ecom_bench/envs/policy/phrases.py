"""E_POLICY's customer, in words: their case, what they cannot judge, what they wait for.

The facts themselves are worded by the world's slots (`world.policy.SLOTS[...].say`).
"""

from ecom_bench.users.phrases import PhraseTable

PHRASES: PhraseTable = {
    "greeting": ("Hi!", "Hello,", "Hey there.", "Hi there,", "Good morning!", ""),
    "opening": "{greeting} {facts} {question} {signal}",
    # the facts of their case: "x.", "x, y and z."
    "fact": "{fact}.",
    "facts": "{rest} and {last}.",
    "as_i_said": "As I said, {fact}",
    "also": "Also,",
    # what an opening adds when facts the policy needs are withheld (the customer does not know which)
    "missing_signal": ("I can tell you more about my situation if the policy depends on it.",
                       "Let me know if you need any other details about my order.",
                       "Just ask if you need to know anything else about my case."),
    "nothing_more": ("I think I've told you everything about my situation. What does the policy say?",
                     "That's all I know about my case. Could you check the policy for me?"),
    "cannot_check": ("I don't know the rules myself, so I can't say. Please go by what the policy says.",
                     "I'll have to trust you on that; I don't know the policy."),
    "waiting": ("Could you check your store policy and tell me?", "So what does the policy say for my case?"),
    # a check-in once an answer was proposed: thanks, without judging it (they cannot check it)
    "thanks": ("Okay, thanks. I'll go by what the policy says.", "Alright, thank you. I'll take your word for it."),
    # a check-in before any answer: nothing more to add, still waiting for the policy's answer
    "still_waiting": ("Nothing else from me; I'm just waiting to hear what the policy says.",
                      "No, that's all. What does the policy say for my case?"),
    # leads for the withheld facts given beyond what was asked
    "not_sure": ("I'm not sure what else you're asking, but here's the rest of my situation:",
                 "I didn't quite follow all of that; here's what else I know about my case:"),
    "before_that": ("Before that, there's more about my case you may need:", "One thing first, you may need to know this:"),
    # a question about something outside the customer's situation
    "off_topic": ("I'm not sure how that matters for my question.",
                  "Sorry, I don't see what that has to do with my question."),
}
