"""One Gemini CLI message record (``{id, timestamp, type, content, …}``) as our messages.

Mapping rules (from real session files and the CLI's ``ConversationRecord`` types):

- ``user`` → a user message. ``content`` is a string or a list of Gemini ``Part`` objects: a
  ``text`` part → text (a text part with more fields, e.g. ``thoughtSignature``, is also kept
  whole in ``meta.extra["text_part_fields"]``); any other part (``inlineData``, ``fileData``,
  ``functionResponse``…) is kept whole as an unknown block. ``displayContent`` (what the
  terminal showed instead) goes to ``meta.extra["display_content"]``.
- ``gemini`` → an assistant message: its text parts (a part marked ``thought`` goes to
  ``meta.extra["thought_parts"]``: the CLI's thoughts carry no signature any API would accept),
  then one ``tool_use`` per ``toolCalls`` entry (``id``, ``name``, ``args``). ``functionCall``
  parts duplicate ``toolCalls`` in newer files and are kept in ``meta.extra``; in a record with
  no ``toolCalls`` they are the calls. ``thoughts`` (subject/description summaries) →
  ``meta.extra["thoughts"]``, ``model`` → ``meta.extra["model"]``, ``tokens`` →
  ``meta.extra["tokens"]`` and, as a chat-completions-shaped ``usage`` (``promptTokenCount``
  includes the cached tokens; thoughts are billed as output), ``meta.extra["usage"]``.
- Each tool call's ``result`` (its ``functionResponse`` parts) → a ``tool_result`` in a user
  message right after: the response's ``output`` (or ``error``, marked ``is_error``) when it is
  text, else the response as JSON. ``status`` ``error``/``cancelled`` marks the result an error.
  A call with no result is reported; merge mode answers it with a placeholder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.formats.base import parse_timestamp
from contextwarden.model import (
    Block,
    FrozenDict,
    Message,
    MessageMeta,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
)

ERROR_STATUSES = frozenset({"error", "cancelled"})
"""Tool call statuses whose result the model saw as a failure."""


@dataclass(frozen=True, slots=True)
class Converted:
    """A record's messages and what the load report should say about it."""

    messages: tuple[Message, ...]
    notes: tuple[str, ...] = ()


def convert(record: Mapping[str, Any], source: str, lines: tuple[int, ...]) -> Converted:
    """The messages of a ``user`` or ``gemini`` record; FormatError when it is not usable."""
    kind = record.get("type")
    base = _meta(record, source, lines)
    if kind == "user":
        content = record.get("content")
        extra = {
            "display_content": record.get("displayContent"),
            "text_part_fields": _text_fields(content),
        }
        return Converted((_message("user", _parts(content), base, extra),))
    if kind == "gemini":
        return _gemini(record, base)
    raise FormatError(f"a message record of type {kind!r} is not a user or gemini message")


def _gemini(record: Mapping[str, Any], base: MessageMeta) -> Converted:
    parts = _as_parts(record.get("content"))
    thought_parts = [p for p in parts if isinstance(p, Mapping) and p.get("thought") is True]
    calls = [c for c in _list(record.get("toolCalls")) if isinstance(c, Mapping)]
    call_parts = [p for p in parts if isinstance(p, Mapping) and "functionCall" in p]
    said = [p for p in parts if p not in thought_parts and p not in call_parts]
    blocks = _parts(said)
    uses = [_use(c) for c in calls] or [
        _use_from_part(p, base, n) for n, p in enumerate(call_parts)
    ]
    extra = {
        "model": record.get("model"),
        "thoughts": record.get("thoughts") or None,
        "thought_parts": thought_parts or None,
        "text_part_fields": _text_fields(said),
        "function_call_parts": call_parts if calls and call_parts else None,
        "tokens": record.get("tokens"),
        "usage": usage_from_tokens(record.get("tokens")),
    }
    assistant = _message("assistant", (*blocks, *uses), base, extra)
    results = [_result(c) for c in calls if c.get("result") is not None]
    notes = tuple(
        f"tool call {c.get('id')!r} ({c.get('name')}) has no recorded result "
        f"(status {c.get('status')!r}); it is answered as not run"
        for c in calls
        if c.get("result") is None
    )
    if not results:
        return Converted((assistant,), notes)
    answer = _message("user", tuple(results), base, {"tool_results": True})
    return Converted((assistant, answer), notes)


