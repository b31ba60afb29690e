"""Session stores: append-only logs of sessions that survive crashes, restarts and compactions.

``SqliteStore`` is the default; ``JsonlStore`` keeps one file per session; ``PostgresStore`` lets
many workers share sessions. Bind a history with ``ConversationHistory.open(store, session_id)``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from contextwarden.stores.base import (
    MAX_SESSION_ID_LENGTH,
    SessionStore,
    StoreConflictError,
    StoreWarning,
    validate_session_id,
)
from contextwarden.stores.binding import WriteThrough, open_history
from contextwarden.stores.claude_code_writer import claude_code_records, write_claude_code
from contextwarden.stores.jsonl import JsonlStore
from contextwarden.stores.postgres import PostgresStore
from contextwarden.stores.sqlite import SqliteStore

__all__ = [
    "MAX_SESSION_ID_LENGTH",
    "JsonlStore",
    "PostgresStore",
    "SessionStore",
    "SqliteStore",
    "StoreConflictError",
    "StoreWarning",
    "WriteThrough",
    "claude_code_records",
    "open_history",
    "open_store",
    "validate_session_id",
    "write_claude_code",
]


def open_store(location: str | os.PathLike[str], **options: Any) -> SessionStore:
    """The store a location names: ``postgresql://…`` → PostgresStore, an existing directory
    → JsonlStore, anything else → a SqliteStore database file (the default). ``options`` go
    to the store's constructor (e.g. ``schema=`` for PostgreSQL)."""
    text = os.fspath(location)
    if text.startswith(("postgresql://", "postgres://")):
        return PostgresStore(text, **options)
    if Path(text).is_dir():
        return JsonlStore(text, **options)
    return SqliteStore(text, **options)
