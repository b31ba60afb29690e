"""SqliteStore, the default store: stdlib ``sqlite3`` in WAL mode, safe for several processes.

Each append batch (a compaction is one) is one ``BEGIN IMMEDIATE`` transaction: writers queue on
the database lock (up to ``busy_timeout``) and see each other's committed versions, so the
expected-version check holds across processes. Readers never block writers (WAL).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from contextwarden.errors import StoreError
from contextwarden.rules import DEFAULT_RULES, Rule
from contextwarden.stores.sqlbase import (
    Cursor,
    Dialect,
    SqlStore,
    apply_migrations,
    check_schema,
)

BUSY_TIMEOUT = 30.0
"""Seconds a write waits for another process's transaction before failing with StoreError."""

Synchronous = Literal["OFF", "NORMAL", "FULL", "EXTRA"]

_EPOCH_NOW = "((julianday('now') - 2440587.5) * 86400.0)"


class SqliteStore(SqlStore):
    """Sessions in one SQLite database file (created, and migrated, on first use)."""

    format_name = "contextwarden-sqlite"
    dialect = Dialect(timestamp_type=f"REAL NOT NULL DEFAULT {_EPOCH_NOW}", now=_EPOCH_NOW)
    sessions_table = "sessions"
    events_table = "events"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = BUSY_TIMEOUT,
        synchronous: Synchronous = "NORMAL",
        rules: Iterable[Rule] = DEFAULT_RULES,
        read_only: bool | None = None,
    ) -> None:
        super().__init__(rules)
        if str(path) == ":memory:" or str(path).startswith("file::memory:"):
            raise StoreError(
                "SqliteStore needs a database file: an in-memory database is private to one "
                "connection, and the store opens one per thread"
            )
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self.synchronous: Synchronous = synchronous
        """``NORMAL`` (default): in WAL mode a crash of the process never loses a committed
        append; only a power loss may drop the last few. ``FULL`` also fsyncs every commit."""
        self.read_only = _read_only(self.path) if read_only is None else read_only
        """Opened for reading only (``None``: when the file exists and we may not write it or
        its directory); every write then raises StoreError."""
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        if self.read_only:
            with self._read() as cur:
                check_schema(self, cur, "schema_migrations")
        else:
            with self._write() as cur:
                apply_migrations(self, cur, "schema_migrations")

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r})"

    def _where(self, session_id: str) -> str:
        return f"{self.path}#{session_id}"

    def close(self) -> None:
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    # ----------------------------------------------------------------- connections
    def _connection(self) -> sqlite3.Connection:
        """This thread's connection (a new one after a fork: connections must not cross it)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            return conn
        try:
            if self.read_only:
                conn = self._connect(_read_only_uri(self.path))
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = self._connect(self.path)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(f"PRAGMA synchronous={self.synchronous}")
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open SQLite database {self.path}: {exc}") from exc
        self._local.conn, self._local.pid = conn, os.getpid()
        with self._lock:
            self._connections.append(conn)
        return conn

    def _connect(self, target: str | Path) -> sqlite3.Connection:
        return sqlite3.connect(
            target,
            timeout=self.busy_timeout,
            isolation_level=None,
            check_same_thread=False,
            uri=isinstance(target, str),
        )

    def _write(self) -> _Transaction:
        if self.read_only:
            raise StoreError(f"{self!r} is open read-only; nothing was written")
        return _Transaction(self._connection(), self.path)

    @contextmanager
    def _read(self) -> Iterator[Cursor]:
        conn = self._connection()
        try:
            yield conn.cursor()
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite error on {self.path}: {exc}") from exc


class _Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any error), its cursor given to the
    body. A class, not a generator: it runs on every append, and this costs a third as much."""

    __slots__ = ("conn", "path")

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    def __enter__(self) -> Cursor:
        try:
            return self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._failed(exc) from exc

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, _: Any) -> None:
        try:
            self.conn.execute("ROLLBACK" if kind is not None else "COMMIT")
        except sqlite3.Error as error:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            if kind is None:
                raise self._failed(error) from error
        if isinstance(exc, sqlite3.Error):
            raise self._failed(exc) from exc

    def _failed(self, exc: sqlite3.Error) -> StoreError:
        return StoreError(f"SQLite error on {self.path}: {exc}")


def _read_only(path: Path) -> bool:
    """True for an existing database this process may not write, or whose directory it may not
    write (WAL mode needs its ``-wal`` and ``-shm`` files there)."""
    if not path.exists():
        return False
    return not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


def _read_only_uri(path: Path) -> str:
    """The URI that opens ``path`` for reading. Without a ``-wal`` file no writer has the
    database open, and SQLite cannot set up WAL reading without writing its ``-shm`` file, so
    the file is read as ``immutable`` (a writer that opens it later is not seen until reopened)."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    wal = path.with_name(path.name + "-wal")
    return uri if wal.exists() else uri + "&immutable=1"
