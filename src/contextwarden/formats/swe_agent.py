"""SWE-agent ``.traj`` and mini-swe-agent ``.traj.json`` trajectories as conversations.

Both hold the chat messages the model saw (``history`` / ``messages``), which are OpenAI-shaped;
the run's outcome (``info``: exit status, submission, model stats) goes to ``report.metadata``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.formats.base import LoadReport, parse_json, read_text
from contextwarden.formats.openai import build_history, messages_from_openai
from contextwarden.history import ConversationHistory
from contextwarden.model import FrozenDict, Message, MessageMeta
from contextwarden.tokens.base import TokenCounter

NAME = "swe-agent"

_INFO_KEYS = ("exit_status", "submission", "model_stats", "mini_version", "exception_str")
_ENTRY_META = ("agent", "message_type", "is_demo", "action")
"""SWE-agent history fields worth keeping with a message (``thought`` is kept only when it is not
already the message text)."""
_HEAD = re.compile(
    r'^\s*\{\s*"(environment|trajectory|history|info|messages)"\s*:'
    r'|"trajectory_format"\s*:\s*"mini-swe-agent|"agent_type"\s*:\s*"minisweagent'
)


def sniff(path: Path, head: str) -> bool:
    if not head.lstrip().startswith("{"):
        return False
    if path.name.endswith((".traj", ".traj.json")):
        return True
    if not _HEAD.search(head):
        return False
    # A classic trajectory has both; a mini-swe-agent one names itself in `info` or at the end.
    classic = '"trajectory"' in head and '"history"' in head
    mini = "trajectory_format" in head or "mini_version" in head or "minisweagent" in head
    return classic or mini


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    document = parse_json(read_text(path, report), str(path))
    if not isinstance(document, Mapping):
        raise FormatError(
            f"expected a trajectory object, got a {type(document).__name__}", path=str(path)
        )
    if not isinstance(document.get("history", document.get("messages")), list):
        raise FormatError(
            "no 'history' (SWE-agent) or 'messages' (mini-swe-agent) list", path=str(path)
        )
    return from_document(document, report, counter=counter)


def from_document(
    document: Mapping[str, Any], report: LoadReport, *, counter: TokenCounter | None = None
) -> ConversationHistory:
    """The conversation of a parsed trajectory (``history`` or mini-swe-agent ``messages``)."""
    _keep_info(document, report)
    classic = isinstance(document.get("history"), list)
    raw: list[Any] = document["history"] if classic else document.get("messages") or []
    report.metadata["variant"] = (
        "swe-agent" if classic else str(document.get("trajectory_format", "mini-swe-agent"))
    )
    report.records += len(raw)
    chat: list[Any] = []
    positions: list[int] = []  # index in the file of each message passed on
    for i, entry in enumerate(raw):
        if isinstance(entry, Mapping) and entry.get("role") == "exit":
            # mini-swe-agent's last record: how the run ended; never sent to the model.
            report.metadata["exit"] = dict(entry.get("extra") or {"content": entry.get("content")})
            continue
        chat.append(_normalised(entry) if classic else entry)
        positions.append(i)
    first_issue = len(report.issues)
    system, messages = messages_from_openai(chat, report)
    messages = [_with_file_meta(m, raw, positions, classic) for m in messages]
    _renumber(report, first_issue, positions)
    return build_history(system, messages, report, counter=counter)


def _keep_info(document: Mapping[str, Any], report: LoadReport) -> None:
    info = document.get("info")
    if isinstance(info, Mapping):
        report.metadata.update({k: info[k] for k in _INFO_KEYS if k in info})
    for key in ("instance_id", "environment", "trajectory_format"):
        if isinstance(document.get(key), str):
            report.metadata[key] = document[key]
    if isinstance(document.get("trajectory"), list):
        report.metadata["trajectory_steps"] = len(document["trajectory"])


def _normalised(entry: Any) -> Any:
    """SWE-agent writes ``tool_call_ids`` (a list) on tool messages; OpenAI has ``tool_call_id``."""
    if not isinstance(entry, Mapping) or entry.get("role") != "tool" or "tool_call_id" in entry:
        return entry
    ids = entry.get("tool_call_ids")
    if isinstance(ids, list) and ids and isinstance(ids[0], str):
        # SWE-agent runs one tool call per turn; extra ids get placeholder results in merge mode.
        return {**entry, "tool_call_id": ids[0]}
    return entry


def _with_file_meta(
    message: Message, raw: list[Any], positions: list[int], classic: bool
) -> Message:
    """Source ids that point into the file, and SWE-agent's own fields for the message."""
    ids = tuple(str(positions[int(i)]) for i in message.meta.source_ids if i.isdigit())
    extra = dict(message.meta.extra)
    if classic and ids:
        entry = raw[int(ids[0])]
        extra.update({k: entry[k] for k in _ENTRY_META if k in entry})
        thought = entry.get("thought")
        if isinstance(thought, str) and thought.strip() != message.text.strip():
            extra["thought"] = thought
    meta = MessageMeta(message.meta.timestamp, message.meta.id, ids, FrozenDict(extra))
    return Message(message.role, message.content, meta)


def _renumber(report: LoadReport, first: int, positions: list[int]) -> None:
    """Issues found in the chat list name the message's index in the file."""
    from dataclasses import replace

    for n in range(first, len(report.issues)):
        issue = report.issues[n]
        if issue.index is not None and issue.index < len(positions):
            report.issues[n] = replace(issue, index=positions[issue.index])
