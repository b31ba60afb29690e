"""What every loader shares: the report of what was read, and tolerant reading of JSON and JSONL.

A loader never crashes on bad input and never silently drops a good record: each record it could
not use is reported with its line number (JSONL) or index (JSON) and the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextwarden.errors import ContextWardenError, FormatError
from contextwarden.model import Message

if TYPE_CHECKING:
    from contextwarden.history import ConversationHistory


SNIFF_LINES = 5
"""How many parseable head lines a JSONL format's ``sniff`` looks at."""


@dataclass(frozen=True, slots=True)
class LoadIssue:
    """A record that could not be used, or was used after a repair."""

    message: str
    line: int | None = None
    """1-based line number in a JSONL file."""
    index: int | None = None
    """Record or message index in a JSON document."""

    def __str__(self) -> str:
        where = [f"line {self.line}" if self.line is not None else "", ""]
        where[1] = f"record {self.index}" if self.index is not None else ""
        prefix = ", ".join(w for w in where if w)
        return f"{prefix}: {self.message}" if prefix else self.message


@dataclass
class LoadReport:
    """Where a history came from and what could not be read from it."""

    path: str | None
    format: str
    records: int = 0
    """Records (lines, events, messages) the file holds."""
    issues: list[LoadIssue] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    """Format-specific facts kept aside (compaction records, session ids, conversation count…)."""

    def skip(self, message: str, *, line: int | None = None, index: int | None = None) -> None:
        self.issues.append(LoadIssue(message, line, index))


@dataclass(frozen=True, slots=True)
class JsonLine:
    line: int
    value: Any


def read_text(path: str | Path, report: LoadReport) -> str:
    """The file's text; invalid UTF-8 is replaced with U+FFFD and reported, not fatal."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        report.skip(f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced with U+FFFD")
        return data.decode("utf-8", errors="replace")


def iter_jsonl(text: str, report: LoadReport) -> Iterator[JsonLine]:
    """Parsed JSON lines with 1-based line numbers; malformed lines are reported and skipped."""
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        report.records += 1
        try:
            yield JsonLine(number, json.loads(raw))
        except json.JSONDecodeError as exc:
            report.skip(
                f"malformed JSON ({exc.msg} at column {exc.colno}); line skipped", line=number
            )


def parse_json(text: str, path: str | None) -> Any:
    """A whole JSON document, or FormatError saying where it broke."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", path=path
        ) from exc


def head_values(head: str, limit: int = SNIFF_LINES) -> Iterator[Mapping[str, Any]]:
    """The JSON objects among the first ``limit`` parseable lines of a file's head."""
    seen = 0
    for raw in head.splitlines():
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            continue  # blank, garbage, or the line cut at the end of the head
        seen += 1
        if isinstance(value, Mapping):
            yield value
        if seen >= limit:
            return


def parse_timestamp(value: Any) -> float | None:
    """Epoch seconds from an ISO-8601 timestamp (``2026-01-21T07:20:48.003Z``), else None."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def first_lines(messages: Sequence[Message]) -> list[int]:
    """The first file line of each view message (placeholders inherit the one before them)."""
    out: list[int] = []
    for message in messages:
        lines = message.meta.extra.get("lines")
        out.append(lines[0] if lines else (out[-1] if out else 0))
    return out


def add_or_report(history: ConversationHistory, message: Message, report: LoadReport) -> None:
    """Add a message built from file lines; if the history refuses it, report it by line."""
    lines = message.meta.extra["lines"]
    try:
        history.add(message)
    except ContextWardenError as exc:
        report.skip(f"{exc}; records on lines {', '.join(map(str, lines))} skipped", line=lines[0])
