"""Claude Code session JSONL (``~/.claude/projects/<project>/<session>.jsonl``) into a history.

Mapping rules (see /work/shared/data/transcripts/NOTES.md for the format facts):

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
- ``compact_boundary`` records with the ``isCompactSummary`` record after each (Claude Code's own
  LLM summary) → ``metadata["compactions"]``, never the view: the view is the whole session.
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

import bisect
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextwarden.errors import ContextWardenError, FormatError
from contextwarden.formats.anthropic import message_from_wire
from contextwarden.formats.base import (
    LoadReport,
    add_or_report,
    first_lines,
    head_values,
    iter_jsonl,
    parse_timestamp,
    read_text,
)
from contextwarden.history import ConversationHistory
from contextwarden.model import (
    Block,
    FrozenDict,
    Message,
    MessageMeta,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from contextwarden.repair import merge_messages
from contextwarden.tokens.base import TokenCounter

NAME = "claude-code"
RECORD_TYPES = frozenset(
    "user assistant system summary file-history-snapshot progress queue-operation".split()
)
INJECTED_PREFIXES = (
    *"<system-reminder> <local-command-stdout> <local-command-stderr> <local-command-caveat>"
    " <bash-stdout> <bash-stderr>".split(),
    "[Request interrupted by user",
)
"""Text starting with one of these was written into a user record by Claude Code, not typed.

