"""LogEntry ⇄ JSON, the one encoding every store writes (a JSONL line, a SQL ``body`` column).

Each event is an object ``{"v": SCHEMA_VERSION, "type": …}``; messages use the Anthropic wire form
plus a ``meta`` object, so nothing a history holds is lost. Output is ASCII (``\\uXXXX`` escapes):
valid UTF-8 even for lone surrogates, and free of raw NUL, which PostgreSQL text cannot hold. A
compaction whose view refers to messages stored earlier is ``"v": 2`` (``stores/viewrefs.py``).
"""

from __future__ import annotations

import gc
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, assert_never

from contextwarden.errors import FormatError, StoreError
from contextwarden.log import (
    CompactionBoundary,
    LogEntry,
    MessageAdded,
    MetadataSet,
    Preamble,
    UsageRecorded,
)
from contextwarden.model import (
    JSON,
    Block,
    FrozenDict,
    Message,
    MessageMeta,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    freeze,
    thaw,
)
from contextwarden.wire.anthropic import message_from_wire, message_to_wire
from contextwarden.wire.common import loads

SCHEMA_VERSION = 1
"""Version of the event encoding; a reader refuses a newer writer's events instead of guessing."""
VIEW_REFS_VERSION = 2
"""Version of a compaction event whose view holds references (``{"ref": seq, "at": i}``) to
messages stored earlier in the log (``stores/viewrefs.py``); every other event is version 1."""

Ref = tuple[int, int | None]
"""Where a message is stored: (event seq, None) for a MessageAdded's message, (seq, i) for item
``i`` of the view of the compaction event ``seq``."""
Resolve = Callable[[int, int | None], Message]
"""The stored message a reference names."""

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
_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))
"""Built once: ``json.dumps`` with these options builds an encoder on every call."""


def encode(entry: LogEntry, refs: Sequence[Ref | None] = ()) -> str:
    """One event as a compact JSON line (no newline). StoreError when a value is not JSON.

    ``refs``, for a CompactionBoundary: per view message, where the log already holds it (it is
    then written as a reference) or None (written whole)."""
    body = {"v": SCHEMA_VERSION, "type": kind_of(entry), **_fields(entry)}
    if isinstance(entry, CompactionBoundary) and any(refs):
        body["v"] = VIEW_REFS_VERSION
        body["view"] = [
            ref_json(ref) if ref else message_to_json(m)
            for m, ref in zip(entry.view, refs, strict=True)
        ]
    try:
        return _ENCODER.encode(body)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{type(entry).__name__} cannot be stored as JSON: {exc}") from exc


def _fields(entry: LogEntry) -> dict[str, JSON]:
    match entry:
        case Preamble():
            return {"system": thaw(entry.system), "tools": thaw(entry.tools)}
        case MessageAdded():
            return _added_fields(entry)
        case UsageRecorded():
            return {"total": entry.total, "raw": thaw(entry.raw)}
        case CompactionBoundary():
            return _boundary_fields(entry)
        case MetadataSet():
            return {"key": entry.key, "value": thaw(entry.value)}
        case _:
            assert_never(entry)


def _added_fields(entry: MessageAdded) -> dict[str, JSON]:
    out: dict[str, JSON] = {"message": message_to_json(entry.message)}
    if entry.merge:
        out["merge"] = True
    if entry.tokens is not None and entry.counter is not None:
        if not _is_count(entry.tokens) or not isinstance(entry.counter, str):
            raise StoreError(
                f"MessageAdded cannot be stored: tokens must be an integer >= 0 and counter a "
                f"string, got {entry.tokens!r} and {entry.counter!r}"
            )
        out["tokens"], out["counter"] = entry.tokens, entry.counter
    return out


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


def ref_json(ref: Ref) -> dict[str, JSON]:
    seq, at = ref
    return {"ref": seq} if at is None else {"ref": seq, "at": at}


