"""`--model ecom/oracle`, `--model ecom/heuristic`: scripted agents as an Inspect provider.

The provider asks the env's scripted policy for the next action given the sample's live
episode (`scorers._store.live_sample`, set by the solver): its transcript
(`Episode.messages`, the conversation the model's input holds, in the core's form, as the
core runner and the training env hand it to the same policies) and its counters. Only a
policy that declares `reads_hidden_goal` (the oracle) is handed the hidden goal; the
heuristic sees exactly what a model sees. An agent that speaks to the customer through the
`ask_user` tool reads to the policy as one that speaks plainly (`ask_user_as_spoken`): the
policies read the customer's words from user messages. Usage is zero on every output: a script
reads no tokens and pays for none, and an estimate would sit in the log beside real
models' counts as if it were one (set explicitly, so no tokenizer or download is needed).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo
from ecom_bench.agents import get_policy
from ecom_bench.conversation import AgentAction, ask_user_as_spoken
from ecom_bench.agents.adversarial import ADVERSARIAL_NAMES
from ecom_bench.scorers._store import live_sample
from ecom_bench.tasks._errors import input_errors

#: Scripted policies every environment provides (see `Environment.policies`), then the generic
#: adversarial ones (`ecom_bench.agents.adversarial`, for the reliability suite).
POLICIES = ("oracle", "heuristic", "random", *ADVERSARIAL_NAMES)


def _tokens(text: str) -> int:
    """A rough size (~4 characters a token) for Inspect's context-window bookkeeping; never reported as usage."""
    return max(1, len(text) // 4)


class ScriptedModelAPI(ModelAPI):
    """One provider hosts every scripted policy; the policy is the model name."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        with input_errors():  # the message alone, not a traceback
            if model_name not in POLICIES:
                raise ValueError(f"unknown scripted model 'ecom/{model_name}'; available: "
                                 + ", ".join(f"ecom/{p}" for p in POLICIES))
            if model_args:  # `-M` options configure nothing here: refuse them rather than ignore them
                raise ValueError(f"scripted model 'ecom/{model_name}' takes no model args, got: "
                                 + ", ".join(sorted(model_args)))

    async def count_text_tokens(self, text: str) -> int:
        return _tokens(text)

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        live = live_sample.get()
        if live is None:
            raise RuntimeError("ecom/* scripted models only run inside ecom_bench tasks")
        policy = get_policy(live.episode.env.name, self.model_name)
        hidden = live.hidden if policy.reads_hidden_goal else None
        action = policy.act(ask_user_as_spoken(live.episode.messages), hidden, live.episode.status())
        offered = {t.name for t in tools}
        if missing := sorted({c.name for c in action.tool_calls} - offered):
            # a model can only call what it is offered: an agent run without the episode's tools
            raise RuntimeError(f"scripted model 'ecom/{self.model_name}' would call {', '.join(missing)}, but "
                               f"the model was offered {', '.join(sorted(offered)) or 'no tools'}: give the agent "
                               "the episode's tools, tools=[ecom_tools()] (from ecom_bench.tasks)")
        output = self._output(action)
        output.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
        return output

    def _output(self, action: AgentAction) -> ModelOutput:
        if action.tool_calls:
            calls = [ToolCall(id=c.id or f"call-{i}", function=c.name, arguments=c.arguments)
                     for i, c in enumerate(action.tool_calls)]
            message = ChatMessageAssistant(content=action.text, tool_calls=calls, model=self.model_name,
                                           source="generate")
            return ModelOutput.from_message(message, stop_reason="tool_calls")
        return ModelOutput.from_content(self.model_name, action.text)


