"""Claude Code session records read into a tree: the usable conversation records, their links,
and the side facts (boundaries, summaries, queued input) the loader keeps in the report.

Which records form the main thread is decided afterwards, by ``claude_code_thread``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from contextwarden.errors import ContextWardenError, FormatError
from contextwarden.formats.base import repeated_tool_use
from contextwarden.loadreport import LoadReport
from contextwarden.model import (
    Message,
    RedactedThinkingBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from contextwarden.wire.anthropic import message_from_wire
from contextwarden.wire.common import as_mapping

SIDE_RECORDS = frozenset(
    {"file-history-snapshot", "file-history-delta", "progress", "queue-operation"}
)
"""Record types that never carry conversation (file snapshots and the backups of one file
between them, hook and subagent progress)."""
SESSION_FACTS = frozenset(
    {
        "permission-mode",
        "ai-title",
        "agent-name",
        "custom-title",
        "mode",
        "last-prompt",
        "bridge-session",
    }
)
"""Record types holding a session setting or title: the latest of each is kept in
``metadata["session_facts"]``."""
MARKER_KEYS = ("sessionId", "parentUuid", "leafUuid", "messageId")
"""Keys only Claude Code records carry: a record of an unknown type with one of them is
Claude Code's (skipped with a note); without, it is not a Claude Code record at all."""
_SEGMENT_KEYS = {"head_uuid": "headUuid", "anchor_uuid": "anchorUuid", "tail_uuid": "tailUuid"}
"""``compactMetadata.preservedSegment``: the records a partial compaction kept after its summary."""
_ENVELOPE = frozenset({"type", "sessionId", "uuid", "parentUuid", "timestamp"})

Node = tuple[int, str | None, str | None]
"""(line, parentUuid, logicalParentUuid) of any record with a uuid."""


@dataclass(frozen=True, slots=True)
class Record:
    """A usable, non-sidechain user or assistant record."""

    line: int
    uuid: str
    message: Message
    raw: Mapping[str, Any]

    @property
    def msg_id(self) -> str | None:
        return self.message.meta.id if self.message.role == "assistant" else None


@dataclass
class Scan:
    """Everything read from the file, before the main thread is chosen."""

    report: LoadReport
    nodes: dict[str, Node] = field(default_factory=dict)
    records: list[Record] = field(default_factory=list)
    conversation: list[tuple[int, str]] = field(default_factory=list)
    """(line, uuid) of every conversation record, compact summaries included."""
    boundaries: list[dict[str, Any]] = field(default_factory=list)
    summaries: list[Record] = field(default_factory=list)
    """The ``isCompactSummary`` records."""
    types: Counter[str] = field(default_factory=Counter)
    calls: dict[str, int] = field(default_factory=dict)
    """tool_use id → line of the record that holds it."""
    sidechain: int = 0

    def add(self, line: int, value: Any) -> None:
        if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
            self.report.reject(
                "not a Claude Code record (no 'type'); line skipped", value, line=line
            )
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
        else:
            self._side(line, kind, value)

    def _side(self, line: int, kind: str, value: Mapping[str, Any]) -> None:
        """Records beside the conversation: kept in the metadata, or skipped with a note."""
        metadata = self.report.metadata
        if kind == "summary":
            item = {"line": line, "text": value.get("summary"), "leaf_uuid": value.get("leafUuid")}
            metadata.setdefault("summaries", []).append(item)
        elif kind == "queue-operation" and value.get("operation") == "enqueue":
            item = {"line": line, "timestamp": value.get("timestamp"), "text": value.get("content")}
            metadata.setdefault("queued_inputs", []).append(item)
        elif kind in SESSION_FACTS:
            facts = {k: v for k, v in value.items() if k not in _ENVELOPE}
            metadata.setdefault("session_facts", {})[kind] = facts
        elif kind == "attachment":
            # Context Claude Code attached for the model (hook output, file, todo reminders);
            # it reaches the model inside later records, so it is listed, not added again.
            item = {"line": line, "uuid": value.get("uuid")}
            item["kind"] = as_mapping(value.get("attachment")).get("type")
            metadata.setdefault("attachments", []).append(item)
        elif kind == "pr-link":
            # The pull request the session opened or worked on, as Claude Code links it.
            item = {"line": line, "timestamp": value.get("timestamp")}
            item.update(number=value.get("prNumber"), url=value.get("prUrl"))
            item["repository"] = value.get("prRepository")
            metadata.setdefault("pull_requests", []).append(item)
        elif kind not in SIDE_RECORDS and any(k in value for k in MARKER_KEYS):
            why = f"record type {kind!r} is new to this loader; it is not conversation"
            item = {"line": line, "record": value}
            self.report.set_aside("unknown_records", item, why, line=line)
        elif kind not in SIDE_RECORDS:
            self.report.reject(
                f"not a Claude Code record (type {kind!r}); line skipped", value, line=line
            )

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
        problem = _misplaced(message) or repeated_tool_use(self.calls, message, line)
        if problem:
            self.report.skip(f"{problem}; record skipped", line=line)
            return
        rec = Record(line, value["uuid"], message, value)
        self.conversation.append((line, rec.uuid))
        (self.summaries if value.get("isCompactSummary") is True else self.records).append(rec)

    def _system(self, line: int, value: Mapping[str, Any]) -> None:
        subtype, uuid = value.get("subtype"), value.get("uuid")
        meta = as_mapping(value.get("compactMetadata") or value.get("microcompactMetadata"))
        entry = {"line": line, "uuid": uuid, "timestamp": value.get("timestamp")}
        entry.update(trigger=meta.get("trigger"), pre_tokens=meta.get("preTokens"))
        if subtype == "compact_boundary":
            entry.update(
                kind="compact_boundary", logical_parent_uuid=value.get("logicalParentUuid")
            )
            segment = as_mapping(meta.get("preservedSegment") or meta.get("preserved_segment"))
            if segment:
                entry["preserved_segment"] = {
                    key: segment.get(camel, segment.get(key))
                    for key, camel in _SEGMENT_KEYS.items()
                }
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
