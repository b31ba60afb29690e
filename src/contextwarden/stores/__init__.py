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
    "DATA_DIR_ENV",
    "MAX_SESSION_ID_LENGTH",
    "JsonlStore",
    "PostgresStore",
    "SessionStore",
    "SqliteStore",
    "StoreConflictError",
    "StoreWarning",
    "WriteThrough",
    "claude_code_records",
    "default_location",
    "open_history",
    "open_store",
    "store_from",
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


DATA_DIR_ENV = "CONTEXTWARDEN_HOME"
"""Environment variable naming the directory for contextwarden's own data (session database)."""


def default_location() -> Path:
    """Where sessions live when no store is given: ``$CONTEXTWARDEN_HOME/sessions.db``, else
    ``$XDG_DATA_HOME/contextwarden/sessions.db`` (``~/.local/share`` when unset). The directory
    is created on first use."""
    home = os.environ.get(DATA_DIR_ENV)
    if home:
        base = Path(home)
    else:
        xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        base = Path(xdg) / "contextwarden"
    base.mkdir(parents=True, exist_ok=True)
    return base / "sessions.db"


def store_from(store: SessionStore | str | os.PathLike[str] | None) -> SessionStore:
    """``store`` itself, the store a location names (``open_store``), or the default SQLite
    database at ``default_location()`` when None."""
    if store is None:
        return open_store(default_location())
    if isinstance(store, str | os.PathLike):
        return open_store(store)
    return store
