"""Model providers for the agent, through the real SDKs, streaming the reply as it is written.

Each provider sends the history's managed view in its API's form and returns the complete reply
in a form ``ConversationHistory.add_assistant_message`` takes (the SDK's own message, or the
chat-completion dict assembled from the stream), with its usage, which anchors the token count.
Keys come from the usual environment variables and are never written anywhere.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol

from contextwarden.errors import ContextWardenError, require
from contextwarden.history import ConversationHistory

__all__ = ["DEFAULT_MODELS", "AnthropicProvider", "OpenAIProvider", "Provider", "make_provider"]

DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4.1"}
MAX_OUTPUT_TOKENS = 8_192
"""What a reply may cost at most (the policy's output reserve keeps room for it)."""
LOCAL_KEY = "not-needed"
"""The key sent to a server given with ``--base-url`` when no key is set (local servers ignore
it; the SDKs refuse to start without one)."""

OnText = Callable[[str], None]


class Provider(Protocol):
    """Sends the history, streams the reply's text to ``on_text``, returns the whole reply."""

    name: str
    model: str
    errors: tuple[type[Exception], ...]
    """The SDK's errors (connection, status): a failed request, reported, never a crash."""

    def complete(self, history: ConversationHistory, on_text: OnText) -> Any: ...


def _key(variable: str, base_url: str | None) -> str:
    key = os.environ.get(variable)
    if key:
        return key
    if base_url:
        return LOCAL_KEY
    raise ContextWardenError(f"set {variable} (or point --base-url at a server that needs none)")


class AnthropicProvider:
    """The Messages API (``anthropic`` SDK), with prompt-cache breakpoints placed for the user."""

    name = "anthropic"

    def __init__(self, model: str, base_url: str | None = None) -> None:
        sdk: Any = require("anthropic", "anthropic")
        self.model = model
        self.errors: tuple[type[Exception], ...] = (sdk.APIError,)
        self.client = sdk.Anthropic(api_key=_key("ANTHROPIC_API_KEY", base_url), base_url=base_url)

    def complete(self, history: ConversationHistory, on_text: OnText) -> Any:
        request = history.to_anthropic(cache=True)
        with self.client.messages.stream(
            model=self.model, max_tokens=MAX_OUTPUT_TOKENS, **request
        ) as stream:
            for text in stream.text_stream:
                on_text(text)
            return stream.get_final_message()


class OpenAIProvider:
    """Chat completions (``openai`` SDK): OpenAI or any compatible server (vLLM, llama.cpp,
    Ollama) through ``base_url``."""

    name = "openai"

    def __init__(self, model: str, base_url: str | None = None) -> None:
        sdk: Any = require("openai", "openai")
        self.model = model
        self.errors: tuple[type[Exception], ...] = (sdk.APIError,)
        self.client = sdk.OpenAI(api_key=_key("OPENAI_API_KEY", base_url), base_url=base_url)

    def complete(self, history: ConversationHistory, on_text: OnText) -> Any:
        stream = self.client.chat.completions.create(
            model=self.model,
            stream=True,
            stream_options={"include_usage": True},
            **history.to_openai_request(),
        )
        reply = _Assembled()
        for chunk in stream:
            reply.add(chunk, on_text)
        return reply.completion(self.model)


class _Assembled:
    """A chat completion put together from its stream's chunks."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.usage: Any = None
        self.finish: str | None = None
        self.id = ""

    def add(self, chunk: Any, on_text: OnText) -> None:
        self.id = chunk.id or self.id
        if chunk.usage is not None:
            self.usage = chunk.usage.model_dump()
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                self.text.append(delta.content)
                on_text(delta.content)
            for part in delta.tool_calls or ():
                call = self.calls.setdefault(
                    part.index,
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                call["id"] = part.id or call["id"]
                if part.function is not None:
                    call["function"]["name"] += part.function.name or ""
                    call["function"]["arguments"] += part.function.arguments or ""
            self.finish = choice.finish_reason or self.finish

    def completion(self, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) or None}
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        body: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish}],
        }
        if self.usage is not None:
            body["usage"] = self.usage
        return body


def make_provider(name: str, model: str | None, base_url: str | None) -> Provider:
    """The provider called ``name`` (``anthropic`` or ``openai``) for ``model``."""
    chosen = model or DEFAULT_MODELS[name]
    if name == "anthropic":
        return AnthropicProvider(chosen, base_url)
    if name == "openai":
        return OpenAIProvider(chosen, base_url)
    raise ContextWardenError(f"unknown provider {name!r}; use anthropic or openai")