Slash-command records (``<command-name>/compact</command-name>…<command-args>…``) are not here:
they hold what the person typed, arguments included; the prompt Claude Code expands a command
into is a separate ``isMeta`` record, and that one is marked.
"""
"""How many parseable lines of the head ``sniff`` looks at."""
_TYPE_NAMES = tuple(RECORD_TYPES)  # compared with ==, so a list-valued "type" cannot crash sniff
_LINK_KEYS = ("sessionId", "parentUuid", "leafUuid", "messageId")
_Node = tuple[int, str | None, str | None]
"""(line, parentUuid, logicalParentUuid) of any record with a uuid."""


def sniff(path: Path, head: str) -> bool:
    """True when one of the first parseable lines is a Claude Code record."""
    if head.lstrip().startswith('{"parentUuid":'):
        return True  # how Claude Code starts a record, even one longer than the head
    return any(
        v.get("type") in _TYPE_NAMES and any(k in v for k in _LINK_KEYS) for v in head_values(head)
    )


def is_injected_text(text: str) -> bool:
    """True when a user text block was injected by Claude Code (see ``INJECTED_PREFIXES``)."""
    return text.lstrip().startswith(INJECTED_PREFIXES)


@dataclass(frozen=True, slots=True)
class _Rec:
    """A usable, non-sidechain user or assistant record."""

    line: int
    uuid: str
    message: Message
    raw: Mapping[str, Any]

    @property
    def msg_id(self) -> str | None:
        return self.message.meta.id if self.message.role == "assistant" else None


@dataclass
class _Scan:
    """Everything read from the file, before the main thread is chosen."""

    report: LoadReport
    nodes: dict[str, _Node] = field(default_factory=dict)
    records: list[_Rec] = field(default_factory=list)
    conversation: list[tuple[int, str]] = field(default_factory=list)
    """(line, uuid) of every conversation record, compact summaries included."""
    boundaries: list[dict[str, Any]] = field(default_factory=list)
    summaries: list[_Rec] = field(default_factory=list)
    """The ``isCompactSummary`` records."""
    types: Counter[str] = field(default_factory=Counter)
    calls: dict[str, int] = field(default_factory=dict)
    """tool_use id → line of the record that holds it."""
    sidechain: int = 0

    def add(self, line: int, value: Any) -> None:
        if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
            self.report.skip("not a Claude Code record (no 'type'); line skipped", line=line)
            return
        kind = value["type"]
        self.types[kind] += 1
        if value.get("isSidechain") is True:
            self.sidechain += 1
            return
        if not self._link(line, value):
            return
        if kind in ("user", "assistant"):
            self._conversation(line, value)
        elif kind == "system":
            self._system(line, value)
        elif kind == "summary":
            item = {"line": line, "text": value.get("summary"), "leaf_uuid": value.get("leafUuid")}
            self.report.metadata.setdefault("summaries", []).append(item)
        elif kind == "queue-operation" and value.get("operation") == "enqueue":
            item = {"line": line, "timestamp": value.get("timestamp"), "text": value.get("content")}
            self.report.metadata.setdefault("queued_inputs", []).append(item)

    def _link(self, line: int, value: Mapping[str, Any]) -> bool:
        uuid, parent = value.get("uuid"), value.get("parentUuid")
        logical = value.get("logicalParentUuid")
        conversation = value["type"] in ("user", "assistant")
        if uuid is None and not conversation:
            return True  # snapshots, summaries, queue operations: not part of the tree
        if not isinstance(uuid, str) or not all(
            isinstance(v, str | None) for v in (parent, logical)
        ):
            self.report.skip(
                "uuid/parentUuid/logicalParentUuid are not strings; record skipped", line=line
            )
            return False
        if conversation and uuid in self.nodes:
            self.report.skip(
                f"uuid {uuid} repeats line {self.nodes[uuid][0]}; record skipped", line=line
            )
            return False
        self.nodes[uuid] = (line, parent, logical)
        return True

    def _conversation(self, line: int, value: Mapping[str, Any]) -> None:
        kind, raw = value["type"], value.get("message")
        try:
            if not isinstance(raw, Mapping) or raw.get("role") != kind:
                raise FormatError(f"'message' must be an object with role {kind!r}")
            message = message_from_wire(raw)
        except ContextWardenError as exc:
            self.report.skip(f"{exc}; record skipped", line=line)
            return
        problem = _misplaced(message) or self._repeated_call(line, message)
        if problem:
            self.report.skip(f"{problem}; record skipped", line=line)
            return
        rec = _Rec(line, value["uuid"], message, value)
        self.conversation.append((line, rec.uuid))
        (self.summaries if value.get("isCompactSummary") is True else self.records).append(rec)

    def _repeated_call(self, line: int, message: Message) -> str | None:
        """The API wants tool_use ids unique; a repeated one means a corrupt or copied record."""
        for use in message.tool_uses:
            if use.id in self.calls:
                return f"tool_use id {use.id!r} repeats line {self.calls[use.id]}"
        self.calls.update((u.id, line) for u in message.tool_uses)
        return None

    def _system(self, line: int, value: Mapping[str, Any]) -> None:
        subtype, uuid = value.get("subtype"), value.get("uuid")
        meta = value.get("compactMetadata") or value.get("microcompactMetadata")
        meta = meta if isinstance(meta, Mapping) else {}
        entry = {"line": line, "uuid": uuid, "timestamp": value.get("timestamp")}
        entry.update(trigger=meta.get("trigger"), pre_tokens=meta.get("preTokens"))
        if subtype == "compact_boundary":
            entry.update(
                kind="compact_boundary", logical_parent_uuid=value.get("logicalParentUuid")
            )
            self.boundaries.append(entry)
        elif subtype == "microcompact_boundary":
            tools = meta.get("compactedToolIds")
            entry.update(
                tokens_saved=meta.get("tokensSaved"),
                compacted_tool_ids=list(tools) if isinstance(tools, list) else [],
            )
            self.report.metadata.setdefault("microcompactions", []).append(entry)


def _misplaced(message: Message) -> str | None:
    """Why the record's blocks cannot sit in its role, if they cannot."""
    assistant_only = ToolUseBlock | ThinkingBlock | RedactedThinkingBlock
    for block in message.content:
        if message.role == "user" and isinstance(block, assistant_only):
            return f"a user record holds a {block.type} block"
        if message.role == "assistant" and isinstance(block, ToolResultBlock):
            return "an assistant record holds a tool_result block"
    return None


# ----------------------------------------------------------------------------- the main thread
def _main_chain(scan: _Scan) -> set[str]:
    """Uuids on the parentUuid chain from the last conversation record, bridging gaps."""
    chain: set[str] = set()
    current = scan.conversation[-1][1] if scan.conversation else None
    while current is not None:
        chain.add(current)
        line, parent, logical = scan.nodes[current]
        nxt = parent if parent is not None else logical
        if nxt is not None and nxt in scan.nodes and nxt not in chain:
            current = nxt
        else:
            current = _bridge(scan, line, nxt, chain)
    return chain


def _bridge(scan: _Scan, line: int, missing: str | None, chain: set[str]) -> str | None:
    """The previous conversation record in the file, when the chain stops before the file does."""
    i = bisect.bisect_left(scan.conversation, (line, "")) - 1
    while i >= 0 and scan.conversation[i][1] in chain:
        i -= 1
    if i < 0:
        return None
    reason = "parent is not in the file" if missing is not None else "record has no parent"
    at, uuid = scan.conversation[i]
    breaks = scan.report.metadata.setdefault("chain_breaks", [])
    breaks.append(dict(line=line, missing_parent=missing, reason=reason, continued_at_line=at))
    return uuid


