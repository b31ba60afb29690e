"""Copilot CLI session events (``~/.copilot/session-state/<id>/events.jsonl``): a history.

Mapping rules (from real session files and the CLI's event schema):

- Each line is ``{"type", "data", "id", "timestamp", "parentId"}`` (sometimes ``ephemeral``).
- ``session.start`` → ``metadata["session"]`` (session id, versions, cwd, selected model);
  ``system.message`` → the system prompt; ``session.model_change`` → the model of the replies
  after it (``meta.extra["model"]``).
- ``user.message`` → user text: ``content``, what the person typed; ``transformedContent`` (the
  text with the date and reminders Copilot wrapped it in, what the model saw) is kept in
  ``meta.extra["transformed_content"]`` and ``attachments`` in ``meta.extra["attachments"]``.
- ``assistant.message`` → assistant text (``content``) and one ``tool_use`` per ``toolRequests``
  entry; ``reasoningText`` / ``reasoningOpaque`` / ``encryptedContent`` (no valid Anthropic
  block) go to ``meta.extra["reasoning"]``, ``outputTokens`` to ``meta.extra["usage"]``.
- ``tool.execution_start`` of a call no reply requested (older CLIs) → a ``tool_use``;
  ``tool.execution_complete`` → its ``tool_result`` (``result.content``, or the error message;
  ``is_error`` when ``success`` is false). A shell command's result ends in the CLI's
  ``<shellId: N completed with exit code K>`` line and is ``success`` whatever ``K``: a
  non-zero ``K`` says the command failed, so that result is ``is_error`` too.
- Events carrying ``parentToolCallId`` belong to a subagent's own conversation: counted in
  ``metadata["subagent_events"]``, not loaded (the parent sees the subagent's tool result). So
  does a ``user.message`` whose ``source`` is ``agent-<session id>``: the prompt a background
  ``task`` call hands its subagent (the call's ``prompt`` argument, word for word), written
  before the subagent's events, which carry the call's id.
- Everything else (``assistant.turn_start/end``, ``hook.*``, ``session.*`` notices, permission and
  usage events, and types this loader does not know) is not conversation: counted by type in
  ``metadata["event_types"]``; ``hook.end`` output is listed in ``metadata["hooks"]``.
- Lines that are not events are reported by number and skipped.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.formats.base import (
    add_or_report,
    head_values,
    parse_timestamp,
    read_jsonl,
    require_single,
)
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import (
    Block,
    FrozenDict,
    Message,
    MessageMeta,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.common import as_mapping, parse_arguments

NAME = "copilot"
EXPECTED = "Copilot CLI events JSONL: {type, data, id, timestamp, parentId} events"
CONVERSATION_EVENTS = frozenset(
    {"session.start", "user.message", "assistant.message", "tool.execution_complete"}
)
"""Event types only Copilot CLI writes; a file whose head holds one of them is Copilot's."""
_EVENT_TYPE = re.compile(r"^[a-z_]+(\.[a-z_]+)*$")
_REASONING_KEYS = ("reasoningText", "reasoningOpaque", "encryptedContent")
_SYSTEM_SOURCE = "system"
"""A ``user.message`` ``source`` the CLI gives what it injects itself."""
_SUBAGENT_SOURCE = "agent-"
"""How the ``source`` of a ``user.message`` handed to a background subagent begins."""
_SHELL_EXIT = re.compile(r"<shellId: \d+ completed with exit code (\d+)>\s*\Z")
"""The line a shell tool's result ends in (``bash``, ``powershell``): the command's exit code."""


def sniff(path: Path, head: str) -> bool:
    """True when most head records are dotted-type events with a ``data`` object."""
    records = list(head_values(head, 50))
    events = [r for r in records if _is_event(r)]
    known = any(e["type"] in CONVERSATION_EVENTS for e in events)
    return known and 2 * len(events) > len(records)


def _is_event(value: Any) -> bool:
    kind = value.get("type") if isinstance(value, Mapping) else None
    return isinstance(kind, str) and bool(_EVENT_TYPE.match(kind)) and "data" in value


