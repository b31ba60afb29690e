"""AnthropicSummarizer: the verified nine-section summary from a model behind the Messages API.

Uses the official ``anthropic`` SDK (``pip install 'contextwarden[anthropic]'``), imported on
first use. ``max_retries`` retries 429s and 5xx with back-off within the summary's deadline
(``summarizers.deadline``); whatever still fails becomes a SummarizerError whose ``__cause__`` is
the SDK error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contextwarden.errors import SummarizerError
from contextwarden.summarizers.llm import QUERY_SOURCE_HEADER, LLMSummarizer, SummaryRequest

DEFAULT_CONTEXT_WINDOW = 200_000
"""Window of current Claude models, the default for chunking."""
_TOOL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


class AnthropicSummarizer(LLMSummarizer):
    """Summaries from an Anthropic Messages endpoint (``base_url`` for proxies and test servers).

    No tool is offered; a reply that calls one, an empty reply, a refusal, a timeout or an HTTP
    error raises SummarizerError (counted by the manager's circuit breaker).
    """

    sdk = "anthropic"
    clients = ("Anthropic", "AsyncAnthropic")
    sdk_error = "AnthropicError"
    label = "Anthropic"
    default_context_window = DEFAULT_CONTEXT_WINDOW

    def _arguments(self, request: SummaryRequest) -> dict[str, Any]:
        return {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": [{"role": "user", "content": request.prompt}],
            "extra_headers": {QUERY_SOURCE_HEADER: request.query_source},
        }

    def _endpoint(self, client: Any) -> Callable[..., Any]:
        create: Callable[..., Any] = client.messages.create
        return create

    def _reply_text(self, response: Any) -> str:
        return reply_text(response)


def reply_text(response: Any) -> str:
    """The text of a Messages API reply, or SummarizerError when it is not a usable summary."""
    if getattr(response, "stop_reason", None) == "refusal":
        raise SummarizerError("the model refused to summarize (stop_reason 'refusal')")
    blocks = list(getattr(response, "content", None) or [])
    called = [getattr(b, "name", "?") for b in blocks if getattr(b, "type", "") in _TOOL_BLOCKS]
    if called:
        raise SummarizerError(
            f"the model answered with a tool call ({', '.join(called)}) instead of a summary; "
            "no tools were offered"
        )
    text = "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text")
    if not text.strip():
        raise SummarizerError("the model's reply holds no summary text")
    return text
