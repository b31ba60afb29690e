"""Anthropic Messages JSON files: a request body (``system``, ``tools``, ``messages``) or a list.
A message that cannot be read is reported by index and skipped; the rest are kept.
"""

from __future__ import annotations

import re
from pathlib import Path

from contextwarden.errors import ContextWardenError
from contextwarden.formats.base import holds_json_lines, parse_json, read_text, request_messages
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.anthropic import message_from_wire

NAME = "anthropic"
EXPECTED = "an Anthropic Messages request body or list of messages (JSON)"
_BLOCK_TYPES = re.compile(r'"type"\s*:\s*"(tool_use|tool_result|text|thinking)"')


def sniff(path: Path, head: str) -> bool:
    start = head.lstrip()[:1]
    if start not in "[{" or holds_json_lines(head):  # a request body is one JSON document
        return False
    return '"role"' in head and bool(_BLOCK_TYPES.search(head))


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    data = parse_json(read_text(path, report), str(path))
    body, messages = request_messages(data, str(path), report, ("model", "max_tokens", "metadata"))
    system = body.get("system")
    tools = body.get("tools")
    history = ConversationHistory(
        system=system if isinstance(system, str | list) else None,
        tools=tools if isinstance(tools, list) else None,
        mode="merge",
        counter=counter,
    )
    for i, raw in enumerate(messages):
        report.records += 1
        try:
            history.add(message_from_wire(raw, index=i))
        except ContextWardenError as exc:
            report.skip(f"{exc}; message skipped", index=i)
    return history
