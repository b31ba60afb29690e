"""Cursor's agent transcripts (``~/.cursor/projects/<slug>/agent-transcripts/<id>/<id>.jsonl``,
older ``agent-transcripts/<id>.jsonl``; the IDE and ``cursor-agent`` write them) into a history.

Mapping rules (real files from Entire checkpoint branches, and what public readers of them say):

- A line is ``{"role": "user"|"assistant", "message": {"content": [blocks]}}`` with Anthropic
  blocks (``text``; newer versions ``tool_use {name, input}``, ``tool_result {content}``), read by
  the Anthropic wire reader; a string ``content`` is one text block. Lines carry no ids and no
  timestamp fields: a message's source id is ``line:N``.
- Most files record the calls and not their results; where results are written, neither side
  carries an id, so they are paired by order: a ``tool_use`` without an id gets
  ``cursor-<line>-<n>``; each ``tool_result`` answers the oldest call not yet answered (one that
  names a pending call by ``tool_use_id`` answers that one). A user line without results ends the
  calls still open: merge mode answers them with its marked placeholder. A result with no open
  call is reported and kept in ``metadata["unanswered_results"]``.
- Cursor wraps what the person typed in ``<user_query>``; the context it adds goes in the same
  text before it (``<attached_files>``, ``<external_links>``…), and the typed part is the
  element's content (``summarizers.typed`` rule 4). A user text made of elements with no
  ``<user_query>`` among them is Cursor's own: listed in ``meta.extra["injected_texts"]``
  (``injected`` when nothing is typed). A bare text (no element at all) counts as typed.
- A user text's ``<timestamp>Monday, Aug 3, 2026, 9:00 AM (UTC+2)</timestamp>`` (newer
  versions) is the message's timestamp; assistant lines have none.
- ``{"type": "turn_ended", "status"}`` lines → ``metadata["turns_ended"]`` (line, status, and
  ``messages_before``); ``{"type": "metadata", "metadata": {…}}`` (a chat's overview) →
  ``metadata["transcript_metadata"]`` with its line. Any other record is kept whole in
  ``metadata["unknown_records"]`` and reported by line; one with no ``type`` is not of this
  format and counts as unreadable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.formats.base import (
    add_or_report,
    head_values,
    parse_timestamp,
    place_by_line,
    read_jsonl,
    require_single,
)
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import Block, FrozenDict, Message, MessageMeta, TextBlock
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.anthropic import block_from_wire

NAME = "cursor"
EXPECTED = (
    'Cursor agent transcript JSONL: {"role": "user"|"assistant", "message": {"content": '
    '[blocks]}} lines and {"type": "turn_ended"} lines'
)
ROLES = ("user", "assistant")
TURN_ENDED = "turn_ended"
QUERY_TAG = "<user_query>"
"""Cursor's wrapper around a typed prompt: a user text of elements without it is its context."""
METADATA = "metadata"
UNKNOWN = "unknown_records"
"""Where a record this loader cannot use is kept whole, with its line."""
_TIMESTAMP_RE = re.compile(r"<timestamp>([^<]{1,100})</timestamp>")
_LOCAL_TIME_RE = re.compile(r"(.{1,80}) \(UTC(?:([+-])(\d{1,2})(?::(\d{2}))?)?\)")
_LOCAL_TIME_FORMAT = "%A, %b %d, %Y, %I:%M %p"
"""How Cursor writes the person's local time: ``Monday, Aug 3, 2026, 9:00 AM``, its UTC offset
after it in parentheses."""


def sniff(path: Path, head: str) -> bool:
    """True when the head holds transcript lines and most head records are Cursor's."""
    records = list(head_values(head))
    lines = sum(map(_is_line, records))
    ours = lines + sum(1 for r in records if r.get("type") in (TURN_ENDED, METADATA))
    return lines > 0 and 2 * ours > len(records)


def _is_line(value: Mapping[str, Any]) -> bool:
    """A message line: top-level role and message, and no ``type`` (Claude Code's records and
    the stream-json events of ``cursor-agent -p`` carry one)."""
    message = value.get("message")
    return (
        value.get("role") in ROLES
        and "type" not in value
        and isinstance(message, Mapping)
        and "content" in message
    )


@dataclass
class _Calls:
    """Tool calls awaiting their results, oldest first (the pairing by order above)."""

    pending: list[str] = field(default_factory=list)
    unanswered: list[dict[str, Any]] = field(default_factory=list)

    def call(self, part: Mapping[str, Any], line: int, n: int) -> Mapping[str, Any]:
        named = part if isinstance(part.get("id"), str) else {**part, "id": f"cursor-{line}-{n}"}
        self.pending.append(named["id"])
        return named

    def result(self, part: Mapping[str, Any], line: int) -> Mapping[str, Any] | None:
        """``part`` naming the call it answers, or None (kept aside) when no call is open."""
        named = part.get("tool_use_id")
        if isinstance(named, str) and named in self.pending:
            self.pending.remove(named)
            return part
        if not self.pending:
            self.unanswered.append({"line": line, "result": dict(part)})
            return None
        return {**part, "tool_use_id": self.pending.pop(0)}


