"""Undo a compaction without rewriting history: append a boundary that brings the old view back.

The undo boundary's view is the view just before the compaction being undone, plus every message
added since; the log stays append-only and still holds everything. Undoing again undoes the
compaction before that one (undo boundaries and the compactions they undid are skipped).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from contextwarden.errors import StoreError
from contextwarden.log import CompactionBoundary, LogEntry, MessageAdded, derive_view
from contextwarden.model import FrozenDict
from contextwarden.repair import merge_messages
from contextwarden.rules import validate
from contextwarden.stores.base import UNDO_STRATEGY, StoreConflictError

if TYPE_CHECKING:
    from contextwarden.stores.base import SessionStore
    from contextwarden.tokens.base import TokenCounter

UNDO_ATTEMPTS = 5
"""How often ``undo_compaction`` re-reads and retries when other writers append meanwhile."""


def undo_compaction(
    store: SessionStore, session_id: str, *, counter: TokenCounter | None = None
) -> CompactionBoundary:
    """Append an undo boundary for the last compaction not yet undone, and return it.

    StoreError when the session has no compaction to undo or the restored view would break a
    rule; StoreConflictError when other writers kept changing the session.
    """
    conflict: StoreConflictError | None = None
    for _ in range(UNDO_ATTEMPTS):
        entries = store.log(session_id)
        boundary = undo_boundary(session_id, entries, counter)
        try:
            store.append(session_id, (boundary,), expected_version=len(entries))
        except StoreConflictError as exc:
            conflict = exc
            continue
        return boundary
    assert conflict is not None
    raise conflict


def undo_boundary(
    session_id: str, entries: Sequence[LogEntry], counter: TokenCounter | None = None
) -> CompactionBoundary:
    """The boundary that undoes the last live compaction in ``entries``."""
    live = live_compactions(entries)
    if not live:
        raise StoreError(f"session {session_id!r} has no compaction to undo")
    target = live[-1]
    view = derive_view(entries[:target])
    for entry in entries[target + 1 :]:
        if isinstance(entry, MessageAdded) and entry.merge and view:
            view[-1] = merge_messages(view[-1], entry.message)
        elif isinstance(entry, MessageAdded):
            view.append(entry.message)
    problems = validate(view)
    if problems:
        raise StoreError(
            f"cannot undo the compaction at event {target + 1} of session {session_id!r}: "
            f"the restored view would break an API rule ({problems[0]})"
        )
    undone = entries[target]
    assert isinstance(undone, CompactionBoundary)
    current = derive_view(entries)
    count = _counter(counter)
    return CompactionBoundary(
        strategy=UNDO_STRATEGY,
        trigger="manual",
        tokens_before=sum(count.count_message(m) for m in current),
        tokens_after=sum(count.count_message(m) for m in view),
        replaced=len(current),
        view=tuple(view),
        timestamp=time.time(),
        details=FrozenDict({"undoes": target + 1, "undone_strategy": undone.strategy}),
    )


def live_compactions(entries: Sequence[LogEntry]) -> list[int]:
    """Log indices of the compactions in force, oldest first (undone ones left out)."""
    live: list[int] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, CompactionBoundary):
            continue
        if entry.strategy != UNDO_STRATEGY:
            live.append(i)
            continue
        undoes = entry.details.get("undoes")
        index = undoes - 1 if isinstance(undoes, int) else None
        if index in live:
            live.remove(index)
        elif live:
            live.pop()
    return live


def _counter(counter: TokenCounter | None) -> TokenCounter:
    if counter is not None:
        return counter
    from contextwarden.tokens.heuristic import HeuristicCounter

    return HeuristicCounter()
