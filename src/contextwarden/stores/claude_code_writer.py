"""Write a stored session in Claude Code's session JSONL, so tools that read those logs open it.

Every message the session ever added is written once, as ``user``/``assistant`` records linked by
``uuid``/``parentUuid`` (what the agent injected into a user message, a slash command's expansion
or a reminder, in ``isMeta`` records of its own, as Claude Code writes it). A compaction with a
summary becomes what Claude Code writes for a partial compaction: a ``system`` record with
``subtype: "compact_boundary"`` (``parentUuid: null``, ``logicalParentUuid`` → the record before,
``compactMetadata`` whose ``preservedSegment`` names the first and last record of the tail kept
verbatim) and a ``user`` record with ``isCompactSummary: true`` holding the summary message as
sent. One without a summary (a tool-result budget, snip, microcompact) becomes a
``microcompact_boundary``. So the file read back gives the context as sent: the summary, then the
kept tail and everything after it. Records the format has no place for (preamble, usage anchors,
metadata) are not written.

A session loaded from Claude Code's own log keeps its compactions only as loader metadata (the view
spans the whole session); passed as ``prior_compactions`` they are written back where they were,
boundary and summary before the message that followed them, so the session's own history of
compactions stays in order ahead of any made here.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import count
from pathlib import Path
from typing import Any

from contextwarden.fileio import write_atomically
from contextwarden.log import CompactionBoundary, LogEntry, MessageAdded
from contextwarden.model import JSON, Block, Message, TextBlock, thaw
from contextwarden.repair import merge_messages
from contextwarden.stores.base import UNDO_STRATEGY, validate_session_id
from contextwarden.wire.anthropic import block_to_wire, message_to_wire

WRITER_VERSION = "contextwarden"
"""The ``version`` field of every record (Claude Code puts its own version there)."""
MANUAL_TRIGGERS = frozenset({"manual", "/compact"})
"""Our boundary triggers that Claude Code calls ``manual``; every other trigger is ``auto``."""
Records = tuple[str, ...]
"""The uuids of the records one message of the view was written as."""
_NAMESPACE = uuid.UUID("8f2b8c8e-4d0c-4a53-9a55-3c1f0b6a2e7d")
"""Record uuids are uuid5(namespace, session id + record number): stable across exports."""


@dataclass(frozen=True, slots=True)
class PriorCompaction:
    """A compaction the session had before it was loaded: where it was and what it said."""

    messages_before: int
    """How many of the session's messages came before it."""
    summary: str | None
    trigger: str = "auto"
    pre_tokens: int | None = None
    timestamp: float | None = None


def prior_compactions(metadata: dict[str, Any]) -> tuple[PriorCompaction, ...]:
    """The ``compact_boundary`` compactions the Claude Code loader recorded in its metadata."""
    found = []
    for entry in metadata.get("compactions") or ():
        if not isinstance(entry, dict) or not isinstance(entry.get("messages_before"), int):
            continue
        summary = entry.get("summary")
        text = summary.get("text") if isinstance(summary, dict) else None
        pre = entry.get("pre_tokens")
        found.append(
            PriorCompaction(
                messages_before=entry["messages_before"],
                summary=text if isinstance(text, str) else None,
                trigger="manual" if entry.get("trigger") == "manual" else "auto",
                pre_tokens=pre if isinstance(pre, int) else None,
                timestamp=_parse_iso(entry.get("timestamp")),
            )
        )
    return tuple(sorted(found, key=lambda c: c.messages_before))


