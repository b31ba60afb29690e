"""A whole upstream reply read back as the assistant message it carries, for the proxy's own
rounds (``proxy.recalling``): a JSON reply or a buffered SSE stream of the Messages API, chat
completions, Responses or Gemini, assembled as the SDKs assemble it, then read by wire/."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.model import Message
from contextwarden.proxy.sse import EventReader
from contextwarden.wire.anthropic import message_from_wire
from contextwarden.wire.gemini_response import message_from_gemini_response, usage_as_anthropic
from contextwarden.wire.gemini_stream import assemble_stream
from contextwarden.wire.openai_in import message_from_chat_reply
from contextwarden.wire.responses import message_from_response


@dataclass(frozen=True, slots=True)
class Said:
    """What one reply said: its assistant message and its usage (None: it reported none)."""

    message: Message
    usage: Mapping[str, Any] | None
    """In the ledger's terms (Gemini's ``usageMetadata`` read as Anthropic's fields)."""
    reported: Mapping[str, Any] | None = None
    """As the upstream reported it."""


def read_reply(api: str, data: bytes, streamed: bool) -> Said:
    """The reply of ``api`` (an ``Api.name``) in ``data``; FormatError when it holds none."""
    if streamed:
        reader = EventReader()
        return read_events(api, [e.data for e in reader.feed(data + b"\n\n")])
    try:
        reply = json.loads(data)
    except ValueError as exc:
        raise FormatError(f"the upstream's reply is not JSON: {exc}") from exc
    return _said(api, reply)


def read_events(api: str, events: Sequence[Any]) -> Said:
    """The reply a stream's events (their parsed ``data``) make up."""
    try:
        reply = ASSEMBLERS[api]([e for e in events if isinstance(e, Mapping)])
    except ValueError as exc:  # a tool call's arguments that are not JSON
        raise FormatError(f"the upstream's stream is not a reply: {exc}") from exc
    return _said(api, reply)


def _said(api: str, reply: Any) -> Said:
    if not isinstance(reply, Mapping):
        raise FormatError("the upstream's reply holds no message")
    reported = reply.get("usageMetadata" if api == "gemini" else "usage")
    if not isinstance(reported, Mapping):
        return Said(READERS[api](reply), None)
    usage = usage_as_anthropic(reported) if api == "gemini" else reported
    return Said(READERS[api](reply), usage, reported)


def _anthropic(reply: Mapping[str, Any]) -> Message:
    return message_from_wire({"role": "assistant", "content": reply.get("content") or []})


def _messages_stream(events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A Messages API stream as its whole message: blocks from their start and deltas, usage
    from ``message_start`` updated by ``message_delta``."""
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    usage: dict[str, Any] = {}
    for event in events:
        kind, index = event.get("type"), event.get("index")
        if kind == "message_start":
            usage.update((event.get("message") or {}).get("usage") or {})
        elif kind == "message_delta":
            usage.update(event.get("usage") or {})
        elif kind == "content_block_start" and isinstance(index, int):
            blocks[index] = dict(event.get("content_block") or {})
        elif kind == "content_block_delta" and index in blocks:
            _delta(blocks[index], partial.setdefault(index, []), event.get("delta") or {})
    for index, parts in partial.items():
        if parts:
            blocks[index]["input"] = json.loads("".join(parts))
    return {"content": [blocks[i] for i in sorted(blocks)], "usage": usage}


DELTA_FIELDS = {"text_delta": "text", "thinking_delta": "thinking"}


def _delta(block: dict[str, Any], partial: list[str], delta: Mapping[str, Any]) -> None:
    kind = delta.get("type")
    if kind == "input_json_delta":
        partial.append(delta.get("partial_json") or "")
    elif kind == "signature_delta":
        block["signature"] = delta.get("signature", "")
    elif kind in DELTA_FIELDS:
        name = DELTA_FIELDS[kind]
        block[name] = block.get(name, "") + (delta.get(name) or "")


def _chat_stream(chunks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A chat completions stream as its whole completion: content and each tool call's
    id, name and arguments joined from the deltas, usage from the chunk that carries it."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    usage = None
    for chunk in chunks:
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            text.append(delta.get("content") or "")
            for call in delta.get("tool_calls") or []:
                into = calls.setdefault(
                    call.get("index", 0),
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                into["id"] = call.get("id") or into["id"]
                function = call.get("function") or {}
                for key in ("name", "arguments"):
                    into["function"][key] += function.get(key) or ""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {"choices": [{"index": 0, "message": message}], "usage": usage}


def _responses_stream(events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A Responses stream as its whole response: the one ``response.completed`` carries."""
    for event in events:
        if event.get("type") == "response.completed" and isinstance(event.get("response"), dict):
            response: dict[str, Any] = event["response"]
            return response
    raise FormatError("the upstream's stream ended without response.completed")


ASSEMBLERS = {
    "anthropic": _messages_stream,
    "openai-chat": _chat_stream,
    "openai-responses": _responses_stream,
    "gemini": assemble_stream,
}
READERS = {
    "anthropic": _anthropic,
    "openai-chat": message_from_chat_reply,
    "openai-responses": message_from_response,
    "gemini": message_from_gemini_response,
}
