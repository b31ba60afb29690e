"""The OpenAI APIs the proxy speaks: chat completions and Responses. Conversions are wire/'s
(``openai_in``/``openai_out``, ``responses``); this module only says where each API keeps its
conversation, its usage and its errors. The client's leading system/developer items are sent
back exactly as they came; only the conversation after them is managed."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.model import Message
from contextwarden.proxy.apis import ErrorKind, model_of
from contextwarden.proxy.matching import session_key, stable
from contextwarden.proxy.values import Incoming, Managed
from contextwarden.wire.openai_in import messages_from_openai
from contextwarden.wire.openai_out import history_to_openai
from contextwarden.wire.responses import messages_from_responses
from contextwarden.wire.responses_out import messages_to_responses

SYSTEM_ROLES = frozenset({"system", "developer"})
COMPACTION_ITEM = "compaction"
"""The input item the Responses API's own compaction leaves (passed through, never managed)."""
TOO_LONG_MARKERS = ("context_length_exceeded", "maximum context length", "context window")
"""How OpenAI-compatible servers (OpenAI, vLLM, llama.cpp …) say the prompt is too long."""


def _split(items: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """(leading system/developer items, the conversation after them)."""
    n = 0
    while n < len(items) and isinstance(items[n], Mapping) and items[n].get("role") in SYSTEM_ROLES:
        n += 1
    return list(items[:n]), list(items[n:])


def _converter(
    read: Callable[[Sequence[Any]], tuple[str | None, list[Message]]],
) -> Callable[[Sequence[Any], int], list[Message]]:
    """``read`` applied to a tail of the conversation, its errors naming the item in the request."""

    def convert(items: Sequence[Any], start: int) -> list[Message]:
        try:
            return read(items)[1]
        except FormatError as exc:
            where = exc.index + start if exc.index is not None else start
            raise FormatError(f"conversation item {where} is not usable: {exc}") from exc

    return convert


def _incoming(
    body: Mapping[str, Any],
    items: Sequence[Any],
    system: Any,
    tools: Any,
    header: str | None,
    convert: Any,
) -> Incoming:
    if not isinstance(tools, list):
        raise FormatError(f"'tools' must be a list, got {type(tools).__name__}")
    first = next((m for m in items if isinstance(m, Mapping) and m.get("role") == "user"), None)
    key = session_key(header, system, first, bool(tools))
    return Incoming(key, stable(system), tools, items, convert, model=model_of(body))


class OpenAIBase:
    """What both OpenAI APIs share: the error shape and "too long" detection."""

    name = "openai"
    path = ""

    def managed(self, body: Mapping[str, Any]) -> bool:
        return True

    def error(self, kind: ErrorKind, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": kind.openai, "param": None, "code": None}}

    def too_long(self, status: int, text: str) -> bool:
        return status == 400 and any(marker in text for marker in TOO_LONG_MARKERS)

    def finish(self, body: Mapping[str, Any], reply: Any, managed: Managed) -> Any:
        return None

    def finish_event(self, body: Mapping[str, Any], event: Any, managed: Managed) -> Any:
        return None


class ChatCompletions(OpenAIBase):
    """``POST /v1/chat/completions``: usage in the reply, and in the last streamed chunk when
    the client asked for it (``stream_options.include_usage``)."""

    name = "openai-chat"
    path = "/v1/chat/completions"

    def conversation(self, body: Mapping[str, Any], header: str | None) -> Incoming:
        items = body.get("messages")
        if not isinstance(items, list):
            raise FormatError("request body needs a 'messages' list")
        system, rest = _split(items)
        if not rest:
            raise FormatError("'messages' holds no conversation after the system messages")
        convert = _converter(messages_from_openai)
        return _incoming(body, rest, system or None, body.get("tools") or [], header, convert)

    def render(
        self, body: Mapping[str, Any], messages: Sequence[Message], *, cache: bool = False
    ) -> dict[str, Any]:
        system, _ = _split(body["messages"])
        return {**body, "messages": [*system, *history_to_openai(None, messages)]}

    def usage(self, reply: Any) -> Any:
        return reply.get("usage") if isinstance(reply, Mapping) else None

    def stream_usage(self, event: Any) -> Any:
        return event.get("usage") if isinstance(event, Mapping) else None


class Responses(OpenAIBase):
    """``POST /v1/responses``: ``instructions`` + ``input`` items; usage in the reply and in the
    stream's ``response.completed`` event. A request continuing server-side state
    (``previous_response_id``) carries only its new items, so it is forwarded unmanaged."""

    name = "openai-responses"
    path = "/v1/responses"

    def conversation(self, body: Mapping[str, Any], header: str | None) -> Incoming:
        items = _input(body)
        system, rest = _split(items)
        if not rest:
            raise FormatError("'input' holds no conversation after the system messages")
        convert = _converter(messages_from_responses)
        preamble = _preamble(body.get("instructions"), system)
        return _incoming(body, rest, preamble, body.get("tools") or [], header, convert)

    def managed(self, body: Mapping[str, Any]) -> bool:
        """Not when the request continues server-side state (``previous_response_id``) or uses
        the API's own compaction (``context_management``, a ``compaction`` item)."""
        if body.get("previous_response_id") is not None or "context_management" in body:
            return False
        items = body.get("input")
        return not (
            isinstance(items, list)
            and any(isinstance(i, Mapping) and i.get("type") == COMPACTION_ITEM for i in items)
        )

    def render(
        self, body: Mapping[str, Any], messages: Sequence[Message], *, cache: bool = False
    ) -> dict[str, Any]:
        system, _ = _split(_input(body))
        return {**body, "input": [*system, *messages_to_responses(messages)]}

    def usage(self, reply: Any) -> Any:
        return reply.get("usage") if isinstance(reply, Mapping) else None

    def stream_usage(self, event: Any) -> Any:
        if isinstance(event, Mapping) and event.get("type") == "response.completed":
            response = event.get("response")
            return response.get("usage") if isinstance(response, Mapping) else None
        return None


def _preamble(instructions: Any, system: list[Any]) -> str | list[dict[str, Any]] | None:
    """``instructions`` and the leading system/developer items as one preamble (Codex sends
    no ``instructions``, only ``developer`` items)."""
    if not system:
        return instructions if isinstance(instructions, str) else None
    head = [{"role": "system", "content": instructions}] if isinstance(instructions, str) else []
    return [*head, *system]


def _input(body: Mapping[str, Any]) -> list[Any]:
    items = body.get("input")
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise FormatError("request body needs an 'input' string or list")
    return items


CHAT = ChatCompletions()
RESPONSES = Responses()
