"""A Gemini ``generateContent`` response (SDK object or dict) as one assistant message: its
first candidate's content read by ``gemini``, its id, model, finish reason and usage in the meta
(``usage`` in the Anthropic terms the token ledger and the proxy anchor on)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.model import FrozenDict, Message, MessageMeta
from contextwarden.wire.common import as_mapping
from contextwarden.wire.gemini import (
    CallIds,
    camel,
    content_message,
    gemini_plain,
    is_gemini_response,
)

USAGE_KEY = "gemini_usage"
"""``meta.extra`` key holding a response's ``usageMetadata`` as the API gave it."""


def message_from_gemini_response(response: Any, taken: Collection[str] = ()) -> Message:
    """The first candidate of a ``GenerateContentResponse`` (object or dict) as an assistant
    message, with ``id``, ``model``, ``stop_reason`` and ``usage`` in the meta."""
    data = gemini_plain(response)
    if not is_gemini_response(data):
        raise FormatError("a generateContent response needs a 'candidates' list")
    candidates = data["candidates"]
    if not candidates or not isinstance(candidates[0], Mapping):
        feedback = as_mapping(data.get("promptFeedback") or data.get("prompt_feedback"))
        reason = feedback.get("blockReason") or feedback.get("block_reason") or "none given"
        raise FormatError(f"the response has no candidate (block reason: {reason}); nothing to add")
    candidate = {camel(k): v for k, v in candidates[0].items()}
    content = as_mapping(candidate.get("content"))
    if not content.get("parts"):
        reason = candidate.get("finishReason")
        raise FormatError(f"the response's candidate has no parts (finishReason {reason!r})")
    message = content_message({**content, "role": "model"}, CallIds(taken))
    return Message("assistant", message.content, _response_meta(data, candidate))


def _response_meta(data: Mapping[str, Any], candidate: Mapping[str, Any]) -> MessageMeta:
    plain = {camel(k): v for k, v in data.items()}
    keep: dict[str, Any] = {}
    if isinstance(plain.get("modelVersion"), str):
        keep["model"] = plain["modelVersion"]
    if isinstance(candidate.get("finishReason"), str):
        keep["stop_reason"] = candidate["finishReason"]
    usage = plain.get("usageMetadata")
    if isinstance(usage, Mapping):
        keep["usage"] = usage_as_anthropic(usage)
        keep[USAGE_KEY] = usage
    response_id = plain.get("responseId")
    return MessageMeta(
        id=response_id if isinstance(response_id, str) else None, extra=FrozenDict(keep)
    )


def usage_as_anthropic(usage: Mapping[str, Any]) -> dict[str, int]:
    """``usageMetadata`` in the terms the ledger and the proxy read: the prompt less its cached
    part as ``input_tokens``, the cached part as a cache read, the candidates as output (thoughts
    are not resent, so they are not part of the next request's context)."""
    plain = {camel(k): v for k, v in usage.items()}
    prompt, cached = _int(plain.get("promptTokenCount")), _int(plain.get("cachedContentTokenCount"))
    return {
        "input_tokens": max(prompt - cached, 0),
        "cache_read_input_tokens": cached,
        "output_tokens": _int(plain.get("candidatesTokenCount")),
    }


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
