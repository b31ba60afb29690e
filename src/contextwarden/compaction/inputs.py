"""ClearToolInputs: empty the arguments of old tool calls, keeping the latest ones.

Anthropic's ``clear_tool_uses_20250919`` edit can clear the calls' inputs as well as their
results (``clear_tool_inputs``); this is that half. A cleared call keeps its id and name, so its
pairing with its result stands; the original input stays in the history's log.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    Proposal,
    finish,
    unchanged,
    with_edits,
)
from contextwarden.compaction.tools import ToolMatcher
from contextwarden.model import EMPTY, Block, Message, ToolUseBlock

__all__ = ["ClearToolInputs"]


class ClearToolInputs:
    """Replaces the input of every tool call but the latest ``keep`` with ``{}``; only calls of
    ``tools`` (matched with aliases) when given, every tool otherwise."""

    name = "clear_tool_inputs"

    def __init__(self, keep: int, *, tools: Iterable[str] | None = None) -> None:
        if keep < 0:
            raise ValueError(f"keep must be >= 0, got {keep}")
        self.keep = keep
        self.matcher = ToolMatcher(tuple(tools)) if tools is not None else None

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        tokens_before = ctx.total_before(messages)
        calls = [(i, u.id) for i, m in enumerate(messages) for u in m.tool_uses]
        old = {uid for _, uid in calls[: max(len(calls) - self.keep, 0)]}
        edits: dict[int, Message] = {}
        for i in sorted({i for i, uid in calls if uid in old}):
            blocks = tuple(self._cleared(b, old) for b in messages[i].content)
            if blocks != messages[i].content:
                edits[i] = replace(messages[i], content=blocks)
        if not edits:
            reason = f"no tool input older than the latest {self.keep} calls to clear"
            return unchanged(self.name, messages, reason, tokens_before)
        saving = sum(ctx.count(messages[i]) - ctx.count(m) for i, m in edits.items())
        cleared = sum(
            a != b
            for i in edits
            for a, b in zip(messages[i].content, edits[i].content, strict=True)
        )
        proposal = Proposal(
            with_edits(messages, edits),
            tokens_before - saving,
            f"cleared the input of {cleared} old tool call(s), kept the latest {self.keep}",
            changed=sorted(edits),
            details={"cleared": cleared},
        )
        return finish(self.name, messages, tokens_before, proposal)

    def _cleared(self, block: Block, old: set[str]) -> Block:
        if not isinstance(block, ToolUseBlock) or block.id not in old or not block.input:
            return block
        if self.matcher is not None and not self.matcher.matches(block.name):
            return block
        return replace(block, input=EMPTY)
