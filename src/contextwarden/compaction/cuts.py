"""Where a history may be cut, what a turn is, and how the kept first message is carried along.

Shared by Truncate and Summarize: both replace a prefix with one user message that starts with
the conversation's first user message, and both cut only at safe cut points (``rules``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from contextwarden.compaction.base import CompactionContext, CompactionResult, unchanged
from contextwarden.model import Block, FrozenDict, Message, MessageMeta
from contextwarden.repair import merge_messages
from contextwarden.rules import latest_assistant_index, safe_cut_points

FIRST_BLOCKS_KEY = "contextwarden.first_blocks"
"""``meta.extra`` key of a message that starts with the conversation's first user message: how
many of its leading blocks are that message (the rest is a summary or a merged turn)."""

SUMMARY_KEY = "contextwarden.compact_summary"
"""``meta.extra`` key marking the user message that holds a compaction summary."""

SUMMARY_BLOCKS_KEY = "contextwarden.summary_blocks"
"""``meta.extra`` key: how many leading blocks of the summary message belong to the summary
(first message, note, attachments); a turn merged into it comes after them."""


NO_SAFE_CUT = "no safe cut point: every cut would orphan a tool result or break alternation"


@dataclass(frozen=True, slots=True)
class CutPlan:
    """Where a rung that replaces a prefix starts: its context, the caller's token figure, the
    safe cuts, and ``suffix[i]`` = tokens of ``messages[i:]``."""

    context: CompactionContext
    tokens_before: int
    cuts: list[int]
    suffix: list[int]

    def tokens_after(self, after: Sequence[Message], lead: Message, cut: int) -> int:
        """The caller's figure once ``after`` (``lead`` joined to ``messages[cut:]``) replaces
        the messages: applied as a change, since it may include a preamble or an anchor."""
        merged = after[0] is not lead  # lead was merged into messages[cut]
        kept = self.context.count(after[0]) + self.suffix[cut + 1 if merged else cut]
        return self.tokens_before - (self.suffix[0] - kept)


def plan_cut(
    name: str, messages: Sequence[Message], context: CompactionContext | None, verb: str
) -> CutPlan | CompactionResult:
    """Count, check there is a prefix to replace and list the safe cuts; or the input unchanged
    with the reason (``verb``: what the rung would do, for "nothing to …")."""
    ctx = context or CompactionContext()
    tokens_before = ctx.total_before(messages)
    if len(messages) < 3 or messages[0].role != "user":
        return unchanged(name, messages, f"nothing to {verb}", tokens_before)
    cuts = cut_candidates(messages)
    if not cuts:
        return unchanged(name, messages, NO_SAFE_CUT, tokens_before)
    return CutPlan(ctx, tokens_before, cuts, suffix_tokens(messages, ctx))


def first_user_blocks(messages: Sequence[Message]) -> tuple[Block, ...]:
    """The blocks of the conversation's first user message, even after earlier compactions."""
    if not messages or messages[0].role != "user":
        return ()
    first = messages[0]
    kept = first.meta.extra.get(FIRST_BLOCKS_KEY)
    if isinstance(kept, int) and not isinstance(kept, bool) and 0 < kept <= len(first.content):
        return first.content[:kept]
    return first.content


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """Indices where a turn starts: user messages that are not tool_result messages."""
    return [i for i, m in enumerate(messages) if m.role == "user" and not m.tool_results]


def cut_candidates(messages: Sequence[Message]) -> list[int]:
    """Safe cuts that drop something and keep the latest message and the latest assistant turn."""
    last = latest_assistant_index(messages)
    limit = len(messages) - 1 if last is None else min(last, len(messages) - 1)
    return [c for c in safe_cut_points(messages) if 1 <= c <= limit]


def suffix_tokens(messages: Sequence[Message], context: CompactionContext) -> list[int]:
    """``out[i]`` = tokens of ``messages[i:]`` (``out[len]`` = 0), counted through the cache."""
    counts = [context.count(m) for m in reversed(messages)]
    return [*reversed(list(accumulate(counts))), 0]


def lead_message(blocks: tuple[Block, ...], first_blocks: int, meta: MessageMeta) -> Message:
    """A user message whose first ``first_blocks`` blocks are the conversation's first message."""
    extra = FrozenDict({**meta.extra, FIRST_BLOCKS_KEY: first_blocks})
    return Message("user", blocks, MessageMeta(meta.timestamp, meta.id, meta.source_ids, extra))


def join(lead: Message, tail: Sequence[Message]) -> tuple[Message, ...]:
    """``lead`` followed by ``tail``; merged into ``tail[0]`` when that is a user message too."""
    if not tail or tail[0].role != "user":
        return (lead, *tail)
    merged = merge_messages(lead, tail[0])
    kept = lead.meta.extra.get(FIRST_BLOCKS_KEY, 0)
    extra = FrozenDict({**tail[0].meta.extra, **lead.meta.extra, FIRST_BLOCKS_KEY: kept})
    meta = MessageMeta(merged.meta.timestamp, merged.meta.id, merged.meta.source_ids, extra)
    return (Message("user", merged.content, meta), *tail[1:])
