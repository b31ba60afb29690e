"""The behaviour every store backend shares, written once on top of ``_read_log`` and ``append``:
reading, loading, opening write-through, undoing a compaction, locking.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Self

from contextwarden.errors import StoreError
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadIssue, LoadReport
from contextwarden.log import CompactionBoundary, LogEntry
from contextwarden.stores.base import StoreWarning, rebuild, validate_session_id
from contextwarden.stores.binding import open_history
from contextwarden.stores.state import SessionState
from contextwarden.stores.undo import undo_compaction


class StoreBase(ABC):
    """Behaviour shared by every backend, written once on top of ``_read_log`` and ``append``."""

    format_name = "contextwarden-store"
    """``LoadReport.format`` of histories this store loads."""
    _states: dict[str, SessionState]
    """Per session written or read: what its next append is checked against."""

    @abstractmethod
    def _read_log(self, session_id: str) -> tuple[list[LogEntry], list[LoadIssue]]:
        """Every readable entry, and what could not be read (e.g. a torn last JSONL line)."""

    @abstractmethod
    def _where(self, session_id: str) -> str:
        """Where the session lives, for messages and ``LoadReport.path``."""

    @abstractmethod
    def list_sessions(self) -> list[str]: ...

    @abstractmethod
    def delete(self, session_id: str) -> bool: ...

    @abstractmethod
    def append(
        self,
        session_id: str,
        events: Iterable[LogEntry],
        *,
        expected_version: int | None = None,
    ) -> int: ...

    def log(self, session_id: str) -> list[LogEntry]:
        entries, issues = self._read_log(validate_session_id(session_id))
        self._warn(session_id, issues)
        return entries

    def version(self, session_id: str) -> int:
        return len(self.log(session_id))

    def exists(self, session_id: str) -> bool:
        """True when the session holds at least one entry."""
        return self.version(session_id) > 0

    def load(self, session_id: str, **kwargs: Any) -> ConversationHistory:
        entries, issues = self._read_log(validate_session_id(session_id))
        if not entries:
            raise StoreError(f"no session {session_id!r} in {self._where(session_id)}")
        self._warn(session_id, issues)
        history = rebuild(entries, session_id, self._where(session_id), **kwargs)
        history.source = LoadReport(
            self._where(session_id), self.format_name, records=len(entries) + len(issues)
        )
        history.source.issues.extend(issues)
        return history

    def open(self, session_id: str, **kwargs: Any) -> ConversationHistory:
        return open_history(self, session_id, **kwargs)

    def undo_compaction(self, session_id: str) -> CompactionBoundary:
        return undo_compaction(self, validate_session_id(session_id))

    def session_lock(self, session_id: str) -> AbstractContextManager[object]:
        """Hold the session against other *processes* for several appends (e.g. the proxy's
        read-match-append-compact of one request). Stores that cannot lock across processes
        return a no-op: their version-checked appends still refuse a stale write."""
        validate_session_id(session_id)
        return nullcontext()

    def forget(self, session_id: str) -> None:
        """Drop what this store caches of the session (the view's last messages, to check
        appends); its next append reads it from what is stored. A caller that holds many
        sessions in turn (the proxy) bounds its memory this way."""
        self._states.pop(session_id, None)

    @abstractmethod
    def close(self) -> None:
        """Release connections and cached state."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _warn(self, session_id: str, issues: Sequence[LoadIssue]) -> None:
        for issue in issues:
            warnings.warn(f"{self._where(session_id)}: {issue}", StoreWarning, stacklevel=3)