def _main_thread(scan: _Scan) -> tuple[list[_Rec], list[_Rec]]:
    """(records in the view, other non-sidechain records), both in file order."""
    chain = _main_chain(scan)
    replies = {r.msg_id for r in scan.records if r.uuid in chain and r.msg_id}
    main = {r.uuid for r in scan.records if r.uuid in chain or r.msg_id in replies}
    inside = [r for r in scan.records if r.uuid in main]
    calls = {u.id for r in inside for u in r.message.tool_uses}
    answered = {res.tool_use_id for r in inside for res in r.message.tool_results}
    for rec in scan.records:  # results of parallel calls: side branches of the chain
        ids = [res.tool_use_id for res in rec.message.tool_results]
        if rec.uuid not in main and ids and all(i in calls and i not in answered for i in ids):
            main.add(rec.uuid)
            answered.update(ids)
    others = [r for r in scan.records if r.uuid not in main]
    return [r for r in scan.records if r.uuid in main], others


def _turns(records: Sequence[_Rec]) -> list[list[_Rec]]:
    """Records grouped into alternating turns; one API reply's records form one assistant turn."""
    turns: list[list[_Rec]] = []
    for rec in records:
        reply = _open_reply(turns, rec.msg_id) if rec.msg_id else None
        if reply is not None:
            reply.append(rec)
        elif turns and turns[-1][0].message.role == rec.message.role:
            turns[-1].append(rec)
        else:
            turns.append([rec])
    return turns


def _open_reply(turns: list[list[_Rec]], msg_id: str) -> list[_Rec] | None:
    """The assistant turn of reply ``msg_id`` when only its tool results were recorded since."""
    if turns and any(r.msg_id == msg_id for r in turns[-1]):
        return turns[-1]
    if len(turns) > 1 and any(r.msg_id == msg_id for r in turns[-2]):
        return turns[-2] if all(r.message.tool_results for r in turns[-1]) else None
    return None


# ----------------------------------------------------------------------------- messages
def _message(turn: Sequence[_Rec]) -> Message:
    merged = turn[0].message
    for rec in turn[1:]:
        merged = merge_messages(merged, rec.message)
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


def _assistant_extra(turn: Sequence[_Rec]) -> dict[str, Any]:
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


def _user_extra(turn: Sequence[_Rec]) -> dict[str, Any]:
    injected: list[str] = []
    typed = False
    for rec in turn:
        meta = rec.raw.get("isMeta") is True
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
    return extra


def _blank(block: Block) -> bool:
    return isinstance(block, TextBlock) and not block.text.strip()


# ----------------------------------------------------------------------------- metadata


def _compactions(scan: _Scan, messages: Sequence[Message]) -> list[dict[str, Any]]:
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
    firsts = first_lines(messages)
    for entry in entries:
        entry.setdefault("summary", None)
        entry["messages_before"] = bisect.bisect_left(firsts, entry["line"])
    return sorted(entries, key=lambda e: int(e["line"]))


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


def _off_thread(report: LoadReport, others: Sequence[_Rec]) -> None:
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


def _session_facts(scan: _Scan) -> dict[str, Any]:
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
    if index != 0:
        raise FormatError(
            "a Claude Code session file holds one conversation; use index=0", path=str(path)
        )
    scan = _Scan(report)
    for item in iter_jsonl(read_text(path, report), report):
        scan.add(item.line, item.value)
    main, others = _main_thread(scan)
    # Blank records (a streamed "\n\n") carry nothing; alone they would split a turn in two.
    blank = [r for r in main if all(_blank(b) for b in r.message.content)]
    report.metadata["blank_records"] = [r.line for r in blank]
    history = ConversationHistory(mode="merge", counter=counter)
    for turn in _turns([r for r in main if r not in blank]):
        add_or_report(history, _message(turn), report)
    _off_thread(report, others)
    report.metadata.update(_session_facts(scan))
    report.metadata["compactions"] = _compactions(scan, history.messages)
    queued = report.metadata.get("queued_inputs", [])
    report.metadata["queued_inputs"] = _not_in_view(queued, history.messages)
    return history
