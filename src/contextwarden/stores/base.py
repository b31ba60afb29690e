"""What every session store shares: the SessionStore protocol, its errors, and session-id checks.

A session is an append-only sequence of LogEntry values; its *version* is how many entries it
holds, so "the version I read" is simply the length of the log I read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from contextwarden.errors import HistoryError, StoreError
from contextwarden.history import ConversationHistory
from contextwarden.log import (
    CompactionBoundary,
    LogEntry,
    MessageAdded,
    MetadataSet,
    Preamble,
    UsageRecorded,
)

MAX_SESSION_ID_LENGTH = 128
"""Longest accepted session id: it becomes a file name (JSONL) or a key, and 255 bytes is the
common file-name limit, so 128 leaves room for the ``.jsonl`` suffix and temporary names."""

_SESSION_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
"""Letters, digits, ``_``, ``-`` and ``.``, not starting with ``.`` or ``-`` (no hidden files, no
option-like names): safe as a file name on every platform and as a SQL key."""

UNDO_STRATEGY = "undo"
"""``CompactionBoundary.strategy`` of the entry that ``undo_compaction`` appends."""


class StoreConflictError(StoreError):
    """The session changed since it was read (``expected`` ≠ ``actual`` version); nothing was
    written. Read the session again (``ConversationHistory.open``) and retry."""

    def __init__(self, session_id: str, expected: int, actual: int) -> None:
        super().__init__(
            f"session {session_id!r} changed since it was read: expected version {expected}, "
            f"found {actual}; nothing was written. Reopen the session and retry."
        )
        self.session_id = session_id
        self.expected = expected
        self.actual = actual


class StoreWarning(UserWarning):
    """A store skipped something it could not read (e.g. a torn last line left by a crash)."""


def validate_session_id(session_id: object) -> str:
    """Return ``session_id`` if it is safe as a file name and key; raise StoreError otherwise.

    Runs before any file-system or database access, so ``../x`` never reaches ``open()``.
    """
    if not isinstance(session_id, str):
        raise StoreError(f"session id must be a string, got {type(session_id).__name__}")
    if not session_id:
        raise StoreError("session id must not be empty")
    if len(session_id) > MAX_SESSION_ID_LENGTH:
        raise StoreError(
            f"session id is {len(session_id)} characters long; the limit is {MAX_SESSION_ID_LENGTH}"
        )
    for bad, name in (("\x00", "a NUL character"), ("/", "'/'"), ("\\", "'\\'"), ("..", "'..'")):
        if bad in session_id:
            raise StoreError(f"session id {session_id!r} contains {name}; it must be a plain name")
    if not _SESSION_ID.fullmatch(session_id):
        raise StoreError(
            f"session id {session_id!r} may only use letters, digits, '_', '-' and '.', "
            "and must not start with '.' or '-'"
        )
    return session_id


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions live: an append-only log per session id, and the view derived from it."""

    def append(
        self,
        session_id: str,
        events: Iterable[LogEntry],
        *,
        expected_version: int | None = None,
    ) -> int:
        """Append ``events`` in one atomic batch and return the session's new version.

        The batch is checked first: an event that is not a LogEntry, a value that is not JSON, or a
        message or boundary that would make the view break an API rule raises StoreError and
        nothing is written. With ``expected_version`` the batch is written only if the session
        still has that version (0: it does not exist yet); otherwise StoreConflictError.
        """
        ...

    def open(self, session_id: str, **kwargs: Any) -> ConversationHistory:
        """Resume ``session_id`` or create it, bound write-through (``ConversationHistory.open``
        calls this; ``kwargs`` as for ``stores.open_history``)."""
        ...

    def load(self, session_id: str, **kwargs: Any) -> ConversationHistory:
        """The session as a ConversationHistory (current view, full ``log``, ledger, metadata).

        ``kwargs`` (``mode``, ``counter``, ``rules``) go to the ConversationHistory constructor.
        """
        ...

    def log(self, session_id: str) -> list[LogEntry]:
        """Every entry ever appended to the session, in order."""
        ...

    def version(self, session_id: str) -> int:
        """How many entries the session holds (0 when it does not exist)."""
        ...

    def list_sessions(self) -> list[str]:
        """The ids of all stored sessions, sorted."""
        ...

    def delete(self, session_id: str) -> bool:
        """Remove the session and its whole log; False when there was none."""
        ...

    def undo_compaction(self, session_id: str) -> CompactionBoundary:
        """Append a boundary restoring the view from before the last compaction not yet undone,
        plus every message added since (see ``stores.undo``); the log keeps everything."""
        ...

    def close(self) -> None:
        """Release connections and file handles."""
        ...


def rebuild(
    entries: Sequence[LogEntry],
    session_id: str,
    where: str,
    *,
    history_class: type[ConversationHistory] | None = None,
    **kwargs: Any,
) -> ConversationHistory:
    """``ConversationHistory.from_log``, with a stored view that breaks an API rule (a row or
    line edited on disk) reported as StoreError naming the session and the message index."""
    try:
        return (history_class or ConversationHistory).from_log(entries, **kwargs)
    except HistoryError as exc:
        raise StoreError(
            f"session {session_id!r} in {where} does not load: its stored view breaks an API "
            f"rule at message {exc.index} ({exc}); the stored log was changed outside "
            "contextwarden"
        ) from exc


def as_entries(events: Iterable[LogEntry]) -> Sequence[LogEntry]:
    """The batch as a tuple; a bare LogEntry (a common slip) is taken as a batch of one."""
    if type(events) is list or type(events) is tuple:
        return tuple(events)  # the usual batch, without the slower checks below
    single = Preamble | MessageAdded | UsageRecorded | CompactionBoundary | MetadataSet
    if isinstance(events, single):
        return (events,)
    if isinstance(events, str | bytes) or not isinstance(events, Iterable):
        kind = type(events).__name__
        raise StoreError(f"events must be an iterable of LogEntry values, got {kind}")
    return tuple(events)
