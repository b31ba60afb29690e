"""Claude Code session JSONL (``~/.claude/projects/<project>/<session>.jsonl``) into a history:
the loader and its mapping rules (records: ``claude_code_records``; walk: ``claude_code_thread``).

Mapping rules (format facts: the shared corpus's ``transcripts/NOTES.md``):

- Only non-sidechain ``user``/``assistant`` records carry the conversation. ``isSidechain`` records
  (a subagent's own traffic, answered by its Task tool_result) are counted, not loaded.
- The main thread is the ``parentUuid`` chain from the last conversation record back. A
  ``compact_boundary`` continues at its ``logicalParentUuid``; where a parent is missing from the
  file the walk continues at the previous conversation record (``metadata["chain_breaks"]``), so
  nothing before a boundary is lost. Parallel tool calls hang off the chain: records sharing an
  on-chain ``message.id`` and results answering on-chain calls belong to the thread. One reply split
  over records (same ``message.id``, maybe interleaved with its results) becomes one message.
- Other non-sidechain records (abandoned branches after an edit or retry, a ``/exit`` left behind
  by a resume) are not in the view: each is reported and its text kept in
  ``metadata["off_thread"]``.
- Detection is by shape, not by record type: most head records carry a string ``type`` and one of
  ``sessionId``/``parentUuid``/``leafUuid``/``messageId``. A record of a type new to this loader
  is kept whole in ``metadata["unknown_records"]`` with its line, and reported; settings and
  titles (``permission-mode``, ``ai-title``, ``custom-title``, ``agent-name``, ``mode``,
  ``last-prompt``, ``bridge-session``) → ``metadata["session_facts"]`` (latest of each); the pull
  requests a session is linked to (``pr-link``) → ``metadata["pull_requests"]``;
  ``attachment`` records (context Claude Code attached, shown to the model inside later
  records) → ``metadata["attachments"]``.
- ``compact_boundary`` records with the ``isCompactSummary`` record after each (Claude Code's own
  LLM summary) → ``metadata["compactions"]``, never the view: the view is the whole session.
  Exception: a file that starts at a boundary (a resumed session) opens with that summary as its
  first user message (``meta.extra["compact_summary"]``), since it is all the model had of before.
  A partial compaction's ``compactMetadata.preservedSegment`` (head/anchor/tail uuids of the kept
  records) places the boundary before the kept head (``messages_before``) and names the kept
  messages (``preserved_segment.first_message``/``last_message``).
  ``microcompact_boundary`` → ``metadata["microcompactions"]``; ``summary`` records →
  ``metadata["summaries"]``; queued input that never reached the view →
  ``metadata["queued_inputs"]``.
- ``isMeta`` records and tool-injected text (``INJECTED_PREFIXES``: ``<system-reminder>``,
  ``<local-command-stdout>``…) stay in the view, listed in ``meta.extra["injected_texts"]``;
  ``meta.extra["injected"]`` is True when a message holds no typed text. Slash commands
  (``<command-name>``) count as typed: they carry the person's words (``/compact <focus>``).
  Text typed while a tool ran (after tool_result blocks) is kept.
- Meta: ``timestamp`` (epoch s), ``id`` (``message.id`` or record uuid), ``source_ids`` (record
  uuids); ``extra``: ``lines``, ``model``, ``usage`` and ``stop_reason`` (from the reply's last
  record), ``synthetic`` (model ``<synthetic>``), ``api_error``, ``isMeta``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import reduce
from pathlib import Path
from typing import Any

from contextwarden.formats.base import (
    add_or_report,
    head_values,
    parse_timestamp,
    place_by_line,
    read_jsonl,
    require_single,
)
from contextwarden.formats.claude_code_records import Record, Scan
from contextwarden.formats.claude_code_thread import main_thread, turns
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import Block, FrozenDict, Message, MessageMeta, TextBlock, ToolResultBlock
from contextwarden.repair import merge_messages
from contextwarden.tokens.base import TokenCounter

NAME = "claude-code"
EXPECTED = "Claude Code session JSONL: records with sessionId, uuid/parentUuid and message"
SNIFF_RECORDS = 50
"""How many head records ``sniff`` weighs: the file is Claude Code when most of them are."""
MARKER_KEYS = ("sessionId", "parentUuid", "leafUuid", "messageId")
"""Keys only Claude Code records carry at the top level, whatever their ``type``."""
INJECTED_PREFIXES = (
    *"<system-reminder> <local-command-stdout> <local-command-stderr> <local-command-caveat>"
    " <bash-stdout> <bash-stderr> <task-notification> <ide_opened_file> <ide_selection>"
    " <ci-monitor-event>".split(),
    "[Request interrupted by user",
)
"""Text starting with one of these was written into a user record by Claude Code, not typed.

