"""A ``streamGenerateContent`` stream (``alt=sse``: one ``GenerateContentResponse`` per event)
assembled into the one response it amounts to, then read as an assistant message.

Parts arrive in order; consecutive text chunks of the same kind (thought or answer) are joined,
and a ``thoughtSignature`` (often sent on a last, empty text chunk) closes the part it lands on,
as the whole response would carry it. Calls and other parts are kept as they came.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.model import Message
from contextwarden.wire.common import as_mapping
from contextwarden.wire.gemini import gemini_plain
from contextwarden.wire.gemini_response import message_from_gemini_response

_FIRST = ("responseId", "modelVersion", "createTime")
"""Response fields every chunk repeats: the first one's is kept."""
_LAST = ("usageMetadata", "promptFeedback")
"""Response fields that grow over the stream: the last one's is kept."""


def assemble_stream(chunks: Iterable[Any]) -> dict[str, Any]:
    """The whole response of a stream's chunks (objects or dicts, in order)."""
    parts: list[Any] = []
    candidate: dict[str, Any] = {}
    response: dict[str, Any] = {}
    for n, chunk in enumerate(chunks):
        data = gemini_plain(chunk)
        if not isinstance(data, Mapping):
            raise FormatError(f"stream chunk {n} is not a JSON object", index=n)
        for key in _FIRST:
            if key in data and key not in response:
                response[key] = data[key]
        response.update({k: data[k] for k in _LAST if k in data})
        first = (data.get("candidates") or [None])[0]
        if isinstance(first, Mapping):
            candidate.update({k: v for k, v in first.items() if k != "content"})
            for part in as_mapping(first.get("content")).get("parts") or []:
                _add_part(parts, part)
    if not parts:
        raise FormatError("the stream carried no content parts")
    whole = {**candidate, "content": {"role": "model", "parts": parts}}
    return {"candidates": [whole], **response}


def message_from_gemini_stream(chunks: Iterable[Any], taken: Collection[str] = ()) -> Message:
    """The assistant message a ``streamGenerateContent`` stream amounts to."""
    return message_from_gemini_response(assemble_stream(chunks), taken)


def _add_part(parts: list[Any], part: Any) -> None:
    last = parts[-1] if parts else None
    if isinstance(last, Mapping) and isinstance(part, Mapping) and _joins(last, part):
        parts[-1] = {**last, **part, "text": last["text"] + part["text"]}
    else:
        parts.append(part)  # not an object: read as an invalid part, kept


def _joins(last: Mapping[str, Any], part: Mapping[str, Any]) -> bool:
    """Whether ``part`` continues the text of ``last``: both text of the same kind, and no
    signature closed ``last`` yet."""
    return (
        isinstance(last.get("text"), str)
        and isinstance(part.get("text"), str)
        and last.get("thought") == part.get("thought")
        and "thoughtSignature" not in last
        and set(part) <= {"text", "thought", "thoughtSignature"}
    )
