"""What every loader shares: the report of what was read, tolerant reading of JSON and JSONL,
and the small conversions and bookkeeping more than one loader needs (written once, here).

A loader never crashes on bad input and never silently drops a good record: each record it could
not use is reported with its line number (JSONL) or index (JSON) and the reason.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextwarden.errors import ContextWardenError, FormatError
from contextwarden.model import FrozenDict, ImageBlock, Message

if TYPE_CHECKING:
    from contextwarden.history import ConversationHistory
    from contextwarden.tokens.base import TokenCounter


SNIFF_LINES = 5
"""How many parseable head lines a JSONL format's ``sniff`` looks at."""
SHOWN_KEYS = 8
"""How many of an unreadable record's keys an error message names."""
SHOWN_TEXT = 60
"""How many characters of an unreadable line of text an error message quotes."""
RAW_ARGUMENTS = "raw_arguments"
"""Key holding tool-call arguments that are not a JSON object, so they are kept verbatim."""
DATA_URL = re.compile(r"^data:(?P<mt>[^;,]+);base64,(?P<data>.*)$", re.DOTALL)
"""A ``data:<media type>;base64,<data>`` URL, as OpenAI-style APIs carry images and files."""


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
    unreadable: int = 0
    """Records that are not of the format at all (``reject``), as opposed to records of the
    format that were set aside; ``load`` refuses a file where most records are unreadable."""
    first_unreadable: tuple[LoadIssue, str] | None = None
    """The first unreadable record's issue and what it holds (its keys, or its JSON type)."""

    def skip(self, message: str, *, line: int | None = None, index: int | None = None) -> None:
        self.issues.append(LoadIssue(message, line, index))

    def reject(
        self, message: str, value: Any, *, line: int | None = None, index: int | None = None
    ) -> None:
        """Report a record that is not of the format at all, and count it as unreadable."""
        self.skip(message, line=line, index=index)
        self.unreadable += 1
        if self.first_unreadable is None:
            self.first_unreadable = (self.issues[-1], describe_value(value))


def describe_value(value: Any) -> str:
    """What a record holds, for an error message: its keys (first ``SHOWN_KEYS``) or its type."""
    if isinstance(value, Mapping):
        keys = list(value)
        shown = ", ".join(map(str, keys[:SHOWN_KEYS])) + (", …" if len(keys) > SHOWN_KEYS else "")
        return f"keys [{shown}]"
    if isinstance(value, str):
        return f"the text {value[:SHOWN_TEXT]!r}"
    return "text that is not JSON" if value is None else f"a JSON {type(value).__name__}"


@dataclass(frozen=True, slots=True)
class JsonLine:
    line: int
    value: Any


def loads(text: str | bytes) -> Any:
    """``json.loads``; a document nested too deeply for the parser (about 1,000 levels, less when
    called deep in a stack) is a JSONDecodeError like any other malformed JSON, never a
    RecursionError. Values that parse but nest deeper than ``model.MAX_NESTING`` are refused
    later, when they are frozen into blocks."""
    try:
        return json.loads(text)
    except RecursionError:
        document = text if isinstance(text, str) else text.decode("utf-8", errors="replace")
        raise json.JSONDecodeError(
            "objects and arrays nested too deeply for the JSON parser", document, 0
        ) from None


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
            yield JsonLine(number, loads(raw))
        except json.JSONDecodeError as exc:
            report.reject(
                f"malformed JSON ({exc.msg} at column {exc.colno}); line skipped", None, line=number
            )


def parse_json(text: str, path: str | None) -> Any:
    """A whole JSON document, or FormatError saying where it broke."""
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", path=path
        ) from exc


def head_values(head: str, limit: int = SNIFF_LINES) -> Iterator[Mapping[str, Any]]:
    """The JSON objects among the first ``limit`` parseable lines of a file's head."""
    seen = 0
    for raw in head.splitlines():
        try:
            value = loads(raw)
        except json.JSONDecodeError:
            continue  # blank, garbage, or the line cut at the end of the head
        seen += 1
        if isinstance(value, Mapping):
            yield value
        if seen >= limit:
            return


def request_messages(
    document: Any, path: str | None, report: LoadReport, keys: Sequence[str]
) -> tuple[Mapping[str, Any], list[Any]]:
    """A request body and its ``messages``, from a body or a bare list of messages (the body is
    then ``{"messages": document}``); the body's ``keys`` that are present go to the metadata.
    """
    body = document if isinstance(document, Mapping) else {"messages": document}
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise FormatError("expected a list of messages or an object with 'messages'", path=path)
    report.metadata.update({key: body[key] for key in keys if key in body})
    return body, messages