@dataclass
class _Writer:
    session_id: str
    cwd: str
    records: list[dict[str, JSON]] = field(default_factory=list)
    parent: str | None = None
    last_timestamp: float | None = None
    reply_id: str | None = None
    """``message.id`` of the open assistant reply (merged records share it, as in Claude Code)."""
    view: list[Message] = field(default_factory=list)
    """The session's view as the log builds it (``log.derive_view``)."""
    slots: list[Records] = field(default_factory=list)
    """By position in ``view``: the records its message was written as (several for a merged
    reply; none when not known). By position, since equal messages recur (the same command)."""
    undoable: list[tuple[list[Records], int]] = field(default_factory=list)
    """Per live compaction: the slots before it and the view's length after it, for an undo."""

    def uuid(self) -> str:
        return str(uuid.uuid5(_NAMESPACE, f"{self.session_id}:{len(self.records)}"))

    def record(self, kind: str, fields: dict[str, JSON], timestamp: float | None) -> str:
        if timestamp is not None:
            self.last_timestamp = timestamp
        stamp = self.last_timestamp if self.last_timestamp is not None else time.time()
        rec_uuid = self.uuid()
        record: dict[str, JSON] = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": WRITER_VERSION,
            "type": kind,
            **fields,
            "uuid": rec_uuid,
            "timestamp": _iso(stamp),
        }
        self.records.append(record)
        self.parent = rec_uuid
        return rec_uuid

    def message(self, entry: MessageAdded) -> None:
        message = entry.message
        if message.role == "assistant":
            if not (entry.merge and self.reply_id):
                self.reply_id = "msg_" + uuid.uuid5(_NAMESPACE, self.uuid()).hex[:24]
            wire = {"id": self.reply_id, "type": "message", **message_to_wire(message)}
            wire.update(_reply_fields(message))
            written: Records = (
                self.record("assistant", {"message": wire}, message.meta.timestamp),
            )
        else:
            self.reply_id = None
            written = tuple(
                self.record(message.role, {"message": part, **flags}, message.meta.timestamp)
                for part, flags in _user_records(message)
            )
        if entry.merge and self.view:
            self.view[-1] = merge_messages(self.view[-1], message)
            self.slots[-1] += written
        else:
            self.view.append(message)
            self.slots.append(written)

    def prior(self, compaction: PriorCompaction) -> None:
        """A compaction the session already had, as Claude Code wrote it."""
        self.reply_id = None
        logical, self.parent = self.parent, None
        metadata: dict[str, JSON] = {"trigger": compaction.trigger}
        if compaction.pre_tokens is not None:
            metadata["preTokens"] = compaction.pre_tokens
        self._compact_records(logical, metadata, {}, compaction.summary, compaction.timestamp)

    def _compact_records(
        self,
        logical: str | None,
        metadata: dict[str, JSON],
        extra: dict[str, JSON],
        summary: JSON | None,
        timestamp: float | None,
    ) -> str | None:
        """The boundary and summary records; the summary record's uuid, if one was written."""
        fields: dict[str, JSON] = {
            "logicalParentUuid": logical,
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "isMeta": False,
            "level": "info",
            "compactMetadata": metadata,
            **extra,
        }
        self.record("system", fields, timestamp)
        if summary is None:
            return None
        message: dict[str, JSON] = {"role": "user", "content": summary}
        flags: dict[str, JSON] = {"isVisibleInTranscriptOnly": True, "isCompactSummary": True}
        return self.record("user", {"message": message, **flags}, timestamp)

    def boundary(self, entry: CompactionBoundary) -> None:
        self.reply_id = None
        before, self.view = self.view, list(entry.view)
        if entry.strategy == UNDO_STRATEGY:
            saved, length = self.undoable.pop() if self.undoable else ([], len(self.slots))
            self.slots = _fitted(saved + self.slots[length:], len(self.view))  # + added since
            fields: dict[str, JSON] = {"subtype": "undo_compaction", "content": "Compaction undone"}
            self.record("system", {**fields, "level": "info", "isMeta": False}, entry.timestamp)
            return
        self.undoable.append((list(self.slots), len(entry.view)))
        trigger = "manual" if entry.trigger in MANUAL_TRIGGERS else "auto"
        ours: dict[str, JSON] = {
            "strategy": entry.strategy,
            "trigger": entry.trigger,
            "tokens_after": entry.tokens_after,
            "replaced": entry.replaced,
            "details": thaw(entry.details),
        }
        if entry.summary is None:
            self._edited(before, entry, trigger, ours)
        else:
            self._summarized(before, entry, trigger, ours)

    def _edited(
        self,
        before: list[Message],
        entry: CompactionBoundary,
        trigger: str,
        ours: dict[str, JSON],
    ) -> None:
        """A compaction that edited messages in place: Claude Code's microcompact boundary."""
        if len(before) != len(entry.view):  # dropped from the front (truncate keeps the first)
            self.slots = _fitted(self.slots[:1] + self.slots[len(before) - len(entry.view) + 1 :],
                                 len(entry.view))  # fmt: skip
        metadata: dict[str, JSON] = {
            "trigger": trigger,
            "preTokens": entry.tokens_before,
            "tokensSaved": entry.tokens_before - entry.tokens_after,
        }
        fields = {"subtype": "microcompact_boundary", "content": "Context microcompacted"}
        extra = {"microcompactMetadata": metadata, "contextwarden": ours}
        self.record("system", {**fields, "level": "info", "isMeta": False, **extra}, None)

    def _summarized(
        self,
        before: list[Message],
        entry: CompactionBoundary,
        trigger: str,
        ours: dict[str, JSON],
    ) -> None:
        """A summary and the tail kept verbatim after it: a partial compaction."""
        logical, self.parent = self.parent, None
        metadata: dict[str, JSON] = {"trigger": trigger, "preTokens": entry.tokens_before}
        cut = entry.details.get("cut")
        if not isinstance(cut, int):  # no cut recorded: the lead alone replaced what went
            cut = len(before) - len(entry.view) + 1
        kept, slots = (before[cut:], self.slots[cut:]) if entry.view else ([], [])
        # A kept tail that starts with a user message is joined to the lead, after the summary.
        merged = bool(kept) and len(kept) == len(entry.view)
        head = slots[0] if slots else ()
        tail = slots[-1] if slots else ()
        if head and tail:
            segment = {"headUuid": head[0], "anchorUuid": logical, "tailUuid": tail[-1]}
            metadata["preservedSegment"] = segment
        summary = _summary_content(entry, len(kept[0].content) if merged else 0)
        written = self._compact_records(
            logical, metadata, {"contextwarden": ours}, summary, entry.timestamp
        )
        lead = ((written,) if written else ()) + (head if merged else ())
        self.slots = _fitted([lead, *slots[merged:]], len(entry.view))


