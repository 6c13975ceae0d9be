"""`--model-role user=ecom-user/faithful` (…/leaky, …/empty, …): scripted customer models as an
Inspect provider, to try `-T user=llm` offline. Each is one of `users.scripted_models`: it reads
the customer prompt `users.llm.LLMPhraser` sends and answers as a model that behaves that way
would, so the guards' work shows in the log. Usage is zero: nothing is read or paid for.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ModelUsage
from inspect_ai.tool import ToolChoice, ToolInfo

from ecom_bench.tasks._errors import input_errors
from ecom_bench.users.scripted_models import SCRIPTED_CUSTOMERS


class ScriptedCustomerAPI(ModelAPI):
    """One provider hosts every scripted customer model; the behaviour is the model name."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        with input_errors():
            if model_name not in SCRIPTED_CUSTOMERS:
                raise ValueError(f"unknown scripted customer model 'ecom-user/{model_name}'; available: "
                                 + ", ".join(f"ecom-user/{m}" for m in SCRIPTED_CUSTOMERS))
            if model_args:
                raise ValueError(f"scripted customer model 'ecom-user/{model_name}' takes no model args, got: "
                                 + ", ".join(sorted(model_args)))

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        messages = [{"role": m.role, "content": m.text} for m in input]
        output = ModelOutput.from_content(self.model_name, await SCRIPTED_CUSTOMERS[self.model_name](messages))
        output.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
        return output