def parse_timestamp(value: Any) -> float | None:
    """Epoch seconds from an ISO-8601 timestamp (``2026-01-21T07:20:48.003Z``), else None.

    A time without a zone (OpenHands writes them) is taken as UTC, so the result does not depend
    on the machine reading the file.
    """
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty one (wrong types read as absent)."""
    return value if isinstance(value, Mapping) else {}


def parse_arguments(text: str) -> dict[str, Any]:
    """Tool-call arguments sent as JSON text: the object, or ``{RAW_ARGUMENTS: text}`` verbatim."""
    try:
        parsed = loads(text)
    except json.JSONDecodeError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {RAW_ARGUMENTS: text}


def image_from_url(url: str) -> ImageBlock:
    """An image block from an http(s) URL or a ``data:<type>;base64,`` URL."""
    match = DATA_URL.match(url)
    if match:
        return ImageBlock(
            FrozenDict({"type": "base64", "media_type": match["mt"], "data": match["data"]})
        )
    return ImageBlock(FrozenDict({"type": "url", "url": url}))


def place_by_line(entries: Iterable[dict[str, Any]], messages: Sequence[Message]) -> None:
    """Set each entry's ``messages_before``: how many view messages start before its ``line``."""
    firsts: list[int] = []  # the first file line of each message; placeholders inherit
    for message in messages:
        lines = message.meta.extra.get("lines")
        firsts.append(lines[0] if lines else (firsts[-1] if firsts else 0))
    for entry in entries:
        entry["messages_before"] = bisect.bisect_left(firsts, entry["line"])


def repeated_tool_use(
    calls: dict[str, int], message: Message, line: int, label: str = "tool_use id"
) -> str | None:
    """Why ``message`` cannot be used when it repeats a tool_use id of an earlier line, else None.

    The API wants tool_use ids unique; a repeated one means a corrupt or copied record. ``calls``
    (id → line) remembers the ids of the messages that passed.
    """
    for use in message.tool_uses:
        if use.id in calls:
            return f"{label} {use.id!r} repeats line {calls[use.id]}"
    calls.update((u.id, line) for u in message.tool_uses)
    return None


def add_or_report(history: ConversationHistory, message: Message, report: LoadReport) -> None:
    """Add a message built from file lines; if the history refuses it, report it by line."""
    lines = message.meta.extra["lines"]
    try:
        history.add(message)
    except ContextWardenError as exc:
        report.skip(f"{exc}; records on lines {', '.join(map(str, lines))} skipped", line=lines[0])


def build_history(
    system: str | None,
    messages: Sequence[Message],
    report: LoadReport,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """A merge-mode history of ``messages``; a turn it cannot take is reported by index."""
    # history.py imports the formats package; importing it at the top would be circular.
    from contextwarden.history import ConversationHistory

    history = ConversationHistory(system, tools, mode="merge", counter=counter)
    for turn in messages:
        try:
            history.add(turn)
        except ContextWardenError as exc:
            ids = turn.meta.source_ids
            where = int(ids[0]) if ids and ids[0].isdigit() else None
            report.skip(f"{exc}; records {', '.join(ids)} skipped", index=where)
    return history


def relocate_issues(
    report: LoadReport,
    first: int,
    *,
    lines: Sequence[int] | None = None,
    indices: Sequence[int] | None = None,
) -> None:
    """Issues from ``report.issues[first]`` on, found by index in a list taken out of the file,
    name their place in the file: the line it came from (``lines``) or its index (``indices``).
    """
    for n in range(first, len(report.issues)):
        issue = report.issues[n]
        if issue.index is None:
            continue
        if lines is not None and issue.index < len(lines):
            report.issues[n] = replace(issue, line=lines[issue.index], index=None)
        elif indices is not None and issue.index < len(indices):
            report.issues[n] = replace(issue, index=indices[issue.index])


def require_single(index: int, what: str, path: Path) -> None:
    """FormatError unless ``index`` is 0: ``what`` (e.g. "a Codex rollout file") holds one
    conversation, so there is nothing else to pick."""
    if index != 0:
        raise FormatError(f"{what} holds one conversation; use index=0", path=str(path))