def _fitted(slots: list[Records], length: int) -> list[Records]:
    """``slots`` cut or padded (records not known) to ``length``, the view's."""
    return slots[:length] + [()] * (length - len(slots))


def claude_code_records(
    entries: Sequence[LogEntry],
    *,
    session_id: str,
    cwd: str = ".",
    prior_compactions: Sequence[PriorCompaction] = (),
) -> list[dict[str, JSON]]:
    """The Claude Code records for a session's log, in order, with the session's own earlier
    compactions placed before the message each preceded."""
    writer = _Writer(validate_session_id(session_id), cwd)
    pending = sorted(prior_compactions, key=lambda c: c.messages_before)
    added = count()
    for entry in entries:
        if isinstance(entry, MessageAdded):
            written = next(added)
            while pending and pending[0].messages_before <= written:
                writer.prior(pending.pop(0))
            writer.message(entry)
        elif isinstance(entry, CompactionBoundary):
            writer.boundary(entry)
    return writer.records


def write_claude_code(
    entries: Sequence[LogEntry],
    path: str | os.PathLike[str],
    *,
    session_id: str,
    cwd: str = ".",
    prior_compactions: Sequence[PriorCompaction] = (),
) -> Path:
    """Write the records to ``path`` atomically (a temporary file renamed over it)."""
    target = Path(path)
    records = claude_code_records(
        entries, session_id=session_id, cwd=cwd, prior_compactions=prior_compactions
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    return write_atomically(target, "".join(_line(r) for r in records))


def _reply_fields(message: Message) -> dict[str, Any]:
    """``model``, ``stop_reason`` and ``usage`` of an assistant reply, when we know them."""
    extra = message.meta.extra
    return {k: thaw(extra[k]) for k in ("model", "stop_reason", "usage") if k in extra}


def _summary_content(entry: CompactionBoundary, kept_blocks: int) -> JSON:
    """The summary message as the model saw it (the view's first message without the
    ``kept_blocks`` of the kept user message joined to its end), else the bare text."""
    summary = entry.summary or ""
    first = entry.view[0] if entry.view else None
    if first is None or first.role != "user":
        return summary
    blocks = first.content[: len(first.content) - kept_blocks]
    if not any(isinstance(b, TextBlock) and summary in b.text for b in blocks):
        return summary
    if len(blocks) == 1 and isinstance(blocks[0], TextBlock):
        return blocks[0].text  # a string, as Claude Code writes its summaries
    return [block_to_wire(b) for b in blocks]


def _line(record: dict[str, JSON]) -> str:
    """One JSON line, UTF-8 like Claude Code's; ASCII escapes when text holds lone surrogates."""
    line = json.dumps(record, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(record, ensure_ascii=True)
    return line + "\n"


def _parse_iso(value: object) -> float | None:
    """Seconds since the epoch of Claude Code's ``2026-01-21T11:23:17.536Z``; ``None`` if not."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo is not None else None


def _user_records(message: Message) -> list[tuple[JSON, dict[str, JSON]]]:
    """A user message as Claude Code writes it: the texts the agent injected (a slash command's
    expansion, a hook's reminder; ``meta.extra["injected_texts"]``) in ``isMeta`` records of their
    own, the rest in records around them, so the file read back tells them from what was typed.
    A message with nothing injected is one record."""
    injected = set(message.meta.extra.get("injected_texts") or ())
    runs: list[tuple[bool, list[Block]]] = []
    for block in message.content:
        meta = isinstance(block, TextBlock) and block.text in injected
        if runs and runs[-1][0] == meta:
            runs[-1][1].append(block)
        else:
            runs.append((meta, [block]))
    if not any(meta for meta, _ in runs):
        return [(message_to_wire(message), {})]
    return [
        (message_to_wire(Message(message.role, tuple(blocks))), {"isMeta": True} if meta else {})
        for meta, blocks in runs
    ]


def _iso(timestamp: float) -> str:
    moment = datetime.fromtimestamp(timestamp, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
