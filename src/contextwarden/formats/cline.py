"""Cline and Roo Code task history (``tasks/<id>/api_conversation_history.json``) into a history.

Mapping rules (from real task folders of Cline 3.x and its forks):

- The file is a JSON list of Anthropic message params; every one is read with the Anthropic
  converter (block fields we do not model, such as ``reasoning_details`` or ``call_id``, stay in
  the block's ``extra``). Fields beside ``role``/``content``: ``ts`` (epoch milliseconds) → the
  timestamp; ``modelInfo`` (``modelId``, ``providerId``, ``mode``) → ``meta.extra["model"]``,
  ``["provider"]``, ``["mode"]``; ``metrics.tokens`` (``prompt`` without the cached part,
  ``completion``, ``cached``, ``cacheWrites``) → ``meta.extra["usage"]`` in the Anthropic shape,
  ``metrics.cost`` → ``meta.extra["cost"]``.
- Older Cline (and its forks) call tools in XML inside the assistant's text and answer in the
  user's text (``[read_file for 'x'] Result: …``): both stay text, as the model saw them.
- Newer Cline calls tools natively (``tool_use`` blocks) but still writes each answer as a text
  block opening ``[name for '…'] Result:``. Such a block in the next user message becomes the
  ``tool_result`` of the call: the first unanswered call of that name, else the first unanswered
  call (``use_subagents`` is answered as ``[subagents]``). ``Tool [name] was not executed …``
  (Cline runs one tool per reply) answers a call the same way, as an error. A call left
  unanswered (the task was interrupted) is reported; merge mode answers it with a placeholder.
- A message that cannot be read, or has no content, is reported by index.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contextwarden.errors import ContextWardenError
from contextwarden.formats.base import (
    build_history,
    is_blank,
    json_list,
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
from contextwarden.toolnames import TEXT_NOT_RUN_HEADER, TEXT_RESULT_HEADER
from contextwarden.wire.anthropic import message_from_wire
from contextwarden.wire.common import as_mapping

NAME = "cline"
EXPECTED = "a Cline/Roo Code api_conversation_history.json: a list of {role, content, ts?} messages"
FILE_NAME = "api_conversation_history.json"
_CLINE_MARK = re.compile(r'"(modelInfo|metrics)"\s*:|<environment_details>|\] Result:')
MS_PER_SECOND = 1000


def sniff(path: Path, head: str) -> bool:
    """True for the file Cline names so, or a list of role/content messages Cline marked."""
    if path.name == FILE_NAME:
        return True
    start = head.lstrip()[:1]
    return start == "[" and '"role"' in head and bool(_CLINE_MARK.search(head))


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read one task's API history (merge mode); see the module docstring for the rules."""
    require_single(index, "a Cline task history", path)
    document = json_list(path, report, "messages")
    messages: list[Message] = []
    pending: list[ToolUseBlock] = []
    for i, raw in enumerate(document):
        try:
            message = _with_meta(message_from_wire(raw, index=i), raw, i)
        except ContextWardenError as exc:
            report.reject(f"{exc}; message skipped", raw, index=i)
            continue
        if is_blank(message):
            report.skip("message has no content (or only empty text); skipped", index=i)
            continue
        if message.role == "user":
            message = _answer(message, pending, report, i)
        pending = list(message.tool_uses) if message.role == "assistant" else []
        messages.append(message)
    return build_history(None, messages, report, counter=counter)


def _answer(
    message: Message, pending: list[ToolUseBlock], report: LoadReport, index: int
) -> Message:
    """The user message with its ``[name] Result:`` texts turned into results of ``pending``."""
    blocks: list[Block] = []
    results: list[Block] = []
    for block in message.content:
        if not isinstance(block, TextBlock):
            blocks.append(block)
            continue
        header = TEXT_RESULT_HEADER.match(block.text) or TEXT_NOT_RUN_HEADER.match(block.text)
        use = _take(pending, header.group("name")) if header else None
        if use is None:
            blocks.append(block)
        else:
            failed = header is not None and header.re is TEXT_NOT_RUN_HEADER
            results.append(ToolResultBlock(use.id, block.text, failed, block.extra))
    for use in pending:
        report.skip(
            f"tool call {use.id!r} ({use.name}) has no answer text ([name] Result:) in the next "
            "message; it is answered as not run",
            index=index,
        )
    pending.clear()
    return Message("user", (*results, *blocks), message.meta) if results else message


def _take(pending: list[ToolUseBlock], name: str) -> ToolUseBlock | None:
    if not pending:
        return None
    chosen = next((u for u in pending if u.name == name), pending[0])
    pending.remove(chosen)
    return chosen


def _with_meta(message: Message, raw: Mapping[str, Any], index: int) -> Message:
    info, metrics = as_mapping(raw.get("modelInfo")), as_mapping(raw.get("metrics"))
    extra = {
        **message.meta.extra,
        "model": info.get("modelId"),
        "provider": info.get("providerId"),
        "mode": info.get("mode"),
        "usage": _usage(metrics.get("tokens")),
        "cost": metrics.get("cost"),
    }
    ts = raw.get("ts")
    stamp = ts / MS_PER_SECOND if isinstance(ts, int | float) and not isinstance(ts, bool) else None
    meta = MessageMeta(
        stamp,
        message.meta.id,
        (str(index),),
        FrozenDict({k: v for k, v in extra.items() if v is not None}),
    )
    return Message(message.role, message.content, meta)


def _usage(tokens: Any) -> dict[str, int] | None:
    """Cline's per-reply ``metrics.tokens`` in the Anthropic ``usage`` shape."""
    if not isinstance(tokens, Mapping):
        return None

    def count(key: str) -> int:
        value = tokens.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return {
        "input_tokens": count("prompt"),
        "output_tokens": count("completion"),
        "cache_read_input_tokens": count("cached"),
        "cache_creation_input_tokens": count("cacheWrites"),
    }
