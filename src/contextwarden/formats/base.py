"""What every session-file loader shares: tolerant reading of JSON and JSONL files, and the small
bookkeeping more than one loader needs (written once, here).

A loader never crashes on bad input and never silently drops a good record: each record it could
not use is reported with its line number (JSONL) or index (JSON) and the reason.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextwarden.errors import ContextWardenError, FormatError
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import Message, TextBlock
from contextwarden.wire.common import loads

if TYPE_CHECKING:
    from contextwarden.tokens.base import TokenCounter


SNIFF_LINES = 5
"""How many parseable head lines a JSONL format's ``sniff`` looks at."""


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
        report.skip(_replaced(exc.start))
        return data.decode("utf-8", errors="replace")


def iter_jsonl(text: str, report: LoadReport) -> Iterator[JsonLine]:
    """Parsed JSON lines with 1-based line numbers; malformed lines are reported and skipped."""
    return _parsed(enumerate(text.splitlines(), start=1), report)


def read_jsonl(path: str | Path, report: LoadReport) -> Iterator[JsonLine]:
    """``iter_jsonl`` of the file, read one line at a time: a large file is never in memory
    whole (nor twice, as bytes and text), so peak memory follows its longest line. Lines end at
    ``\n`` only (a U+2028 inside a JSON string stays in its line); invalid UTF-8 is replaced
    and reported once, as ``read_text`` does, with its line."""
    return _parsed(_file_lines(Path(path), report), report)


def _file_lines(path: Path, report: LoadReport) -> Iterator[tuple[int, str]]:
    number, offset, reported = 0, 0, False
    with path.open("rb") as file:
        for raw in file:  # not enumerate(): its result tuple would keep the last line alive
            number += 1
            end = len(raw) - (raw.endswith(b"\n") + raw.endswith(b"\r\n"))
            view = memoryview(raw)[:end]  # decoded in place: no copy of a long line
            try:
                line = str(view, "utf-8")
            except UnicodeDecodeError as exc:
                if not reported:
                    report.skip(_replaced(offset + exc.start), line=number)
                    reported = True
                line = str(view, "utf-8", "replace")
            offset += len(raw)
            view.release()
            del view, raw  # only the text of the line is held while it is parsed
            yield number, line


def _replaced(offset: int) -> str:
    return f"invalid UTF-8 at byte {offset}; undecodable bytes replaced with U+FFFD"


def _parsed(lines: Iterable[tuple[int, str]], report: LoadReport) -> Iterator[JsonLine]:
    for number, raw in lines:
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


def json_list(path: Path, report: LoadReport, what: str) -> list[Any]:
    """A file holding one JSON list (of ``what``), its items counted as the file's records."""
    document = parse_json(read_text(path, report), str(path))
    if not isinstance(document, list):
        raise FormatError(f"expected a JSON list of {what}", path=str(path))
    report.records += len(document)
    return document


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


def holds_json_lines(head: str) -> bool:
    """True when the head is JSON Lines: its first line is a whole JSON value and more follows.
    No single JSON document (a request body, a list of messages) starts so, however printed."""
    first, _, rest = head.lstrip("\ufeff \t\r\n").partition("\n")
    if not rest.strip():
        return False
    try:
        loads(first)
    except json.JSONDecodeError:
        return False
    return True


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


def is_blank(message: Message) -> bool:
    """True when merge mode would add nothing of ``message``: it holds only empty text, or no
    block at all. A loader reports such a message instead of letting it vanish."""
    return all(isinstance(b, TextBlock) and not b.text.strip() for b in message.content)
