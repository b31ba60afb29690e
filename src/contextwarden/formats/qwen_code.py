"""qwen-code chat files (``~/.qwen/projects/<project>/chats/<sessionId>.jsonl``) into a history:
the file, its thread and what is kept aside (one record as a message: ``qwen_code_records``).

Mapping rules (from files the real qwen-code 0.24.4 wrote and how it reads them back on resume):

- Every line is a record ``{uuid, parentUuid, sessionId, timestamp, type, …}``, ``type`` one of
  ``user``, ``assistant``, ``tool_result``, ``system``. Lines sharing a ``uuid`` are fragments of
  one record: their parts are joined in file order, as qwen-code joins them.
- The conversation is the ``parentUuid`` chain from the last record back (the last one of a
  kind that is not an artifact or sources snapshot, ``NON_CONVERSATION_SUBTYPES``). A rewind
  starts a new branch from an earlier record: the user, assistant and tool_result records left
  off the chain are reported and kept whole in ``metadata["off_thread"]``. Where the chain stops
  before the file's start (a parent missing from the file, a second root, a cycle) the walk goes
  on at the last record before it not yet walked (``metadata["chain_breaks"]``), as the Claude
  Code loader bridges its gaps, so nothing before the gap is lost. ``isSidechain`` records (a
  subagent's own traffic) are kept whole in ``metadata["sidechain"]``, not loaded.
- ``system`` records are qwen-code's bookkeeping, never sent to the model (telemetry, titles,
  attribution and file snapshots, slash commands…): kept whole in ``metadata["system_records"]``
  with their line. A ``chat_compression`` record on the chain (qwen-code's own summary, which it
  resumes from) → also ``metadata["compactions"]`` (``summary.text``: the texts of its
  ``compressedHistory``; ``messages_before``: where it falls), never the view: the view is the
  whole session. ``realtime_message`` records (a voice conversation, not in the model's
  history) → ``metadata["realtime_messages"]``.
- A record whose message holds only thoughts or blank text is reported and kept whole in
  ``metadata["empty_messages"]``; one with no usable message (none, or no parts list) in
  ``metadata["unusable_records"]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contextwarden.errors import ContextWardenError
from contextwarden.formats.base import (
    add_or_report,
    head_values,
    place_by_line,
    read_jsonl,
    require_single,
)
from contextwarden.formats.parent_chain import report_breaks, walk_back
from contextwarden.formats.qwen_code_records import Record, convert, parts_of
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.gemini import CallIds

NAME = "qwen-code"
EXPECTED = (
    "a qwen-code chat JSONL: records with uuid, parentUuid, sessionId, type and a message "
    "{role, parts}"
)
RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
MESSAGE_TYPES = frozenset({"user", "assistant", "tool_result"})
NON_CONVERSATION_SUBTYPES = frozenset(
    {
        "session_sources_snapshot",
        "session_artifact_event",
        "session_artifact_snapshot",
        "managed_session_header_v1",
        "managed_session_event_v1",
        "managed_session_commit_v1",
    }
)
"""System records qwen-code never ends a conversation on: it picks the last other one."""
NOT_SENT_SUBTYPES = frozenset({"realtime_message"})
"""Message records qwen-code leaves out of the model's history."""
SNIFF_RECORDS = 50
"""How many head records ``sniff`` weighs: the file is qwen-code's when most of them are."""
_LONG_RECORD = (
    re.compile(r'^\s*\{"uuid"\s*:\s*"'),
    re.compile(r'"sessionId"\s*:\s*"'),
    re.compile(r'"message"\s*:\s*\{\s*"role"\s*:\s*"(user|model)"\s*,\s*"parts"\s*:\s*\['),
)


def sniff(path: Path, head: str) -> bool:
    """True when most head records have qwen-code's shape and one holds a Gemini content (what
    sets them apart from Claude Code's records, which carry the same link keys)."""
    records = list(head_values(head, SNIFF_RECORDS))
    if not records:  # one record longer than the head
        return all(pattern.search(head) for pattern in _LONG_RECORD)
    ours = [r for r in records if looks_like_record(r)]
    return 2 * len(ours) > len(records) and any(_has_parts(r) for r in ours)


def looks_like_record(value: Any) -> bool:
    """A qwen-code record: string ``uuid`` and ``sessionId``, a ``parentUuid`` and a known
    ``type``."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("uuid"), str)
        and isinstance(value.get("sessionId"), str)
        and "parentUuid" in value
        and isinstance(value.get("type"), str)
        and value["type"] in RECORD_TYPES
    )


def _has_parts(value: Mapping[str, Any]) -> bool:
    message = value.get("message")
    return isinstance(message, Mapping) and isinstance(message.get("parts"), list)


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read one qwen-code chat file (merge mode); see the module docstring for the rules."""
    require_single(index, "a qwen-code chat file", path)
    records = _records(path, report)
    main = [r for r in records if r.raw.get("isSidechain") is not True]
    side = [_kept(r) for r in records if r.raw.get("isSidechain") is True]
    if side:
        report.metadata["sidechain"] = side
    report.metadata["system_records"] = [_kept(r) for r in main if r.kind == "system"]
    chain = _thread(main, report)
    on_chain = {r.uuid for r in chain}
    _keep_off_thread([r for r in main if r.uuid not in on_chain], report)
    history = ConversationHistory(mode="merge", counter=counter)
    compactions = _build(history, chain, report)
    place_by_line(compactions, history.messages)
    report.metadata["compactions"] = compactions
    report.metadata["session_id"] = records[0].raw["sessionId"] if records else None
    return history


