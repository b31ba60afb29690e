"""Snip: lines of tool results longer than a limit are cut to a prefix with a marker.

Minified bundles, base64 blobs and one-line JSON dumps cost many tokens and say little; this is
pure local work, no model call. The full text stays in the history's log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    Proposal,
    finish,
    unchanged,
    with_edits,
)
from contextwarden.model import Block, Message, TextBlock, ToolResultBlock

LINE_MARKER = " ... [contextwarden: line cut, {rest:,} more characters]"
"""ASCII on purpose: counting ASCII text takes the counters' fast path."""


class Snip:
    """Cuts over-long lines inside tool results; ``max_line_chars`` overrides the policy's."""

    name = "snip"

    def __init__(self, max_line_chars: int | None = None) -> None:
        if max_line_chars is not None and max_line_chars <= 0:
            raise ValueError(f"max_line_chars must be > 0, got {max_line_chars}")
        self.max_line_chars = max_line_chars

    def wants(self, message: Message, context: CompactionContext) -> bool:
        """A cheap look: could this rung change ``message``? (No false negatives.)"""
        if message.role != "user":
            return False
        limit = self.max_line_chars or context.policy.max_line_chars
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                parts = (block.content,) if isinstance(block.content, str) else block.content
                for part in parts:
                    text = part if isinstance(part, str) else getattr(part, "text", "")
                    if isinstance(text, str) and has_long_line(
                        text, long_line_threshold(limit, text)
                    ):
                        return True
        return False

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        limit = self.max_line_chars or ctx.policy.max_line_chars
        edits: dict[int, Message] = {}
        lines = 0
        for i in range(ctx.start, len(messages)):
            new, cut = snip_message(messages[i], limit)
            if cut:
                edits[i], lines = new, lines + cut
        tokens_before = ctx.total_before(messages)
        if not edits:
            reason = f"no tool result line over {limit:,} characters"
            return unchanged(self.name, messages, reason, tokens_before)
        delta = sum(ctx.count(new) - ctx.count(messages[i]) for i, new in edits.items())
        description = f"cut {lines} line(s) over {limit:,} characters in {len(edits)} message(s)"
        after = with_edits(messages, edits)
        proposal = Proposal(
            after, tokens_before + delta, description, list(edits), {"lines": lines}
        )
        return finish(self.name, messages, tokens_before, proposal)


def long_line_threshold(limit: int, text: str) -> int:
    """Lines longer than this are cut: a cut must save more than the marker costs."""
    return limit + len(LINE_MARKER.format(rest=len(text)))


def snip_message(message: Message, limit: int) -> tuple[Message, int]:
    """``message`` with its tool results' long lines cut, and how many lines were cut."""
    if message.role != "user":
        return message, 0
    blocks: list[Block] | None = None
    total = 0
    for position, block in enumerate(message.content):
        if not isinstance(block, ToolResultBlock):
            continue
        new, cut = _snip_result(block, limit)
        if cut:
            blocks = blocks if blocks is not None else list(message.content)
            blocks[position] = new
            total += cut
    if blocks is None:
        return message, 0
    return replace(message, content=tuple(blocks)), total


def _snip_result(block: ToolResultBlock, limit: int) -> tuple[ToolResultBlock, int]:
    if isinstance(block.content, str):
        text, cut = snip_text(block.content, limit)
        return (replace(block, content=text), cut) if cut else (block, 0)
    parts: list[TextBlock | object] = []
    total = 0
    for part in block.content:
        if isinstance(part, TextBlock):
            text, cut = snip_text(part.text, limit)
            if cut:
                part, total = replace(part, text=text), total + cut
        parts.append(part)
    if not total:
        return block, 0
    return replace(block, content=tuple(parts)), total  # type: ignore[arg-type]


def snip_text(text: str, limit: int) -> tuple[str, int]:
    """``text`` with every line longer than ``limit`` (plus the marker) cut; and the count cut."""
    # A cut must save more than the marker costs, so lines just over the limit are left alone.
    threshold = long_line_threshold(limit, text)
    if not has_long_line(text, threshold):
        return text, 0
    lines = text.split("\n")
    cut = 0
    for n, line in enumerate(lines):
        if len(line) > threshold:
            lines[n] = line[:limit] + LINE_MARKER.format(rest=len(line) - limit)
            cut += 1
    return "\n".join(lines), cut


def has_long_line(text: str, threshold: int) -> bool:
    """True when some line of ``text`` is longer than ``threshold`` characters.

    Jumps to the last line break of each ``threshold + 1`` window, so it does about
    ``len(text) / threshold`` C-level searches instead of one step per line.
    """
    pos, end = 0, len(text)
    while end - pos > threshold:
        nl = text.rfind("\n", pos, pos + threshold + 1)
        if nl < 0:
            return True
        pos = nl + 1
    return False