def _parts(value: Mapping[str, Any]) -> list[Any]:
    content = value["message"]["content"]
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise FormatError(f"'message.content' must be a list, got {type(content).__name__}")
    return content


def _blocks(role: str, parts: list[Any], line: int, calls: _Calls) -> tuple[Block, ...]:
    blocks: list[Block] = []
    for n, part in enumerate(parts):
        if not isinstance(part, Mapping):
            blocks.append(block_from_wire({"type": "invalid", "value": part}))
            continue
        kind = part.get("type")
        if role == "assistant" and kind == "tool_use":
            part = calls.call(part, line, n)
        elif role == "user" and kind == "tool_result":
            answered = calls.result(part, line)
            if answered is None:
                continue
            part = answered
        blocks.append(block_from_wire(part))
    return tuple(blocks)


def _message(value: Mapping[str, Any], line: int, calls: _Calls) -> Message:
    role = value["role"]
    parts = _parts(value)
    if role == "user" and not any(_kind(p) == "tool_result" for p in parts):
        calls.pending.clear()  # a new prompt: calls left open get merge mode's placeholder
    blocks = _blocks(role, parts, line, calls)
    extra: dict[str, Any] = {"lines": (line,)}
    stamp = None
    if role == "user":
        extra.update(_injected(blocks))
        stamp = _timestamp(blocks)
    return Message(role, blocks, MessageMeta(stamp, None, (f"line:{line}",), FrozenDict(extra)))


def _timestamp(blocks: tuple[Block, ...]) -> float | None:
    """Epoch seconds of the first ``<timestamp>`` in the message's texts, else None."""
    for block in blocks:
        found = _TIMESTAMP_RE.search(block.text) if isinstance(block, TextBlock) else None
        if found:
            return _local_time(found.group(1).strip()) or parse_timestamp(found.group(1).strip())
    return None


def _local_time(value: str) -> float | None:
    match = _LOCAL_TIME_RE.fullmatch(value)
    if match is None:
        return None
    try:
        moment = datetime.strptime(match.group(1), _LOCAL_TIME_FORMAT)
    except ValueError:
        return None
    sign, hours, minutes = match.group(2), int(match.group(3) or 0), int(match.group(4) or 0)
    offset = timedelta(hours=hours, minutes=minutes) * (-1 if sign == "-" else 1)
    return moment.replace(tzinfo=timezone(offset) if offset else UTC).timestamp()


def _kind(part: Any) -> Any:
    return part.get("type") if isinstance(part, Mapping) else None


def _injected(blocks: tuple[Block, ...]) -> dict[str, Any]:
    texts = [b.text for b in blocks if isinstance(b, TextBlock) and b.text.strip()]
    injected = tuple(t for t in texts if _context_only(t))
    if not injected:
        return {}
    return {"injected_texts": injected, "injected": len(injected) == len(texts)}


def _context_only(text: str) -> bool:
    """True for a text made of Cursor's elements (``<system_reminder>…</system_reminder>``)
    with no prompt among them; a bare text with no element is typed (older builds)."""
    stripped = text.strip()
    return QUERY_TAG not in text and stripped.startswith("<") and stripped.endswith(">")


def _other(value: Any, line: int, report: LoadReport) -> None:
    """A record that is not a message line: a turn's end, or kept as unknown and reported."""
    if isinstance(value, Mapping) and value.get("type") == TURN_ENDED:
        item = {"line": line, "status": value.get("status")}
        report.metadata.setdefault("turns_ended", []).append(item)
        return
    if isinstance(value, Mapping) and value.get("type") == METADATA:
        item = {"line": line, "metadata": value.get(METADATA)}
        report.metadata.setdefault("transcript_metadata", []).append(item)
        return
    if isinstance(value, Mapping) and isinstance(value.get("type"), str):
        why = f"record type {value['type']!r} is new to this loader"
        report.set_aside(UNKNOWN, {"line": line, "record": value}, why, line=line)
    else:
        report.metadata.setdefault(UNKNOWN, []).append({"line": line, "record": value})
        report.reject(
            f"not a Cursor transcript line; kept in metadata[{UNKNOWN!r}]", value, line=line
        )


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read one Cursor agent transcript (merge mode); see the module docstring for the rules."""
    require_single(index, "a Cursor agent transcript", path)
    history = ConversationHistory(mode="merge", counter=counter)
    calls = _Calls()
    for item in read_jsonl(path, report):
        if not isinstance(item.value, Mapping) or not _is_line(item.value):
            _other(item.value, item.line, report)
            continue
        try:
            message = _message(item.value, item.line, calls)
        except FormatError as exc:
            kept = {"line": item.line, "record": item.value}
            report.set_aside(UNKNOWN, kept, str(exc), line=item.line)
            continue
        add_or_report(history, message, report)
    _report_unanswered(calls, report)
    place_by_line(report.metadata.get("turns_ended", ()), history.messages)
    return history


def _report_unanswered(calls: _Calls, report: LoadReport) -> None:
    if not calls.unanswered:
        return
    report.metadata["unanswered_results"] = calls.unanswered
    for item in calls.unanswered:
        report.skip(
            "tool_result answers no open tool call; kept in metadata['unanswered_results']",
            line=item["line"],
        )
