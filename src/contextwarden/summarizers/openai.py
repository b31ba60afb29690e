"""OpenAISummarizer: the verified nine-section summary from any chat-completions endpoint.

OpenAI itself, vLLM, llama.cpp server, Ollama… through the official ``openai`` SDK
(``pip install 'contextwarden[openai]'``), imported on first use. Retries and time bounds are
those of ``summarizers.deadline``; whatever still fails becomes a SummarizerError whose
``__cause__`` is the SDK error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Unpack

from contextwarden.errors import SummarizerError
from contextwarden.summarizers.llm import (
    QUERY_SOURCE_HEADER,
    LLMOptions,
    LLMSummarizer,
    SummaryRequest,
)

DEFAULT_CONTEXT_WINDOW = 128_000
"""A common window of chat-completions models, the default for chunking; set yours."""


class OpenAISummarizer(LLMSummarizer):
    """Summaries from an OpenAI-compatible chat-completions endpoint.

    No tool is offered; a reply with ``tool_calls``, an empty reply, a refusal (``refusal`` or
    ``finish_reason == "content_filter"``), a timeout or an HTTP error raises SummarizerError.
    ``max_tokens_param``: newer OpenAI models take ``max_completion_tokens``; most compatible
    servers take ``max_tokens``.
    """

    sdk = "openai"
    clients = ("OpenAI", "AsyncOpenAI")
    sdk_error = "OpenAIError"
    label = "chat-completions"
    default_context_window = DEFAULT_CONTEXT_WINDOW

    def __init__(
        self,
        model: str,
        *,
        max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
        **options: Unpack[LLMOptions],
    ) -> None:
        super().__init__(model, **options)
        self.max_tokens_param = max_tokens_param

    def _arguments(self, request: SummaryRequest) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.prompt},
            ],
            self.max_tokens_param: request.max_tokens,
            "extra_headers": {QUERY_SOURCE_HEADER: request.query_source},
        }

    def _endpoint(self, client: Any) -> Callable[..., Any]:
        create: Callable[..., Any] = client.chat.completions.create
        return create

    def _reply_text(self, response: Any) -> str:
        return reply_text(response)


def reply_text(response: Any) -> str:
    """The text of a chat completion, or SummarizerError when it is not a usable summary."""
    choices = list(getattr(response, "choices", None) or [])
    if not choices:
        raise SummarizerError("the chat completion holds no choices")
    choice = choices[0]
    message = choice.message
    calls = list(getattr(message, "tool_calls", None) or [])
    if calls or getattr(message, "function_call", None) is not None:
        names = [getattr(getattr(c, "function", None), "name", "?") for c in calls]
        raise SummarizerError(
            f"the model answered with a tool call ({', '.join(names) or 'function_call'}) "
            "instead of a summary; no tools were offered"
        )
    if getattr(message, "refusal", None) or choice.finish_reason == "content_filter":
        reason = getattr(message, "refusal", None) or "finish_reason 'content_filter'"
        raise SummarizerError(f"the model refused to summarize: {reason}")
    text = message.content or ""
    if not text.strip():
        raise SummarizerError("the model's reply holds no summary text")
    return str(text)
