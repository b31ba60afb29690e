"""How a history records a change: the log entry first (a write-through listener may refuse it,
and then nothing changes), then the view, its tool_use ids and the token ledger, together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from contextwarden.history_read import HistoryReadSide
from contextwarden.log import (
    CompactionBoundary,
    LogEntry,
    MessageAdded,
    Preamble,
    current_metadata,
    last_anchor,
    stored_counts,
)
from contextwarden.model import FrozenDict, Message
from contextwarden.tokens.base import TokenCounter


class HistoryRecorder(HistoryReadSide):
    """The write side ``ConversationHistory`` inherits: every change of its log, view and ledger
    goes through here. Called by the history alone (``_replace_view``: by the manager, through
    ``compaction.apply``), so it stays the one holder that mutates."""

    counter: TokenCounter
    _count_key: str | None
    _listeners: list[Callable[[LogEntry], None]]
    _use_ids: set[str]

    def subscribe(self, listener: Callable[[LogEntry], None]) -> None:
        """Call ``listener`` with every new log entry as it is recorded (write-through stores)."""
        self._listeners.append(listener)

    def _replace_view(
        self, boundary: CompactionBoundary, counts: Sequence[int] | None = None
    ) -> None:
        """Install a compacted view. Only ContextManager calls this, after it validated the view.

        ``counts``: the view's per-message token counts when the caller already has them (the
        rung that built the view counted what it changed), so the ledger does not count again.
        """
        if counts is not None and len(counts) != len(boundary.view):
            raise ValueError(f"{len(counts)} counts for a view of {len(boundary.view)} messages")
        self._record(boundary)
        self._view = list(boundary.view)
        self._use_ids = {u.id for m in self._view for u in m.tool_uses}
        self._ledger.reset(self._view, counts)

    def _restore(self, entries: Sequence[LogEntry], view: list[Message]) -> None:
        """Rebuild this (empty) history from a stored log (whose view is ``view``) without
        re-recording it.

        The ledger counts the view once and re-anchors on the
        last usage recorded since the last compaction (an older anchor describes a gone view).
        Counts stored with the messages by a counter of the same ``cache_key`` are reused, so a
        restart does not count the session again.
        """
        self._snapshot = None
        self._log = list(entries)  # the stored log has its own Preamble
        self._view = view
        self._use_ids = {u.id for m in view for u in m.tool_uses}
        self._metadata = current_metadata(entries)
        preamble = next((e for e in reversed(entries) if isinstance(e, Preamble)), None)
        if preamble is not None:
            self._system, self._tools = preamble.system, preamble.tools
        self._ledger.set_preamble(self.system, self.tools)
        counts = stored_counts(entries, cache_key(self.counter))
        anchor = last_anchor(entries)
        if anchor is None:
            self._ledger.reset(self._view, counts)
            return
        total, covered = anchor
        self._ledger.reset(self._view[:covered], counts[:covered])
        self._ledger.anchor(total)
        for message, count in zip(self._view[covered:], counts[covered:], strict=True):
            self._ledger.append(message, count)

    def _set_preamble(
        self,
        system: str | Sequence[Mapping[str, Any]] | None,
        tools: Sequence[Mapping[str, Any]] | None,
    ) -> None:
        """Replace the system prompt and tool definitions; always logged (a Preamble)."""
        frozen_system = (
            system if isinstance(system, str | None) else tuple(FrozenDict(b) for b in system)
        )
        frozen_tools = tuple(FrozenDict(t) for t in tools or ())
        self._record(Preamble(frozen_system, frozen_tools))
        self._system, self._tools = frozen_system, frozen_tools
        self._ledger.set_preamble(self.system, self.tools)

    def _record(self, entry: LogEntry) -> None:
        """Log an entry *before* the change it describes is applied.

        Listeners (write-through stores) run first: if one refuses the entry, it raises and the
        caller applies nothing, so the history is exactly as it was.
        """
        for listener in self._listeners:
            listener(entry)
        self._snapshot = None  # every change of the view is recorded, so this is the one place
        self._log.append(entry)

    def _append(self, message: Message) -> None:
        count = self.counter.count_message(message)
        self._record(self._added(message, count))
        self._view.append(message)
        uses = message.tool_uses
        if uses:
            self._use_ids.update(u.id for u in uses)
        self._ledger.append(message, count)

    def _added(self, message: Message, count: int, merge: bool = False) -> MessageAdded:
        """The entry for ``message``, with its count when the counter can vouch for it later."""
        key = self._count_key
        if key is None:
            return MessageAdded(message, merge)
        return MessageAdded(message, merge, count, key)


def cache_key(counter: TokenCounter) -> str | None:
    """The counter's ``cache_key`` (the identity of its counts), None when it has none."""
    key = getattr(counter, "cache_key", None)
    return key if isinstance(key, str) and key else None