def usage_from_tokens(tokens: Any) -> dict[str, Any] | None:
    """Gemini CLI's ``tokens`` summary as a chat-completions ``usage`` (what ``recorded_usage``
    reads): prompt = input + tool-use prompt (cached included), completion = output + thoughts."""
    if not isinstance(tokens, Mapping):
        return None
    number = {
        k: v if isinstance(v, int) and not isinstance(v, bool) else 0 for k, v in tokens.items()
    }
    return {
        "prompt_tokens": number.get("input", 0) + number.get("tool", 0),
        "completion_tokens": number.get("output", 0) + number.get("thoughts", 0),
        "prompt_tokens_details": {"cached_tokens": number.get("cached", 0)},
    }


def _use(call: Mapping[str, Any]) -> ToolUseBlock:
    call_id, name = call.get("id"), call.get("name")
    if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
        raise FormatError("a toolCalls entry needs a string id and name")
    args = call.get("args")
    return ToolUseBlock(call_id, name, args if isinstance(args, Mapping) else {"args": args})


def _use_from_part(part: Mapping[str, Any], base: MessageMeta, n: int) -> ToolUseBlock:
    call = part["functionCall"]
    if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
        raise FormatError("a functionCall part needs a name")
    given = call.get("id")
    call_id = given if isinstance(given, str) and given else f"{base.id}:call:{n}"
    args = call.get("args")
    return ToolUseBlock(call_id, call["name"], args if isinstance(args, Mapping) else {})


def _result(call: Mapping[str, Any]) -> ToolResultBlock:
    texts: list[str] = []
    failed = str(call.get("status")) in ERROR_STATUSES
    for part in _as_parts(call.get("result")):
        response = part.get("functionResponse") if isinstance(part, Mapping) else None
        if isinstance(response, Mapping):
            text, error = _response_text(response.get("response"))
            texts.append(text)
            failed = failed or error
        elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            texts.append(json.dumps(part, ensure_ascii=False))
    return ToolResultBlock(str(call["id"]), "\n".join(texts), failed)


def _response_text(response: Any) -> tuple[str, bool]:
    """A functionResponse's ``response`` as the text the model read, and whether it failed."""
    if isinstance(response, Mapping):
        if isinstance(response.get("output"), str) and len(response) == 1:
            return response["output"], False
        if isinstance(response.get("error"), str) and len(response) == 1:
            return response["error"], True
    return json.dumps(response, ensure_ascii=False), False


def _parts(parts: Any) -> tuple[Block, ...]:
    """Text parts as text blocks (a part's other fields are in ``text_part_fields``, see
    ``_text_fields``); every other part kept whole as an unknown block."""
    blocks: list[Block] = []
    for part in _as_parts(parts):
        if isinstance(part, Mapping) and isinstance(part.get("text"), str):
            if part["text"].strip():
                blocks.append(TextBlock(part["text"]))
        elif isinstance(part, Mapping):
            blocks.append(UnknownBlock(FrozenDict({"type": "gemini_part", **part})))
        else:
            blocks.append(UnknownBlock(FrozenDict({"type": "gemini_part", "value": part})))
    return tuple(blocks)


def _text_fields(parts: Any) -> list[Any] | None:
    """Text parts that carry more than their text (``thoughtSignature``…), kept whole: those
    fields belong to Gemini's wire and would make an Anthropic text block invalid."""
    kept = [
        p
        for p in _as_parts(parts)
        if isinstance(p, Mapping) and isinstance(p.get("text"), str) and len(p) > 1
    ]
    return kept or None


def _as_parts(content: Any) -> Sequence[Any]:
    """Gemini's ``PartListUnion``: a string, one part, or a list of parts (strings allowed)."""
    if content is None or content == "":
        return ()
    items = content if isinstance(content, list) else [content]
    return [{"text": item} if isinstance(item, str) else item for item in items]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _meta(record: Mapping[str, Any], source: str, lines: tuple[int, ...]) -> MessageMeta:
    record_id = record.get("id") if isinstance(record.get("id"), str) else None
    return MessageMeta(
        parse_timestamp(record.get("timestamp")),
        record_id,
        (record_id or source,),
        FrozenDict({"lines": lines} if lines else {}),
    )


def _message(
    role: str, blocks: tuple[Block, ...], base: MessageMeta, extra: Mapping[str, Any]
) -> Message:
    kept = {**base.extra, **{k: v for k, v in extra.items() if v is not None}}
    meta = MessageMeta(base.timestamp, base.id, base.source_ids, FrozenDict(kept))
    return Message("user" if role == "user" else "assistant", blocks, meta)