def ref_of(item: Any) -> Ref | None:
    """The reference a stored view item is, or None for a message written whole."""
    if type(item) is not dict or "ref" not in item:
        return None
    at = item.get("at")
    return _int(item["ref"]), _int(at) if at is not None else None


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
@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a whole log is decoded.

    Decoding makes about ten container objects per event and no reference cycles, so the
    collector finds nothing to free, yet its passes over the growing heap cost about a third of
    decoding 10,000 events (the session of benchmarks/bench_stores.py: ``log()`` median ≈ 200 ms
    with it, ≈ 135 ms without). Reference counting still
    frees everything; the collector resumes when the batch is done, unless it was off already
    (e.g. paused by another thread's load, which resumes it in turn).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def decode(line: str | bytes, *, where: str = "", resolve: Resolve | None = None) -> LogEntry:
    """One event from its JSON text; StoreError (naming ``where``) when it cannot be read.
    ``resolve`` finds the messages a compaction's view refers to (None: it may refer to none)."""
    return decode_object(parse(line, where=where), where=where, resolve=resolve)


def parse(line: str | bytes, *, where: str = "") -> Any:
    """The JSON value of one stored event; StoreError when it is not JSON."""
    try:
        return _loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StoreError(f"{where or 'event'}: not valid JSON ({exc})") from exc


_DECODER = json.JSONDecoder()


def _loads(line: str | bytes) -> Any:
    """``json.loads``, minus its per-call overhead for the compact lines our writer writes; any
    other text (whitespace around it, bytes, trailing data) goes through ``json.loads`` itself."""
    if type(line) is str:
        try:
            body, end = _DECODER.raw_decode(line)
        except (json.JSONDecodeError, RecursionError):
            pass
        else:
            if end == len(line):
                return body
    return loads(line)  # too deep for the parser: a JSONDecodeError, like any corrupt line


def decode_object(body: Any, *, where: str = "", resolve: Resolve | None = None) -> LogEntry:
    label = where or "event"
    if type(body) is not dict and not isinstance(body, Mapping):  # the cheap test first
        raise StoreError(f"{label}: expected a JSON object, got {type(body).__name__}")
    version = body.get("v")
    if not isinstance(version, int) or version < 1:
        raise StoreError(f"{label}: missing or bad schema version 'v' ({version!r})")
    if version > SCHEMA_VERSION and not (
        version == VIEW_REFS_VERSION and body.get("type") == "compaction"
    ):
        raise StoreError(
            f"{label}: written with schema version {version}, this contextwarden reads up to "
            f"{SCHEMA_VERSION}; upgrade contextwarden to read this session"
        )
    try:
        return _entry(body, resolve)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, FormatError) as exc:
        # AttributeError: a field that must be an object is not (``.get`` on a list or number).
        raise StoreError(f"{label}: malformed {body.get('type')!r} event ({exc!r})") from exc


def _entry(body: Mapping[str, Any], resolve: Resolve | None) -> LogEntry:
    kind = body.get("type")
    if kind == "message":
        return _added(body)
    if kind == "usage":
        return UsageRecorded(_int(body["total"]), FrozenDict(body.get("raw") or {}))
    if kind == "compaction":
        return _boundary(body, resolve)
    if kind == "metadata":
        return MetadataSet(_str(body["key"]), freeze(body.get("value")))
    if kind == "preamble":
        system = body.get("system")
        if not isinstance(system, str | None):
            system = tuple(FrozenDict(b) for b in system)
        return Preamble(system, tuple(FrozenDict(t) for t in body.get("tools") or ()))
    raise ValueError(f"unknown event type {kind!r}")


def _added(body: Mapping[str, Any]) -> MessageAdded:
    message = message_from_json(body["message"])
    merge = bool(body.get("merge", False))
    tokens, counter = body.get("tokens"), body.get("counter")
    if tokens is None and counter is None:  # no stored count (e.g. written before there were)
        return MessageAdded(message, merge)
    if not _is_count(tokens):
        raise ValueError(f"stored token count must be an integer >= 0, got {tokens!r}")
    return MessageAdded(message, merge, tokens, _str(counter))


