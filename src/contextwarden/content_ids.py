"""Content ids: the name a cut, cleared or masked text is recovered by, and the search of a log
for the text that has one (``ConversationHistory.rehydrate``, the rungs' markers, spill files).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from contextwarden.log import CompactionBoundary, LogEntry, MessageAdded
from contextwarden.model import Message, TextBlock, ToolResultBlock

CONTENT_ID_PREFIX = "sha256-"
CONTENT_ID_HEX = 32
"""Hex digits of the sha256 kept in a content id: 128 bits, unique within any history."""


def content_id(text: str) -> str:
    """The id a cut or cleared text is recovered by: ``sha256-`` and the first 32 hex digits of
    its UTF-8 (lone surrogates kept), so it is the same wherever the text is (log, spill file)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return CONTENT_ID_PREFIX + digest[:CONTENT_ID_HEX]


def by_content_id(entries: Sequence[LogEntry], wanted: str) -> ToolResultBlock | TextBlock | None:
    """The first text or tool result recorded in ``entries`` whose text has the id ``wanted``:
    added messages, then the views compactions installed (a summary is first recorded there)."""
    seen: set[int] = set()
    for entry in entries:
        if isinstance(entry, MessageAdded):
            messages: Sequence[Message] = (entry.message,)
        elif isinstance(entry, CompactionBoundary):
            messages = entry.view
        else:
            continue
        for message in messages:
            if id(message) in seen:
                continue  # views share their unchanged messages: hash each one once
            seen.add(id(message))
            for block in message.content:
                if (
                    isinstance(block, TextBlock | ToolResultBlock)
                    and content_id(block.text) == wanted
                ):
                    return block
    return None
