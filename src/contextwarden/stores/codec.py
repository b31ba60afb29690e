"""LogEntry ⇄ JSON, the one encoding every store writes (a JSONL line, a SQL ``body`` column).

Each event is an object ``{"v": SCHEMA_VERSION, "type": …}``; messages use the Anthropic wire form
plus a ``meta`` object, so nothing a history holds is lost. Output is ASCII (``\\uXXXX`` escapes):
valid UTF-8 even for lone surrogates, and free of raw NUL, which PostgreSQL text cannot hold.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, assert_never

from contextwarden.errors import FormatError, StoreError
from contextwarden.formats.anthropic import message_from_wire, message_to_wire
from contextwarden.log import (
    CompactionBoundary,
    LogEntry,
    MessageAdded,
    MetadataSet,
    Preamble,
    UsageRecorded,
)
from contextwarden.model import JSON, FrozenDict, Message, MessageMeta, freeze, thaw

SCHEMA_VERSION = 1
"""Version of the event encoding; a reader refuses a newer writer's events instead of guessing."""

KINDS: dict[type, str] = {
    Preamble: "preamble",
    MessageAdded: "message",
    UsageRecorded: "usage",
    CompactionBoundary: "compaction",
    MetadataSet: "metadata",
}
"""The ``type`` written for each LogEntry class (also the ``kind`` column of the SQL stores)."""


def kind_of(entry: LogEntry) -> str:
    try:
        return KINDS[type(entry)]
    except KeyError:
        raise StoreError(
            f"cannot store a {type(entry).__name__}; events must be LogEntry values "
            "(Preamble, MessageAdded, UsageRecorded, CompactionBoundary, MetadataSet)"
        ) from None


# ----------------------------------------------------------------------------- encoding
def encode(entry: LogEntry) -> str:
    """One event as a compact JSON line (no newline). StoreError when a value is not JSON."""
    body = {"v": SCHEMA_VERSION, "type": kind_of(entry), **_fields(entry)}
    try:
        return json.dumps(body, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{type(entry).__name__} cannot be stored as JSON: {exc}") from exc


def _fields(entry: LogEntry) -> dict[str, JSON]:
    match entry:
        case Preamble():
            return {"system": thaw(entry.system), "tools": thaw(entry.tools)}
        case MessageAdded():
            out = {"message": message_to_json(entry.message)}
            return {**out, "merge": True} if entry.merge else out
        case UsageRecorded():
            return {"total": entry.total, "raw": thaw(entry.raw)}
        case CompactionBoundary():
            return _boundary_fields(entry)
        case MetadataSet():
            return {"key": entry.key, "value": thaw(entry.value)}
        case _:
            assert_never(entry)


def _boundary_fields(entry: CompactionBoundary) -> dict[str, JSON]:
    return {
        "strategy": entry.strategy,
        "trigger": entry.trigger,
        "tokens_before": entry.tokens_before,
        "tokens_after": entry.tokens_after,
        "replaced": entry.replaced,
        "summary": entry.summary,
        "timestamp": entry.timestamp,
        "details": thaw(entry.details),
        "view": [message_to_json(m) for m in entry.view],
    }


def message_to_json(message: Message) -> dict[str, JSON]:
    """The wire form plus the MessageMeta fields that are set."""
    body = message_to_wire(message)
    meta = _meta_to_json(message.meta)
    if meta:
        body["meta"] = meta
    return body


def _meta_to_json(meta: MessageMeta) -> dict[str, JSON]:
    out: dict[str, JSON] = {}
    if meta.timestamp is not None:
        out["timestamp"] = meta.timestamp
    if meta.id is not None:
        out["id"] = meta.id
    if meta.source_ids:
        out["source_ids"] = list(meta.source_ids)
    if meta.extra:
        out["extra"] = thaw(meta.extra)
    return out


# ----------------------------------------------------------------------------- decoding
def decode(line: str | bytes, *, where: str = "") -> LogEntry:
    """One event from its JSON text; StoreError (naming ``where``) when it cannot be read."""
    try:
        body = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StoreError(f"{where or 'event'}: not valid JSON ({exc})") from exc
    return decode_object(body, where=where)


def decode_object(body: Any, *, where: str = "") -> LogEntry:
    label = where or "event"
    if not isinstance(body, Mapping):
        raise StoreError(f"{label}: expected a JSON object, got {type(body).__name__}")
    version = body.get("v")
    if not isinstance(version, int) or version < 1:
        raise StoreError(f"{label}: missing or bad schema version 'v' ({version!r})")
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{label}: written with schema version {version}, this contextwarden reads up to "
            f"{SCHEMA_VERSION}; upgrade contextwarden to read this session"
        )
    try:
        return _entry(body)
    except (KeyError, TypeError, ValueError, FormatError) as exc:
        raise StoreError(f"{label}: malformed {body.get('type')!r} event ({exc!r})") from exc


def _entry(body: Mapping[str, Any]) -> LogEntry:
    kind = body.get("type")
    if kind == "message":
        return MessageAdded(message_from_json(body["message"]), bool(body.get("merge", False)))
    if kind == "usage":
        return UsageRecorded(_int(body["total"]), FrozenDict(body.get("raw") or {}))
    if kind == "compaction":
        return _boundary(body)
    if kind == "metadata":
        return MetadataSet(_str(body["key"]), freeze(body.get("value")))
    if kind == "preamble":
        system = body.get("system")
        if not isinstance(system, str | None):
            system = tuple(FrozenDict(b) for b in system)
        return Preamble(system, tuple(FrozenDict(t) for t in body.get("tools") or ()))
    raise ValueError(f"unknown event type {kind!r}")


def _boundary(body: Mapping[str, Any]) -> CompactionBoundary:
    summary = body.get("summary")
    timestamp = body.get("timestamp")
    return CompactionBoundary(
        strategy=_str(body["strategy"]),
        trigger=_str(body["trigger"]),
        tokens_before=_int(body["tokens_before"]),
        tokens_after=_int(body["tokens_after"]),
        replaced=_int(body["replaced"]),
        view=tuple(message_from_json(m) for m in body["view"]),
        summary=_str(summary) if summary is not None else None,
        timestamp=float(timestamp) if timestamp is not None else None,
        details=FrozenDict(body.get("details") or {}),
    )


def message_from_json(body: Mapping[str, Any]) -> Message:
    """The inverse of ``message_to_json``: content through the wire reader, meta as stored."""
    message = message_from_wire(body)
    meta = body.get("meta")
    return Message(message.role, message.content, _meta_from_json(meta) if meta else _NO_META)


_NO_META = MessageMeta()


def _meta_from_json(raw: Mapping[str, Any]) -> MessageMeta:
    timestamp = raw.get("timestamp")
    number = isinstance(timestamp, int | float) and not isinstance(timestamp, bool)
    if timestamp is not None and not (number and math.isfinite(timestamp)):
        raise ValueError(f"message timestamp must be a number, got {timestamp!r}")
    msg_id = raw.get("id")
    return MessageMeta(
        timestamp=float(timestamp) if timestamp is not None else None,
        id=_str(msg_id) if msg_id is not None else None,
        source_ids=tuple(_str(s) for s in raw.get("source_ids") or ()),
        extra=FrozenDict(raw.get("extra") or {}),
    )


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value