class _Reader:
    """Events into messages, in file order."""

    def __init__(self, report: LoadReport) -> None:
        self.report = report
        self.system: str | None = None
        self.messages: list[Message] = []
        self.model: str | None = None
        self.requested: set[str] = set()  # tool call ids some reply already carries
        self.types: Counter[str] = Counter()

    def add(self, line: int, event: Mapping[str, Any]) -> None:
        kind, data = event["type"], as_mapping(event.get("data"))
        self.types[kind] += 1
        if "parentToolCallId" in data or _subagent_prompt(kind, data):
            meta = self.report.metadata
            meta["subagent_events"] = meta.get("subagent_events", 0) + 1
            return
        if kind == "session.start":
            self.report.metadata["session"] = dict(data)
            self.model = _str(data.get("selectedModel")) or self.model
        elif kind == "session.model_change":
            self.model = _str(data.get("newModel")) or self.model
        elif kind == "system.message" and isinstance(data.get("content"), str):
            self.system = data["content"]
        elif kind == "hook.end" and data.get("output") is not None:
            item = {"line": line, "hook": data.get("hookType"), "output": data.get("output")}
            self.report.metadata.setdefault("hooks", []).append(item)
        else:
            self._conversation(line, kind, data, event)

    def _conversation(
        self, line: int, kind: str, data: Mapping[str, Any], event: Mapping[str, Any]
    ) -> None:
        if kind == "user.message":
            message = self._user(data)
        elif kind == "assistant.message":
            message = self._assistant(data)
        elif kind == "tool.execution_start" and _str(data.get("toolCallId")) not in self.requested:
            message = Message("assistant", (self._call(data, "toolName"),))
        elif kind == "tool.execution_complete":
            message = Message("user", (_result(data),))
        else:
            return
        self._emit(line, message, event)

    def _user(self, data: Mapping[str, Any]) -> Message:
        content = data.get("content")
        if not isinstance(content, str):
            raise FormatError(f"user.message content must be a string, got {content!r:.60}")
        extra = {"transformed_content": data.get("transformedContent")}
        extra["attachments"] = data.get("attachments") or None
        extra["injected"] = data.get("source") == _SYSTEM_SOURCE or None
        return Message("user", (TextBlock(content),), MessageMeta(extra=_frozen(extra)))

    def _assistant(self, data: Mapping[str, Any]) -> Message:
        text = data.get("content")
        blocks: list[Block] = [TextBlock(text)] if isinstance(text, str) and text.strip() else []
        requests = data.get("toolRequests")
        for request in requests if isinstance(requests, list) else []:
            blocks.append(self._call(as_mapping(request), "name"))
        reasoning = {k: data[k] for k in _REASONING_KEYS if data.get(k)}
        extra = {"model": _str(data.get("model")) or self.model, "reasoning": reasoning or None}
        tokens = data.get("outputTokens")
        extra["usage"] = {"output_tokens": tokens} if isinstance(tokens, int) else None
        msg_id = _str(data.get("messageId"))
        return Message("assistant", tuple(blocks), MessageMeta(id=msg_id, extra=_frozen(extra)))

    def _call(self, data: Mapping[str, Any], name_key: str) -> ToolUseBlock:
        call_id, name = _str(data.get("toolCallId")), _str(data.get(name_key))
        if call_id is None or name is None:
            raise FormatError(f"a tool call needs a toolCallId and a {name_key}")
        args = data.get("arguments")
        tool_input = parse_arguments(args) if isinstance(args, str) else dict(as_mapping(args))
        self.requested.add(call_id)
        return ToolUseBlock(call_id, name, FrozenDict(tool_input))

    def _emit(self, line: int, message: Message, event: Mapping[str, Any]) -> None:
        event_id = _str(event.get("id")) or f"line:{line}"
        extra = {**message.meta.extra, "lines": (line,)}
        meta = MessageMeta(
            parse_timestamp(event.get("timestamp")),
            message.meta.id or event_id,
            (event_id,),
            FrozenDict(extra),
        )
        self.messages.append(Message(message.role, message.content, meta))


def _subagent_prompt(kind: str, data: Mapping[str, Any]) -> bool:
    source = data.get("source")
    return (
        kind == "user.message" and isinstance(source, str) and source.startswith(_SUBAGENT_SOURCE)
    )


def _result(data: Mapping[str, Any]) -> ToolResultBlock:
    call_id = _str(data.get("toolCallId"))
    if call_id is None:
        raise FormatError("tool.execution_complete has no toolCallId")
    result, error = as_mapping(data.get("result")), data.get("error")
    content = result.get("content")
    if not isinstance(content, str):
        shown = error.get("message") if isinstance(error, Mapping) else error
        content = shown if isinstance(shown, str) else json.dumps(data, ensure_ascii=False)
    return ToolResultBlock(
        call_id, content, data.get("success") is False or _exited_nonzero(content)
    )


def _exited_nonzero(content: str) -> bool:
    found = _SHELL_EXIT.search(content)
    return found is not None and int(found.group(1)) != 0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _frozen(extra: dict[str, Any]) -> FrozenDict:
    return FrozenDict({k: v for k, v in extra.items() if v is not None})


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read one Copilot CLI session (merge mode); see the module docstring for the rules."""
    require_single(index, "a Copilot session file", path)
    reader = _Reader(report)
    for item in read_jsonl(path, report):
        if not _is_event(item.value):
            report.reject(
                "not a Copilot CLI event (type and data); line skipped", item.value, line=item.line
            )
            continue
        try:
            reader.add(item.line, item.value)
        except FormatError as exc:
            report.skip(f"{exc}; event skipped", line=item.line)
    report.metadata["event_types"] = dict(reader.types)
    history = ConversationHistory(system=reader.system, mode="merge", counter=counter)
    for message in reader.messages:
        add_or_report(history, message, report)
    return history