A ``<task-notification>`` record is Claude Code telling the model that a background command or
agent finished (an agent's report in its ``<result>``); releases 2.1.42 to 2.1.63 follow the
element with a line of their own ("Read the output file to retrieve the result: PATH"), which is
no more the person's than the element is. ``<ide_opened_file>`` and ``<ide_selection>`` blocks
are what Claude Code's IDE extension adds in front of the person's words (the file open in the
editor, the lines selected in it): context the IDE saw, not what the person wrote. A
``<ci-monitor-event>`` is Claude Code's CI monitor delivering a GitHub event on a pull request
the session watches (a check run's result, a bot's or a reviewer's comment, a merge conflict;
anthropics/claude-code#55431) in the user role; a review bot's comment is kilobytes of HTML.

Slash-command records (``<command-name>/compact</command-name>…<command-args>…``) are not here:
they hold what the person typed, arguments included; the prompt Claude Code expands a command
into is a separate ``isMeta`` record, and that one is marked.
"""
_LONG_RECORD = (re.compile(r'"parentUuid"\s*:'), re.compile(r'"sessionId"\s*:\s*"'))


def sniff(path: Path, head: str) -> bool:
    """True when most head records have Claude Code's shape (a string ``type`` and its link
    keys), whatever their types: new record types appear with every release."""
    if head.lstrip().startswith('{"parentUuid":'):
        return True  # how Claude Code starts a record, even one longer than the head
    records = list(head_values(head, SNIFF_RECORDS))
    if not records:  # one record longer than the head
        return all(pattern.search(head) for pattern in _LONG_RECORD)
    return 2 * sum(map(looks_like_record, records)) > len(records)


def looks_like_record(value: Mapping[str, Any]) -> bool:
    """A Claude Code record: a string ``type`` and one of the ``MARKER_KEYS``."""
    return isinstance(value.get("type"), str) and any(k in value for k in MARKER_KEYS)


def is_injected_text(text: str) -> bool:
    """True when a user text block was injected by Claude Code (see ``INJECTED_PREFIXES``)."""
    return text.lstrip().startswith(INJECTED_PREFIXES)


# ----------------------------------------------------------------------------- messages
def _message(turn: Sequence[Record]) -> Message:
    merged = reduce(merge_messages, (r.message for r in turn))
    extra = _assistant_extra(turn) if merged.role == "assistant" else _user_extra(turn)
    extra["lines"] = tuple(r.line for r in turn)
    stamps = (parse_timestamp(r.raw.get("timestamp")) for r in turn)
    meta = MessageMeta(
        timestamp=next((t for t in stamps if t is not None), None),
        id=turn[0].msg_id or turn[0].uuid,
        source_ids=tuple(r.uuid for r in turn),
        extra=FrozenDict(extra),
    )
    return Message(merged.role, merged.content, meta)


def _assistant_extra(turn: Sequence[Record]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    for rec in turn:  # later records carry the final usage and stop_reason of a streamed reply
        extra.update({k: v for k, v in rec.message.meta.extra.items() if v is not None})
    ids = list(dict.fromkeys(r.msg_id for r in turn if r.msg_id))
    if len(ids) > 1:
        extra["message_ids"] = tuple(ids)
    if extra.get("model") == "<synthetic>":
        extra["synthetic"] = True
    if any(r.raw.get("isApiErrorMessage") is True for r in turn):
        extra["api_error"] = True
    return extra


def _user_extra(turn: Sequence[Record]) -> dict[str, Any]:
    injected: list[str] = []
    typed = False
    for rec in turn:
        meta = rec.raw.get("isMeta") is True or rec.raw.get("isCompactSummary") is True
        for block in rec.message.content:
            if isinstance(block, TextBlock) and (meta or is_injected_text(block.text)):
                injected.append(block.text)
            elif isinstance(block, TextBlock) and block.text.strip():
                typed = True
    extra: dict[str, Any] = {}
    if injected:
        extra.update(injected_texts=tuple(injected), injected=not typed)
    if any(r.raw.get("isMeta") is True for r in turn):
        extra["isMeta"] = True
    if any(r.raw.get("isCompactSummary") is True for r in turn):
        extra["compact_summary"] = True
    return extra


def _blank(block: Block) -> bool:
    return isinstance(block, TextBlock) and not block.text.strip()


# ----------------------------------------------------------------------------- metadata
def _compactions(scan: Scan, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Boundaries with the compact summary that follows each, and where they fall in the view."""
    entries = scan.boundaries
    for rec in scan.summaries:
        parent = rec.raw.get("parentUuid")
        target = next((e for e in entries if e["uuid"] == parent), None) or next(
            (e for e in reversed(entries) if e["line"] < rec.line and "summary" not in e), None
        )
        if target is None or "summary" in target:
            target = {"kind": "summary_only", "line": rec.line, "uuid": None}
            entries.append(target)
        stamp = rec.raw.get("timestamp")
        target["summary"] = dict(
            line=rec.line, uuid=rec.uuid, text=rec.message.text, timestamp=stamp
        )
    for entry in entries:
        entry.setdefault("summary", None)
    place_by_line(entries, messages)
    for entry in entries:
        if "preserved_segment" in entry:
            _place_preserved(entry, messages)
    return sorted(entries, key=lambda e: int(e["line"]))


def _place_preserved(entry: dict[str, Any], messages: Sequence[Message]) -> None:
    """A partial compaction summarised only what came before its preserved segment: the
    boundary falls before the segment's head, and the segment's messages are named."""
    segment = entry["preserved_segment"]
    where = {uuid: i for i, m in enumerate(messages) for uuid in m.meta.source_ids}
    head, tail = where.get(segment["head_uuid"]), where.get(segment["tail_uuid"])
    if head is None or tail is None:
        segment["in_view"] = False  # the kept records are not in this file
        return
    segment.update(in_view=True, first_message=head, last_message=tail)
    entry["messages_before"] = head


def _opening_summary(scan: Scan, main: Sequence[Record]) -> Record | None:
    """The compact summary a resumed file starts with, when no conversation record precedes it:
    it is what the model was given in place of the earlier session, so it opens the view."""
    first = min((r.line for r in main), default=None)
    summary = scan.summaries[0] if scan.summaries else None
    if summary is None or (first is not None and first < summary.line):
        return None
    return summary


def _not_in_view(queued: list[dict[str, Any]], messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Enqueued inputs whose text is nowhere in the view's user messages (results included)."""
    seen = "\n".join(
        b.text
        for m in messages
        if m.role == "user"
        for b in m.content
        if isinstance(b, TextBlock | ToolResultBlock)
    )
    return [q for q in queued if not isinstance(q["text"], str) or q["text"].strip() not in seen]


def _off_thread(report: LoadReport, others: Sequence[Record]) -> None:
    for rec in others:
        report.skip(
            f"{rec.message.role} record is not on the main thread (abandoned branch); "
            "its text is kept in metadata['off_thread']",
            line=rec.line,
        )
    report.metadata["off_thread"] = [
        {"line": r.line, "uuid": r.uuid, "role": r.message.role, "text": r.message.text}
        for r in others
    ]


def _session_facts(scan: Scan) -> dict[str, Any]:
    first = scan.records[0].raw if scan.records else {}
    return {
        "session_id": first.get("sessionId"),
        "cwd": first.get("cwd"),
        "git_branch": first.get("gitBranch"),
        "versions": sorted({str(r.raw["version"]) for r in scan.records if "version" in r.raw}),
        "sidechain_records": scan.sidechain,
        "record_types": dict(scan.types),
    }


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read one Claude Code session file (merge mode); see the module docstring for the rules."""
    require_single(index, "a Claude Code session file", path)
    scan = Scan(report)
    for item in read_jsonl(path, report):
        scan.add(item.line, item.value)
    main, others = main_thread(scan)
    opening = _opening_summary(scan, main)
    if opening is not None:
        main = [opening, *main]
        report.metadata["opening_summary_line"] = opening.line
    # Blank records (a streamed "\n\n") carry nothing; alone they would split a turn in two.
    blank = [r for r in main if all(_blank(b) for b in r.message.content)]
    report.metadata["blank_records"] = [r.line for r in blank]
    history = ConversationHistory(mode="merge", counter=counter)
    for turn in turns([r for r in main if r not in blank]):
        add_or_report(history, _message(turn), report)
    _off_thread(report, others)
    report.metadata.update(_session_facts(scan))
    report.metadata["compactions"] = _compactions(scan, history.messages)
    queued = report.metadata.get("queued_inputs", [])
    report.metadata["queued_inputs"] = _not_in_view(queued, history.messages)
    return history
