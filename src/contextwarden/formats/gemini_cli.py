"""Gemini CLI sessions (``~/.gemini/tmp/<projectHash>/chats/``) into a history, both layouts.

- The JSON layout (``session-*.json``, and ``/chat save`` checkpoints): one object
  ``{sessionId, projectHash, startTime, lastUpdated, messages: […], kind?, summary?}``; older
  files have no ``kind``. Problems are reported by message index.
- The JSONL layout (``session-*.jsonl``): a log the CLI replays on resume. The first line holds the
  session fields; a message line (``{id, type, …}``) adds a message, or replaces the one with the
  same id in place (a reply is re-written once its tool calls finish); ``{"$set": {…}}`` updates
  the session fields (with ``messages``: a checkpoint that replaces the whole conversation);
  ``{"$rewindTo": id}`` removes that message and everything after it. Problems are reported by
  line; each message a rewind or checkpoint removed is reported too.

Session fields go to ``metadata["session"]``. ``info``/``error``/``warning`` messages are the
terminal's notices, never sent to the model: kept in ``metadata["notices"]``. A message with no
text and no tool call (a reply of thoughts alone) is reported and kept whole in
``metadata["empty_messages"]``. How each message record becomes messages is in
``gemini_cli_records``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextwarden.errors import ContextWardenError
from contextwarden.formats.base import is_blank, iter_jsonl, read_text, require_single
from contextwarden.formats.gemini_cli_records import convert
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.common import loads

NAME = "gemini-cli"
EXPECTED = (
    "a Gemini CLI session: JSON {sessionId, projectHash, messages} or session-*.jsonl records"
)
SESSION_KEYS = ("sessionId", "projectHash")
"""Fields only a Gemini CLI session (its first line, in JSONL) holds together."""
NOTICE_TYPES = frozenset({"info", "error", "warning"})
MESSAGE_TYPES = frozenset({"user", "gemini"}) | NOTICE_TYPES


def sniff(path: Path, head: str) -> bool:
    """True when the document, or its first line, is a session object."""
    first = head.lstrip().split("\n", 1)[0]
    try:
        value = loads(first)
    except json.JSONDecodeError:  # a pretty-printed document: look at its first keys
        start = head.lstrip()[:4096]
        return start[:1] == "{" and all(f'"{key}"' in start for key in SESSION_KEYS)
    return isinstance(value, Mapping) and all(isinstance(value.get(k), str) for k in SESSION_KEYS)


@dataclass
class _Place:
    """Where a message record is in the file: its line (JSONL) or its index (JSON)."""

    line: int | None = None
    index: int | None = None


@dataclass
class _Log:
    """The JSONL log replayed: the session fields and the surviving records by id, in order."""

    session: dict[str, Any] = field(default_factory=dict)
    records: dict[str, tuple[_Place, Mapping[str, Any]]] = field(default_factory=dict)
    superseded: int = 0


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read one Gemini CLI session (merge mode); see the module docstring for the rules."""
    require_single(index, "a Gemini CLI session", path)
    text = read_text(path, report)
    try:
        document = loads(text)
    except json.JSONDecodeError:
        document = None
    if isinstance(document, Mapping) and isinstance(document.get("messages"), list):
        session = {k: v for k, v in document.items() if k != "messages"}
        records = _indexed(document["messages"], report)
    else:
        log = _replay(text, report)
        session, records = log.session, list(log.records.values())
        if log.superseded:
            report.metadata["superseded_records"] = log.superseded
    report.metadata["session"] = session
    return _history(records, report, counter)


def _indexed(messages: list[Any], report: LoadReport) -> list[tuple[_Place, Mapping[str, Any]]]:
    report.records += len(messages)
    found = []
    for i, record in enumerate(messages):
        if _is_message(record):
            found.append((_Place(index=i), record))
        else:
            report.reject("not a Gemini CLI message (id, type); skipped", record, index=i)
    return found


def _replay(text: str, report: LoadReport) -> _Log:
    log = _Log()
    for item in iter_jsonl(text, report):
        value, line = item.value, item.line
        if _is_message(value):
            log.superseded += value["id"] in log.records
            log.records[value["id"]] = (_Place(line=line), value)
        elif isinstance(value, Mapping) and isinstance(value.get("$set"), Mapping):
            _set(log, value["$set"], line, report)
        elif isinstance(value, Mapping) and isinstance(value.get("$rewindTo"), str):
            _rewind(log, value["$rewindTo"], line, report)
        elif isinstance(value, Mapping) and all(
            isinstance(value.get(k), str) for k in SESSION_KEYS
        ):
            _set(log, value, line, report)
        else:
            report.reject("not a Gemini CLI session record; line skipped", value, line=line)
    return log


def _set(log: _Log, fields: Mapping[str, Any], line: int, report: LoadReport) -> None:
    messages = fields.get("messages")
    if isinstance(messages, list):  # a checkpoint: the conversation is replaced
        _drop(log, list(log.records), f"replaced by the checkpoint on line {line}", report)
        for record in messages:
            if _is_message(record):
                log.records[record["id"]] = (_Place(line=line), record)
    log.session.update({k: v for k, v in fields.items() if k != "messages"})


def _rewind(log: _Log, target: str, line: int, report: LoadReport) -> None:
    ids = list(log.records)
    start = ids.index(target) if target in ids else 0  # the CLI clears all for an unknown id
    _drop(log, ids[start:], f"rewound by line {line} ($rewindTo {target!r})", report)


def _drop(log: _Log, ids: list[str], why: str, report: LoadReport) -> None:
    for record_id in ids:
        place, _ = log.records.pop(record_id)
        report.skip(f"message {record_id!r} {why}; not in the conversation", line=place.line)
    report.metadata["removed_messages"] = report.metadata.get("removed_messages", 0) + len(ids)


def _is_message(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("id"), str)
        and isinstance(value.get("type"), str)
        and value["type"] in MESSAGE_TYPES
    )


def _history(
    records: list[tuple[_Place, Mapping[str, Any]]],
    report: LoadReport,
    counter: TokenCounter | None,
) -> ConversationHistory:
    history = ConversationHistory(mode="merge", counter=counter)
    notices = []
    for place, record in records:
        if record["type"] in NOTICE_TYPES:
            notices.append({"line": place.line, "index": place.index, **record})
            continue
        _add(history, record, place, report)
    if notices:
        report.metadata["notices"] = notices
        report.skip(
            f"{len(notices)} info/error/warning record(s) are the terminal's notices, never sent "
            "to the model; kept in metadata['notices']"
        )
    return history


def _add(
    history: ConversationHistory, record: Mapping[str, Any], place: _Place, report: LoadReport
) -> None:
    lines = (place.line,) if place.line is not None else ()
    source = record["id"]
    try:
        converted = convert(record, source, lines)
        for note in converted.notes:
            report.skip(note, line=place.line, index=place.index)
        for message in converted.messages:
            if is_blank(message):
                report.metadata.setdefault("empty_messages", []).append(dict(record))
                report.skip(
                    "message holds no text and no tool call (kept in metadata['empty_messages'])",
                    line=place.line,
                    index=place.index,
                )
                continue
            history.add(message)
    except ContextWardenError as exc:
        report.skip(f"{exc}; message skipped", line=place.line, index=place.index)
