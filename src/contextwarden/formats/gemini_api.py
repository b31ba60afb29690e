"""Gemini API JSON files: a saved ``generateContent`` request body (``contents``,
``systemInstruction``, ``tools``) or a bare list of contents, read with ``wire.gemini``.
A content that cannot be read is reported by index and skipped; the rest are kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from contextwarden.errors import ContextWardenError, FormatError
from contextwarden.formats.base import holds_json_lines, parse_json, read_text
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.gemini import CallIds, content_message, system_blocks

NAME = "gemini"
EXPECTED = "a Gemini generateContent request body or list of contents (JSON)"
KEPT = ("generationConfig", "toolConfig", "safetySettings", "cachedContent")
"""Request fields that are not conversation, kept in the metadata."""
_PARTS = re.compile(r'"parts"\s*:\s*\[')
_GEMINI_ONLY = re.compile(r'"(contents|systemInstruction|functionCall|functionResponse)"|"model"')


def sniff(path: Path, head: str) -> bool:
    if head.lstrip()[:1] not in "[{" or holds_json_lines(head):  # a body is one JSON document
        return False
    return bool(_PARTS.search(head) and _GEMINI_ONLY.search(head))


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    data = parse_json(read_text(path, report), str(path))
    body = data if isinstance(data, Mapping) else {"contents": data}
    contents = body.get("contents")
    if not isinstance(contents, list):
        raise FormatError(
            "expected a list of contents or an object with 'contents'", path=str(path)
        )
    report.metadata.update({key: body[key] for key in KEPT if key in body})
    tools = body.get("tools")
    history = ConversationHistory(
        system=system_blocks(body.get("systemInstruction")),
        tools=tools if isinstance(tools, list) else None,
        mode="merge",
        counter=counter,
    )
    ids = CallIds()
    for i, raw in enumerate(contents):
        report.records += 1
        try:
            history.add(content_message(raw, ids, index=i))
        except ContextWardenError as exc:
            report.skip(f"{exc}; content skipped", index=i)
    return history
