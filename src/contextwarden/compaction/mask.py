"""ObservationMask: keep the latest M tool results, replace the content of the others.

The "observation masking" baseline (Lindenbauer et al., "The Complexity Trap", 2025): every tool,
no minimum saving, no model call. ``contextwarden replay --strategy mask`` uses it. Text-action
agents' observations (``compaction.observations``, the kind of agent the study measured) count as
tool results; a masked one names the content id ``history.rehydrate`` takes.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    finish,
    unchanged,
)
from contextwarden.compaction.microcompact import clear_old_results
from contextwarden.model import Message

MASK_KEEP_RECENT = 10
"""Tool results kept in full by default (the window size M the study used)."""
MASK_PLACEHOLDER = "[Old tool result omitted for brevity]"


def _every_tool(name: str | None) -> bool:
    return True


class ObservationMask:
    """Puts a placeholder in place of all but the latest ``keep_recent`` tool results."""

    name = "mask"

    def __init__(
        self, keep_recent: int = MASK_KEEP_RECENT, placeholder: str = MASK_PLACEHOLDER
    ) -> None:
        if keep_recent < 0:
            raise ValueError(f"keep_recent must be >= 0, got {keep_recent}")
        if not placeholder.strip():
            raise ValueError("placeholder must contain non-whitespace text")
        self.keep_recent = keep_recent
        self.placeholder = placeholder

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        clearing = clear_old_results(messages, _every_tool, self.keep_recent, self.placeholder)
        tokens_before = ctx.total_before(messages)
        if not clearing.cleared:
            reason = f"no tool result older than the latest {self.keep_recent} to mask"
            return unchanged(self.name, messages, reason, tokens_before)
        saving = clearing.saving(messages, ctx)
        description = f"masked {clearing.cleared} tool result(s), kept the latest {clearing.kept}"
        details = {"masked": clearing.cleared, "kept": clearing.kept, "saving": saving}
        proposal = clearing.proposal(tokens_before, saving, description, details)
        return finish(self.name, messages, tokens_before, proposal)