def _records(path: Path, report: LoadReport) -> list[Record]:
    """The file's records in order, fragments of one uuid joined into its first place."""
    found: dict[str, Record] = {}
    for item in read_jsonl(path, report):
        if not looks_like_record(item.value):
            why = "not a qwen-code record (uuid, parentUuid, sessionId, type); line skipped"
            report.reject(why, item.value, line=item.line)
            continue
        record = Record((item.line,), item.value)
        earlier = found.get(record.uuid)
        found[record.uuid] = record if earlier is None else _joined(earlier, record, report)
    return list(found.values())


def _joined(first: Record, more: Record, report: LoadReport) -> Record:
    """Two fragments of one record: the parts of both, the later usage; the first's links."""
    report.skip(
        f"continues record {first.uuid!r} of line {first.lines[0]}; its parts are joined to it",
        line=more.lines[0],
    )
    raw = {**more.raw, **first.raw}
    one, two = first.raw.get("message"), more.raw.get("message")
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        raw["message"] = {**one, "parts": [*parts_of(one), *parts_of(two)]}
    elif isinstance(two, Mapping):
        raw["message"] = two
    if "usageMetadata" in more.raw:
        raw["usageMetadata"] = more.raw["usageMetadata"]
    return Record(first.lines + more.lines, raw)


def _thread(records: list[Record], report: LoadReport) -> list[Record]:
    """The chain from the last conversation record back through ``parentUuid``, in order."""
    ends = [r for r in records if r.subtype not in NON_CONVERSATION_SUBTYPES]
    if not ends:
        return []
    by_uuid = {r.uuid: r for r in records}
    links = {r.uuid: (r.lines[0], r.parent) for r in records}
    walked = walk_back(ends[-1].uuid, links, [(r.lines[0], r.uuid) for r in records], report)
    report_breaks(report, "thread")
    return [by_uuid[uuid] for uuid in reversed(walked)]


def _keep_off_thread(records: list[Record], report: LoadReport) -> None:
    """Messages of abandoned branches: reported and kept whole (system records are kept with the
    others wherever they are)."""
    off = [r for r in records if r.kind in MESSAGE_TYPES]
    for record in off:
        report.skip(
            f"{record.kind} record {record.uuid!r} is off the conversation's thread (a rewound "
            "branch); kept in metadata['off_thread']",
            line=record.lines[0],
        )
    if off:
        report.metadata["off_thread"] = [_kept(r) for r in off]


def _build(
    history: ConversationHistory, chain: list[Record], report: LoadReport
) -> list[dict[str, Any]]:
    """Add the thread's messages; the compactions found on it, by line."""
    ids = CallIds()
    compactions: list[dict[str, Any]] = []
    for record in chain:
        if record.kind == "system":
            if record.subtype == "chat_compression":
                compactions.append(_compaction(record))
        elif record.subtype in NOT_SENT_SUBTYPES:
            report.metadata.setdefault("realtime_messages", []).append(_kept(record))
        else:
            _add(history, record, ids, report)
    return compactions


def _add(history: ConversationHistory, record: Record, ids: CallIds, report: LoadReport) -> None:
    line = record.lines[0]
    try:
        converted = convert(record, ids)
    except ContextWardenError as exc:
        report.skip(f"{exc}; kept in metadata['unusable_records']", line=line)
        report.metadata.setdefault("unusable_records", []).append(_kept(record))
        return
    if converted.message is None:
        report.skip(
            "message holds only thoughts or blank text (kept in metadata['empty_messages'])",
            line=line,
        )
        report.metadata.setdefault("empty_messages", []).append(_kept(record))
        return
    add_or_report(history, converted.message, report)


def _compaction(record: Record) -> dict[str, Any]:
    payload = record.raw.get("systemPayload")
    payload = payload if isinstance(payload, Mapping) else {}
    contents = payload.get("compressedHistory")
    texts = [
        part["text"]
        for content in (contents if isinstance(contents, list) else ())
        for part in parts_of(content)
        if isinstance(part, Mapping) and isinstance(part.get("text"), str)
    ]
    summary = {"text": "\n\n".join(texts), "timestamp": record.raw.get("timestamp")}
    return {
        "kind": "chat_compression",
        "line": record.lines[0],
        "uuid": record.uuid,
        "info": payload.get("info"),
        "summary": summary if texts else None,
    }


def _kept(record: Record) -> dict[str, Any]:
    """A record as metadata keeps it: whole, with the line(s) it was read from."""
    return {"line": record.lines[0], **record.raw}
