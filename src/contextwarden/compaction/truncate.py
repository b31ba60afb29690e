"""Truncate: keep the first user message and the latest turns, drop the middle.

The cut is a safe cut point, so roles alternate and no tool result is orphaned. When the kept
tail starts with a user message, the first user message is merged in front of it (one user
message, first message's blocks first) rather than moving the cut: the turn is kept whole. With
``keep_summary`` a compaction summary at the front is kept too (the manager's ladder never throws
away the summary it just made). A note after the first user message says how many messages were
dropped there (``policy.DROPPED_NOTE``); when the model is offered the ``recall`` tool it also
names the id that brings them back (``policy.DROPPED_RECALL_NOTE``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    Proposal,
    finish,
    unchanged,
)
from contextwarden.compaction.cuts import (
    FIRST_BLOCKS_KEY,
    SUMMARY_BLOCKS_KEY,
    SUMMARY_KEY,
    first_user_blocks,
    join,
    lead_message,
    plan_cut,
    turn_starts,
)
from contextwarden.model import FrozenDict, Message, MessageMeta, TextBlock
from contextwarden.policy import DROPPED_NOTE, DROPPED_RECALL_NOTE
from contextwarden.recall import DROPPED_ID_KEY, dropped_id


class Truncate:
    """Keeps the first user message and the last ``keep_recent_turns`` turns.

    A turn starts at a user message that is not a tool_result message. With ``max_tokens`` the
    cut moves later (to the next safe cut point, inside a turn if need be) until the result fits;
    if nothing fits, the latest safe cut is used and the report says it is still over.
    ``keep_summary``: a summary message at the front keeps its summary (and re-read files), not
    only the first user message it starts with.
    """

    name = "truncate"

    def __init__(
        self,
        keep_recent_turns: int | None = None,
        *,
        max_tokens: int | None = None,
        keep_summary: bool = False,
    ) -> None:
        if keep_recent_turns is not None and keep_recent_turns < 1:
            raise ValueError(f"keep_recent_turns must be >= 1, got {keep_recent_turns}")
        self.keep_recent_turns = keep_recent_turns
        self.max_tokens = max_tokens
        self.keep_summary = keep_summary

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        plan = plan_cut(self.name, messages, context, "truncate")
        if isinstance(plan, CompactionResult):
            return plan
        ctx, tokens_before, suffix = plan.context, plan.tokens_before, plan.suffix
        keep = self.keep_recent_turns or ctx.policy.keep_recent_turns
        lead = _lead(messages, self.keep_summary)
        # The note's count and id are the dropped span's, known once the cut is: a placeholder
        # of their length sizes the lead the cut is chosen with.
        recall = ctx.policy.recall
        sized = _noted(lead, len(messages), dropped_id(messages[:1]) if recall else None)
        lead_tokens = ctx.count(sized) if len(messages) > 1 else ctx.count(lead)
        cut, fits = self._choose(messages, plan.cuts, keep, lambda c: lead_tokens + suffix[c])
        recall_id = dropped_id(messages[:cut]) if recall and cut > 1 else None
        if cut > 1:
            lead = _noted(lead, cut - 1, recall_id)
        after = join(lead, messages[cut:])
        if len(after) == len(messages) and after == tuple(messages):
            reason = f"only {len(turn_starts(messages))} turn(s); nothing to drop"
            return unchanged(self.name, messages, reason, tokens_before)
        tokens_after = plan.tokens_after(after, lead, cut)
        description, details = self._describe(messages, cut, fits)
        if recall_id is not None:
            details[DROPPED_ID_KEY] = recall_id
        proposal = Proposal(after, tokens_after, description, None, details)
        return finish(self.name, messages, tokens_before, proposal)

    def _describe(
        self, messages: Sequence[Message], cut: int, fits: bool
    ) -> tuple[str, dict[str, object]]:
        kept_turns = sum(1 for s in turn_starts(messages) if s >= cut)
        dropped = f"messages 1..{cut - 1} ({cut - 1} messages)" if cut > 1 else "no message"
        if len(_lead(messages, self.keep_summary).content) < len(messages[0].content):
            dropped += " and the earlier summary" if not self.keep_summary else " and a merged turn"
        description = (
            f"dropped {dropped}, kept the first user message and {len(messages) - cut} recent "
            f"messages ({kept_turns} turn(s) start in them)"
        )
        if not fits:
            description += f"; still over the {self.max_tokens:,}-token budget"
        return description, {"cut": cut, "dropped": cut - 1, "kept_turns": kept_turns, "fits": fits}

    def _choose(
        self, messages: Sequence[Message], cuts: list[int], keep: int, size: Callable[[int], int]
    ) -> tuple[int, bool]:
        """The cut keeping ``keep`` turns, moved later while the result is over ``max_tokens``."""
        starts = turn_starts(messages)
        lo = starts[-keep] if len(starts) > keep else 1
        at_or_before = [c for c in cuts if c <= lo]
        first = max(at_or_before) if at_or_before else cuts[0]
        if self.max_tokens is None:
            return first, True
        for c in cuts:
            if c >= first and size(c) <= self.max_tokens:
                return c, True
        return cuts[-1], size(cuts[-1]) <= self.max_tokens


_OUR_KEYS = (FIRST_BLOCKS_KEY, SUMMARY_KEY, SUMMARY_BLOCKS_KEY)


def _noted(lead: Message, count: int, recall_id: str | None) -> Message:
    """``lead`` with the note naming the ``count`` messages dropped after it, and their recall
    id when the model is offered ``recall``."""
    text = DROPPED_NOTE if recall_id is None else DROPPED_RECALL_NOTE
    note = TextBlock(text.format(count=count, id=recall_id))
    return replace(lead, content=(*lead.content, note))


def _lead(messages: Sequence[Message], keep_summary: bool) -> Message:
    """The first user message alone (without any summary merged into it earlier); with
    ``keep_summary``, and the summary blocks of a summary message (not a turn merged after them)."""
    first = messages[0]
    blocks = first_user_blocks(messages)
    end = first.meta.extra.get(SUMMARY_BLOCKS_KEY)
    if keep_summary and first.meta.extra.get(SUMMARY_KEY) and isinstance(end, int):
        extra = {k: v for k, v in first.meta.extra.items() if k != FIRST_BLOCKS_KEY}
        meta = replace(first.meta, extra=FrozenDict(extra))
        return lead_message(first.content[:end], len(blocks), meta)
    extra = {k: v for k, v in first.meta.extra.items() if k not in _OUR_KEYS}
    meta = MessageMeta(
        first.meta.timestamp, first.meta.id, first.meta.source_ids, FrozenDict(extra)
    )
    return lead_message(blocks, len(blocks), meta)
