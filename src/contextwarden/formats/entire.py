"""Entire's agent-neutral compact transcript JSONL (``transcript.jsonl`` on the Entire CLI's
``entire/checkpoints/v1`` branch) into a history.

Mapping rules (from the files the Entire CLI writes for Claude Code, Codex, Copilot CLI…):

- Each line is ``{"v": 1, "agent", "cli_version", "type": "user"|"assistant", "ts", "content"}``;
  assistant lines may add ``id``, ``input_tokens``, ``output_tokens``.
- User content parts are ``{"text": …}`` (no ``type``): user text. Parts with a ``type`` are
  read as Anthropic blocks (unknown ones are kept as they are).
- Assistant content parts are Anthropic blocks; a ``tool_use`` part may carry its ``result``
  (``{"output", "status"}``) inline: the call becomes a ``tool_use`` and the result a
  ``tool_result`` in the user message after it (``is_error`` unless the status is a success).
  A call without a recorded result is answered by merge mode's marked placeholder.
- Meta: ``timestamp`` (``ts``), ``id``, ``extra``: ``lines``, ``agent``, ``usage`` (token counts).
- Lines of another shape are reported by number and skipped.
"""

from __future__ import annotations

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
from contextwarden.model import Block, FrozenDict, Message, MessageMeta, ToolResultBlock
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.anthropic import block_from_wire

NAME = "entire"
EXPECTED = (
    'Entire compact transcript JSONL: {"v": 1, "agent", "type": "user"|"assistant", "content"}'
)
SUCCESS = frozenset({"success", "completed", "ok"})
"""Inline tool result statuses that are not errors."""
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens")


def sniff(path: Path, head: str) -> bool:
    """True when most head records are versioned compact-transcript lines."""
    records = list(head_values(head))
    return bool(records) and 2 * sum(map(_is_line, records)) > len(records)


def _is_line(value: Mapping[str, Any]) -> bool:
    return "v" in value and "agent" in value and value.get("type") in ("user", "assistant")


def _user_blocks(content: list[Any]) -> tuple[Block, ...]:
    parts = ({"type": "text", **p} if "type" not in p and "text" in p else p for p in content)
    return tuple(block_from_wire(p) if isinstance(p, Mapping) else _invalid(p) for p in parts)


def _invalid(value: Any) -> Block:
    return block_from_wire({"type": "invalid", "value": value})


def _assistant_blocks(content: list[Any]) -> tuple[tuple[Block, ...], tuple[Block, ...]]:
    """(the reply's blocks, the inline results of its tool calls)."""
    blocks: list[Block] = []
    results: list[Block] = []
    for part in content:
        if not isinstance(part, Mapping):
            blocks.append(_invalid(part))
            continue
        result = part.get("result")
        blocks.append(block_from_wire({k: v for k, v in part.items() if k != "result"}))
        if part.get("type") == "tool_use" and isinstance(result, Mapping):
            output = result.get("output")
            text = output if isinstance(output, str) else str(output or "")
            failed = str(result.get("status", "success")).lower() not in SUCCESS
            results.append(ToolResultBlock(str(part.get("id")), text, failed))
    return tuple(blocks), tuple(results)


def _messages(line: int, value: Mapping[str, Any]) -> list[Message]:
    content = value.get("content")
    if not isinstance(content, list):
        raise FormatError(f"'content' must be a list, got {type(content).__name__}")
    extra: dict[str, Any] = {"lines": (line,), "agent": value.get("agent")}
    usage = {k: value[k] for k in _USAGE_KEYS if isinstance(value.get(k), int)}
    if usage:
        extra["usage"] = usage
    msg_id = value.get("id") if isinstance(value.get("id"), str) else None
    meta = MessageMeta(parse_timestamp(value.get("ts")), msg_id, (msg_id or f"line:{line}",))
    if value["type"] == "user":
        return [Message("user", _user_blocks(content), _with(meta, extra))]
    blocks, results = _assistant_blocks(content)
    reply = Message("assistant", blocks, _with(meta, extra))
    if not results:
        return [reply]
    answers = MessageMeta(
        meta.timestamp, None, (f"line:{line}:results",), FrozenDict({"lines": (line,)})
    )
    return [reply, Message("user", results, answers)]


def _with(meta: MessageMeta, extra: dict[str, Any]) -> MessageMeta:
    return MessageMeta(meta.timestamp, meta.id, meta.source_ids, FrozenDict(extra))


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read one compact transcript (merge mode); see the module docstring for the rules."""
    require_single(index, "a compact transcript", path)
    history = ConversationHistory(mode="merge", counter=counter)
    agents: set[str] = set()
    for item in read_jsonl(path, report):
        value = item.value
        if not isinstance(value, Mapping) or not _is_line(value):
            report.reject("not a compact transcript line; line skipped", value, line=item.line)
            continue
        agents.add(str(value["agent"]))
        try:
            messages = _messages(item.line, value)
        except FormatError as exc:
            report.skip(f"{exc}; line skipped", line=item.line)
            continue
        for message in messages:
            add_or_report(history, message, report)
    report.metadata["agents"] = sorted(agents)
    return history
