"""The ``recall`` tool: the model asks for something compaction took out of its context, by the id
a marker or a summary names, and gets the original back from the history's log, a page at a time.

Offer ``RECALL_TOOL`` with the agent's tools and set ``ContextPolicy(recall=True)`` (summaries then
name the id of the span they cover, and a truncation the id of what it dropped); answer each call
with ``recall(history, tool_input)``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from contextwarden.content_ids import content_id
from contextwarden.history import ConversationHistory
from contextwarden.log import CompactionBoundary, LogEntry, MessageAdded, derive_view
from contextwarden.model import Block, Message, TextBlock, ToolResultBlock
from contextwarden.policy import CLEARED_MARKER
from contextwarden.searchable import block_texts
from contextwarden.summarizers.prompt import render_message

RECALL_TOOL_NAME = "recall"
RECALL_TOOL: dict[str, Any] = {
    "name": RECALL_TOOL_NAME,
    "description": (
        "Get back, verbatim, something removed from this conversation to save context. Pass "
        "the id that a marker or the summary names: a tool call's id (its result was cleared "
        "or cut), a 'sha256-…' content id, or the summary's own recall id (the messages it "
        "covers). Long originals come a page at a time: pass the 'offset' the previous page "
        "ended at to continue."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The id the marker or summary names."},
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "Character offset to start from (default 0).",
            },
        },
        "required": ["id"],
    },
}
"""The tool definition, Anthropic-style (the history renders it for each API)."""

PAGE_CHARS = 20_000
"""Characters one recall returns at most (about 5,000 tokens): a page, not the whole log."""
TRANSCRIPT_RESULT_CHARS = 1_000_000
"""A recalled span shows each tool result whole (the page bounds the answer, not the result)."""
MAX_ID_CHARS = 200


@dataclass(frozen=True, slots=True)
class Recalled:
    """A recall's answer: the text for the model, and whether it is an error."""

    text: str
    is_error: bool = False


def recall(
    history: ConversationHistory, tool_input: Mapping[str, Any], *, page_chars: int = PAGE_CHARS
) -> Recalled:
    """The original the id names, from ``offset`` on, at most ``page_chars`` characters; an
    error the model can act on when the input is wrong or the id names nothing."""
    wanted, offset = tool_input.get("id"), tool_input.get("offset", 0)
    if not isinstance(wanted, str) or not wanted.strip() or len(wanted) > MAX_ID_CHARS:
        return Recalled("recall needs 'id': the id a marker or the summary names", True)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        return Recalled(f"'offset' must be a whole number >= 0, got {offset!r}", True)
    text = original(history, wanted.strip())
    if text is None:
        return Recalled(
            f"nothing to recall under id {wanted!r}: use an id exactly as a marker or the "
            "summary names it (a tool call id, a 'sha256-…' id)",
            True,
        )
    return Recalled(_page(text, offset, page_chars))


def original(history: ConversationHistory, wanted: str) -> str | None:
    """The whole original under ``wanted``: a tool result or text (``history.rehydrate``), or
    the transcript of the messages a summary replaced or a truncation dropped (``span_id``,
    ``dropped_id``); None if neither."""
    back = _rehydrated(history, wanted)
    if back is not None:
        return back.text
    span = summarized_span(history.log, wanted)
    if span is None:
        return None
    return "\n\n".join(
        render_message(i, restored(history, m), result_chars=TRANSCRIPT_RESULT_CHARS)
        for i, m in span
    )


def restored(history: ConversationHistory, message: Message) -> Message:
    """``message`` with what earlier rungs cleared or cut put back: each tool result as it was
    added, each text that is only a marker naming its original replaced by that original."""
    blocks: list[Block] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            block = _rehydrated(history, block.tool_use_id) or block
        elif isinstance(block, TextBlock):
            named = MARKED_IDS.search(block.text)
            back = _rehydrated(history, named[1] or named[2]) if named else None
            block = TextBlock(back.text) if back is not None else block
        blocks.append(block)
    return replace(message, content=tuple(blocks))


def _rehydrated(history: ConversationHistory, wanted: str) -> ToolResultBlock | TextBlock | None:
    try:
        return history.rehydrate(wanted)
    except KeyError:
        return None


def span_id(summary: str) -> str:
    """The recall id of the messages a summary replaced: the content id of the summary's text
    (recorded in its compaction boundary), so it is the same wherever it is computed."""
    return content_id(summary)


DROPPED_ID_KEY = "recall_id"
"""The compaction boundary's detail holding ``dropped_id`` of what a truncation dropped."""


def dropped_id(messages: Sequence[Message]) -> str:
    """The recall id of messages a compaction dropped with no summary in their place (a
    truncation): the content id of their count and texts, recorded in the boundary's details
    (``DROPPED_ID_KEY``), so the log, not a recomputation, says which span it names."""
    texts = (text for message in messages for text in block_texts(message))
    return content_id("\x1e".join((f"{len(messages)} dropped", *texts)))


def _names(entry: CompactionBoundary, wanted: str) -> bool:
    """Whether ``wanted`` is the recall id of the span ``entry`` took out of the view."""
    if entry.summary is not None:
        return span_id(entry.summary) == wanted
    return entry.details.get(DROPPED_ID_KEY) == wanted


def summarized_span(entries: Sequence[LogEntry], wanted: str) -> list[tuple[int, Message]] | None:
    """(index in the view before, message) of each message the compaction ``wanted`` names took
    out of the view (a summary's ``span_id``, a truncation's ``dropped_id``), or None when no
    compaction in ``entries`` has that id."""
    since: list[LogEntry] = []
    for entry in entries:
        if isinstance(entry, CompactionBoundary):
            if _names(entry, wanted):
                kept = Counter(entry.view)  # equal, not identical: a log read back from a store
                span = []
                for i, message in enumerate(derive_view(since)):
                    if kept[message] > 0:
                        kept[message] -= 1
                    else:
                        span.append((i, message))
                return span
            since = [entry]
        elif isinstance(entry, MessageAdded):
            since.append(entry)
    return None


MARKED_IDS = re.compile(
    r"history\.rehydrate\('([^'\n]{1,200})'\)|recall\(id=\"([^\"\n]{1,200})\"\)"
)
"""How markers and summaries name what can be recalled: the cut and clearing notes name
``history.rehydrate('…')``, a summary offered with the tool names ``recall(id="…")``, and so
does the note a truncation leaves (``policy.DROPPED_NOTE``)."""


def named_ids(messages: Sequence[Message], cleared_marker: str = CLEARED_MARKER) -> list[str]:
    """The ids a model following the markers in ``messages`` would recall, in order, each once:
    every id a note names, and the tool call id of every result that was cleared."""
    found: list[str] = []
    for message in messages:
        for result in message.tool_results:
            if result.text.startswith(cleared_marker):
                found.append(result.tool_use_id)
        for text in block_texts(message):
            found.extend(a or b for a, b in MARKED_IDS.findall(text))
    return list(dict.fromkeys(found))


def _page(text: str, offset: int, page_chars: int) -> str:
    if not text:
        return "[the original was empty]"
    if offset >= len(text):
        return f"[nothing after offset {offset}: the original is {len(text):,} characters]"
    end = min(len(text), offset + page_chars)
    page = text[offset:end]
    if end < len(text):
        page += f"\n\n[{len(text) - end:,} more characters: recall again with offset={end}]"
    return page
