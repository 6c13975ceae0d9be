"""Prompts that extend each other exactly: token-faithful multi-turn rollouts (extra `train`).

An RL trainer scores the tokens the model produced, so the prompt of step k+1 must begin with
the prompt of step k followed by completion k, token for token. Rendering the whole history
again with the chat template breaks that: templates re-serialise tool calls (compact JSON comes
back spaced), drop the reasoning of earlier turns (Qwen3 keeps ``<think>`` only after the last
customer message) and drop the empty ``<think></think>`` a thinking-off prompt opened. So
`ChatPrompts` renders only the first prompt from the messages, and each next one as

    prompt[k+1] = prompt[k] + close(completion[k]) + continuation(new_messages[k])

where ``close`` ends the completion with the template's end-of-turn token (``<|im_end|>``) when
the generation stopped without keeping it, and ``continuation`` is the template's own rendering
of the messages a step added (tool results, the customer's reply) after an assistant turn, then
the generation prompt. At the token level the same holds for ids (`first_ids`, `next_ids`):
``ids[k+1] = ids[k] + completion_ids[k] (+ end-of-turn id) + encode(continuation)``.

    prompts = ChatPrompts.for_tokenizer(tokenizer, enable_thinking=True)
    obs, info = env.reset(seed=0)
    prompt = prompts.first(obs["messages"], obs["tools"])
    while True:
        completion = generate(prompt)                       # raw text, <|im_end|> kept or not
        obs, reward, terminated, truncated, info = env.step(completion)
        if terminated or truncated:
            break
        prompt = prompts.next(prompt, completion, obs["new_messages"], obs["tools"])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: The assistant turn the continuation is rendered after (any text no message holds).
_MARKER = "ecom-bench: the assistant turn before the new messages"
_BASE = [{"role": "system", "content": "system"}, {"role": "user", "content": "user"}]


class ChatPrompts:
    """One chat template's prompts for an episode, each an exact extension of the last.

    Args:
        chat_template: the Jinja template (a tokenizer's ``chat_template``, or a file's text).
        end_of_turn: the text that ends an assistant turn as generated (``<|im_end|>``); by
            default the tokenizer's eos token if the template ends turns with it, else what the
            template writes after an assistant message, stripped of spaces.
        tokenizer: for the token-level methods (and the default end of turn).
        template_kwargs: passed to the template (``enable_thinking=False``, ...).
    """

    def __init__(self, chat_template: str, *, end_of_turn: str | None = None, tokenizer: Any = None,
                 **template_kwargs: Any) -> None:
        if not isinstance(chat_template, str) or not chat_template.strip():
            raise ValueError("chat_template must be the template's text")
        self.chat_template = chat_template
        self.tokenizer = tokenizer
        self.template_kwargs = template_kwargs
        self.end_of_turn = end_of_turn if end_of_turn is not None else self._end_of_turn()
        if not self.end_of_turn:
            raise ValueError("the template writes nothing after an assistant turn: pass end_of_turn=")

    @classmethod
    def for_tokenizer(cls, tokenizer: Any, *, end_of_turn: str | None = None, **template_kwargs: Any) -> ChatPrompts:
        """The prompts of a Hugging Face tokenizer's own chat template."""
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError("the tokenizer has no chat_template")
        return cls(tokenizer.chat_template, end_of_turn=end_of_turn, tokenizer=tokenizer, **template_kwargs)

    # ------------------------------------------------------------------ text
    def render(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None = None, *,
               add_generation_prompt: bool = True) -> str:
        """The template over `messages` (what ``apply_chat_template(tokenize=False)`` gives)."""
        from transformers.utils.chat_template_utils import render_jinja_template

        # (the rendered conversations, their generation indices); its annotation says str
        rendered: Any = render_jinja_template([list(messages)], tools=list(tools) if tools else None,
                                              chat_template=self.chat_template,
                                              add_generation_prompt=add_generation_prompt, **self.template_kwargs)
        return str(rendered[0][0])

    def first(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None = None) -> str:
        """The episode's first prompt: its reset messages, then the generation prompt."""
        return self.render(messages, tools)

    def close(self, completion: str) -> str:
        """The completion as the turn it was: ended by the end-of-turn token."""
        return completion if completion.endswith(self.end_of_turn) else completion + self.end_of_turn

    def continuation(self, new_messages: Sequence[dict[str, Any]],
                     tools: Sequence[dict[str, Any]] | None = None) -> str:
        """What the template writes after an assistant turn's end-of-turn token for the messages
        a step added, then the generation prompt."""
        rendered = self.render([*_BASE, {"role": "assistant", "content": _MARKER}, *new_messages], tools)
        at = rendered.find(_MARKER)
        end = rendered.find(self.end_of_turn, at + len(_MARKER)) if at >= 0 else -1
        if end < 0:
            raise ValueError(f"the template does not end an assistant turn with {self.end_of_turn!r}")
        return rendered[end + len(self.end_of_turn):]

    def next(self, prompt: str, completion: str, new_messages: Sequence[dict[str, Any]],
             tools: Sequence[dict[str, Any]] | None = None) -> str:
        """The next prompt: `prompt`, the completion it got (closed), the step's new messages."""
        return prompt + self.close(completion) + self.continuation(new_messages, tools)

    # ------------------------------------------------------------------ tokens
    def first_ids(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None = None
                  ) -> list[int]:
        """`first`, tokenised."""
        return self._encode(self.first(messages, tools))

    def next_ids(self, prompt_ids: Sequence[int], completion_ids: Sequence[int],
                 new_messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None = None) -> list[int]:
        """`next` on ids: the prompt's and the completion's ids as they were (closed with the
        end-of-turn id when the generation did not keep it), then the continuation's."""
        end = self._encode(self.end_of_turn)
        closed = list(completion_ids)
        if closed[-len(end):] != end:
            closed += end
        return [*prompt_ids, *closed, *self._encode(self.continuation(new_messages, tools))]

    # ------------------------------------------------------------------ helpers
    def _encode(self, text: str) -> list[int]:
        if self.tokenizer is None:
            raise ValueError("token ids need a tokenizer: ChatPrompts(..., tokenizer=) or ChatPrompts.for_tokenizer")
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def _end_of_turn(self) -> str:
        rendered = self.render([*_BASE, {"role": "assistant", "content": _MARKER}], add_generation_prompt=False)
        at = rendered.find(_MARKER)
        after = rendered[at + len(_MARKER):] if at >= 0 else ""
        eos = getattr(self.tokenizer, "eos_token", None)
        if isinstance(eos, str) and eos and after.startswith(eos):
            return eos
        return after.strip()
