"""Binding a ConversationHistory to a store: open (create or resume) and write-through.

Every entry the history records is appended to the store as it happens, with the version the
history last saw, so a history bound to a store is an exact, conflict-checked mirror of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from contextwarden.errors import StoreError
from contextwarden.history import ConversationHistory, Mode
from contextwarden.log import LogEntry
from contextwarden.rules import DEFAULT_RULES, Rule
from contextwarden.stores.base import (
    SessionStore,
    StoreConflictError,
    rebuild,
    validate_session_id,
)

if TYPE_CHECKING:
    from contextwarden.tokens.base import TokenCounter

OPEN_ATTEMPTS = 3
"""How often ``open_history`` retries when another process creates the same session between
our read and our create; one retry always suffices unless the session is deleted meanwhile."""


class WriteThrough:
    """A history listener that appends each entry to the store, checking the version.

    After any failure (a conflict: someone else changed the session; or a rejected event) the
    history no longer mirrors the store, so every later write fails too: reopen the session.
    """

    def __init__(self, store: SessionStore, session_id: str, version: int) -> None:
        self.store = store
        self.session_id = session_id
        self.version = version
        """The store version this history mirrors."""
        self.failure: StoreError | None = None

    def __call__(self, entry: LogEntry) -> None:
        if self.failure is not None:
            raise StoreError(
                f"history of session {self.session_id!r} is out of sync with the store since an "
                f"earlier write failed ({self.failure}); reopen it with ConversationHistory.open"
            ) from self.failure
        try:
            self.version = self.store.append(
                self.session_id, (entry,), expected_version=self.version
            )
        except StoreError as exc:
            self.failure = exc
            raise


def open_history(
    store: SessionStore,
    session_id: str,
    *,
    system: str | Sequence[Mapping[str, Any]] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    mode: Mode = "strict",
    counter: TokenCounter | None = None,
    rules: Sequence[Rule] = DEFAULT_RULES,
    history_class: type[ConversationHistory] | None = None,
    model: str | None = None,
) -> ConversationHistory:
    """Resume ``session_id`` from ``store``, or create it; the history is bound write-through.

    On resume, a ``system`` or ``tools`` that differs from the stored one is recorded as a new
    Preamble (so the change is in the log too); ``None`` keeps what is stored. ``model`` picks
    the counter and calibration as for ``ConversationHistory`` (the log does not record it).
    """
    validate_session_id(session_id)
    cls = history_class or ConversationHistory
    for _ in range(OPEN_ATTEMPTS):
        entries = store.log(session_id)
        if entries:
            history = rebuild(
                entries,
                session_id,
                repr(store),
                history_class=cls,
                mode=mode,
                counter=counter,
                rules=rules,
                model=model,
            )
            history.subscribe(WriteThrough(store, session_id, len(entries)))
            history.set_preamble(system, tools)
            return history
        history = cls(system, tools, mode=mode, counter=counter, rules=rules, model=model)
        try:
            version = store.append(session_id, history.log, expected_version=0)
        except StoreConflictError:
            continue  # created by someone else since we looked: resume theirs
        history.subscribe(WriteThrough(store, session_id, version))
        return history
    raise StoreError(
        f"could not open session {session_id!r}: it kept changing between read and create"
    )
