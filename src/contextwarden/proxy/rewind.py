"""An agent's edit of its own latest turn, as a strategy: the view without the messages the
rewritten items had become, so the request's new version of them is added in their place and
the session goes on (the log keeps the old version, as it keeps everything compaction removes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    Proposal,
    finish,
    unchanged,
)
from contextwarden.model import Message

EDIT_TRIGGER = "proxy.edit"
"""The trigger an edit is recorded with in the log and in events."""


@dataclass(frozen=True, slots=True)
class DropTail:
    """The view without its last ``count`` messages (never all of them)."""

    count: int
    name: str = "rewind"

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        before = ctx.total_before(messages)
        if not 0 < self.count < len(messages):
            return unchanged(self.name, messages, "nothing to rewind", before)
        kept = tuple(messages[: -self.count])
        after = before - sum(ctx.count(m) for m in messages[-self.count :])
        text = f"the agent rewrote its last {self.count} message(s); the new version follows"
        return finish(self.name, messages, before, Proposal(kept, after, text))