def _boundary(body: Mapping[str, Any], resolve: Resolve | None) -> CompactionBoundary:
    summary = body.get("summary")
    timestamp = body.get("timestamp")
    return CompactionBoundary(
        strategy=_str(body["strategy"]),
        trigger=_str(body["trigger"]),
        tokens_before=_int(body["tokens_before"]),
        tokens_after=_int(body["tokens_after"]),
        replaced=_int(body["replaced"]),
        view=tuple(_view_message(m, resolve) for m in body["view"]),
        summary=_str(summary) if summary is not None else None,
        timestamp=float(timestamp) if timestamp is not None else None,
        details=FrozenDict(body.get("details") or {}),
    )


def _view_message(item: Any, resolve: Resolve | None) -> Message:
    ref = ref_of(item)
    if ref is None:
        return message_from_json(item)
    if resolve is None:
        raise ValueError(f"the view refers to event {ref[0]}, which was not read with it")
    return resolve(*ref)


def message_from_json(body: Mapping[str, Any]) -> Message:
    """The inverse of ``message_to_json``: content through the wire reader, meta as stored."""
    meta = body.get("meta") if isinstance(body, Mapping) else None
    blocks = _plain_blocks(body)
    if blocks is None:
        blocks = message_from_wire(body).content
    return Message(body["role"], blocks, _meta_from_json(meta) if meta else _NO_META)


_NO_META = MessageMeta()
_ROLES = ("user", "assistant")


def _plain_blocks(body: Any) -> tuple[Block, ...] | None:
    """The content when every block is in the exact form our writer gives the common blocks
    (text, tool_use, tool_result with text content, thinking, no extra fields); None otherwise.

    A shortcut for loading: it builds what ``block_from_wire`` would build for those shapes,
    without its general checks. Anything else goes through the wire reader, which keeps unknown
    and malformed content and refuses a bad role.
    """
    if type(body) is not dict or body.get("role") not in _ROLES:
        return None
    content = body.get("content")
    if type(content) is not list:
        return None
    blocks: list[Block] = []
    for raw in content:
        block = _plain_block(raw) if type(raw) is dict else None
        if block is None:
            return None
        blocks.append(block)
    return tuple(blocks)


def _plain_block(raw: dict[str, Any]) -> Block | None:
    kind = raw.get("type")
    if kind == "text":
        return _plain_text(raw)
    if kind == "tool_result":
        return _plain_result(raw)
    if kind == "tool_use":
        use_id, name, args = raw.get("id"), raw.get("name"), raw.get("input")
        if len(raw) != 4 or type(use_id) is not str or type(name) is not str:
            return None
        return ToolUseBlock(use_id, name, FrozenDict(args)) if type(args) is dict else None
    if kind == "thinking":
        thinking, signature = raw.get("thinking"), raw.get("signature")
        if len(raw) != 3 or type(thinking) is not str or type(signature) is not str:
            return None
        return ThinkingBlock(thinking, signature)
    return None


def _plain_text(raw: dict[str, Any]) -> TextBlock | None:
    text = raw.get("text")
    return TextBlock(text) if len(raw) == 2 and type(text) is str else None


def _plain_result(raw: dict[str, Any]) -> ToolResultBlock | None:
    use_id, content, error = raw.get("tool_use_id"), raw.get("content"), raw.get("is_error")
    if type(use_id) is not str or type(content) is not str:
        return None
    # Written as {type, tool_use_id, content} plus "is_error": true only when it is set.
    if (len(raw) == 3 and error is None) or (len(raw) == 4 and error is True):
        return ToolResultBlock(use_id, content, error is True)
    return None


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


def _is_count(value: Any) -> bool:
    exact = type(value) is int  # the cheap test first: JSON gives plain ints
    return (exact or (isinstance(value, int) and not isinstance(value, bool))) and value >= 0


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value
