"""The SQL stores' shared engine: a ``sessions`` row per session, an ``events`` row per event.

``sessions.version`` counts a session's events and is bumped in the same transaction that inserts
them, under a lock on the session (SQLite ``BEGIN IMMEDIATE``, PostgreSQL ``SELECT … FOR UPDATE``),
so a write made against a stale version is refused (StoreConflictError) and none is lost.
"""

from __future__ import annotations

import uuid
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from contextwarden.errors import StoreError
from contextwarden.loadreport import LoadIssue
from contextwarden.log import CompactionBoundary, LogEntry
from contextwarden.rules import DEFAULT_RULES, Rule
from contextwarden.stores.backend import StoreBase
from contextwarden.stores.base import (
    StoreConflictError,
    as_entries,
    validate_session_id,
)
from contextwarden.stores.codec import encode, kind_of, paused_gc
from contextwarden.stores.state import SessionState
from contextwarden.stores.viewrefs import Fetch, decode_rows, placed_view


class Cursor(Protocol):
    """The DB-API cursor subset both drivers share."""

    @property
    def rowcount(self) -> int: ...

    def execute(self, query: Any, params: Any = ..., /) -> Any: ...

    def executemany(self, query: Any, params_seq: Any, /) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


@dataclass(frozen=True, slots=True)
class Dialect:
    """What differs between backends: SQL fragments and the driver's placeholder."""

    timestamp_type: str
    """Column type of ``created_at``/``updated_at``, with its default (the current time)."""
    now: str
    """An expression for the current time in that type."""
    lock_for_update: str = ""
    """Appended to the session read in a write transaction to lock its row (PostgreSQL)."""
    placeholder: str = "?"


MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        # 1: sessions with their version, events with a per-session sequence.
        """CREATE TABLE {s} (
            id TEXT PRIMARY KEY,
            version BIGINT NOT NULL DEFAULT 0,
            token TEXT NOT NULL,
            last_boundary BIGINT NOT NULL DEFAULT 0,
            created_at {ts},
            updated_at {ts}
        )""",
        """CREATE TABLE {e} (
            session_id TEXT NOT NULL REFERENCES {s}(id) ON DELETE CASCADE,
            seq BIGINT NOT NULL,
            kind TEXT NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        )""",
    ),
)
"""Numbered schema changes (migration n is ``MIGRATIONS[n - 1]``); only ever append to this."""


_TOUCH = "UPDATE {s} SET version = ?, last_boundary = ?, updated_at = {now}"


class SqlStore(StoreBase):
    """append/log/version/list/delete over a ``sessions`` and an ``events`` table."""

    dialect: Dialect
    sessions_table: str
    events_table: str
    rules: tuple[Rule, ...] = DEFAULT_RULES

    def __init__(self, rules: Iterable[Rule] = DEFAULT_RULES) -> None:
        self.rules = tuple(rules)
        self._states: dict[str, SessionState] = {}
        self._queries: dict[str, str] = {}

    # ----------------------------------------------------------------- backend hooks
    @abstractmethod
    def _write(self) -> AbstractContextManager[Cursor]:
        """A cursor inside a write transaction (committed on success, rolled back on error)."""

    @abstractmethod
    def _read(self) -> AbstractContextManager[Cursor]:
        """A cursor for reading."""

    def _q(self, text: str) -> str:
        """``text`` with table names, ``{now}`` and the driver's placeholder filled in (each text
        once: this runs several times per append, on constant texts)."""
        query = self._queries.get(text)
        if query is None:
            query = text.format(s=self.sessions_table, e=self.events_table, now=self.dialect.now)
            query = self._queries[text] = query.replace("?", self.dialect.placeholder)
        return query

    # ----------------------------------------------------------------- writing
    def append(
        self,
        session_id: str,
        events: Iterable[LogEntry],
        *,
        expected_version: int | None = None,
    ) -> int:
        if type(session_id) is not str or session_id not in self._states:
            validate_session_id(session_id)  # a session written to before was checked then
        batch = as_entries(events)
        rows = [(kind_of(e), encode(e)) for e in batch]
        with self._write() as cur:
            new = self._append_to_cached(cur, session_id, batch, rows, expected_version)
            if new is None:
                state = self._locked_state(cur, session_id, create=bool(rows))
                if expected_version is not None and expected_version != state.version:
                    raise StoreConflictError(session_id, expected_version, state.version)
                new = state.checked(session_id, batch, self.rules)
                if rows:
                    self._touch(cur, session_id, new)
                    rows = self._with_refs(cur, session_id, state, batch, rows)
                    self._insert(cur, session_id, state.version, rows)
        self._states[session_id] = new
        return new.version

    def _append_to_cached(
        self,
        cur: Cursor,
        session_id: str,
        batch: Sequence[LogEntry],
        rows: list[tuple[str, str]],
        expected_version: int | None,
    ) -> SessionState | None:
        """The common case, one statement shorter: the session is as this store last wrote it.

        The batch is checked against the cached state, and the session row is updated only if
        its version and token are still the cached ones (which also locks it), so no read comes
        first. None, with nothing written, when anything differs: the caller then reads the
        row and decides (a stale cache may have refused a batch the stored state accepts).
        """
        cached = self._states.get(session_id)
        if cached is None or not rows:
            return None
        if expected_version is not None and expected_version != cached.version:
            return None
        try:
            new = cached.checked(session_id, batch, self.rules)
        except StoreError:
            return None
        if not self._touch(cur, session_id, new, since=cached):
            return None
        self._insert(
            cur, session_id, cached.version, self._with_refs(cur, session_id, cached, batch, rows)
        )
        return new

    def _touch(
        self, cur: Cursor, session_id: str, new: SessionState, since: SessionState | None = None
    ) -> bool:
        """Set the session row to ``new``'s version; with ``since``, only if the row is still at
        ``since``'s version and token. Whether a row was updated."""
        values = (new.version, new.last_boundary, session_id)
        if since is None:
            cur.execute(self._q(_TOUCH + " WHERE id = ?"), values)
            return True
        query = self._q(_TOUCH + " WHERE id = ? AND version = ? AND token = ?")
        cur.execute(query, (*values, since.version, since.token))
        return cur.rowcount == 1

    def _insert(
        self, cur: Cursor, session_id: str, version: int, rows: Sequence[tuple[str, str]]
    ) -> None:
        insert = self._q("INSERT INTO {e} (session_id, seq, kind, body) VALUES (?, ?, ?, ?)")
        values = [(session_id, version + i, kind, body) for i, (kind, body) in enumerate(rows, 1)]
        if len(values) == 1:  # the write-through case; executemany costs more for one row
            cur.execute(insert, values[0])
        else:
            cur.executemany(insert, values)

    def _locked_state(self, cur: Cursor, session_id: str, *, create: bool) -> SessionState:
        """The session's state, its row locked for this transaction (created when ``create``)."""
        row = self._lock_row(cur, session_id)
        if row is None and create:
            # ON CONFLICT: a concurrent creator wins; we then wait for its row lock and see it.
            create_row = "INSERT INTO {s} (id, token) VALUES (?, ?) ON CONFLICT (id) DO NOTHING"
            cur.execute(self._q(create_row), (session_id, uuid.uuid4().hex))
            row = self._lock_row(cur, session_id)
        if row is None:
            return SessionState()
        version, token, last_boundary = int(row[0]), str(row[1]), int(row[2])
        state = self._states.get(session_id)
        if state is None or state.token != token or state.version > version:
            # Cold start: the view only depends on the last boundary and what follows it.
            state = SessionState(version=max(last_boundary - 1, 0), token=token)
        if state.version < version:
            state = state.advance(self._events_since(cur, session_id, state.version))
        return state

    def _lock_row(self, cur: Cursor, session_id: str) -> Any:
        """(version, token, last_boundary) of the session, locked until the transaction ends."""
        query = "SELECT version, token, last_boundary FROM {s} WHERE id = ?"
        return cur.execute(self._q(query + self.dialect.lock_for_update), (session_id,)).fetchone()

    def _events_since(self, cur: Cursor, session_id: str, version: int) -> list[LogEntry]:
        query = "SELECT seq, body FROM {e} WHERE session_id = ? AND seq > ? ORDER BY seq"
        rows = cur.execute(self._q(query), (session_id, version)).fetchall()
        with paused_gc():
            return decode_rows(rows, self._where(session_id), self._fetcher(cur, session_id))

    def _fetcher(self, cur: Cursor, session_id: str) -> Fetch:
        """Reads one event's body (what a compaction's reference names) in this transaction."""
        query = self._q("SELECT body FROM {e} WHERE session_id = ? AND seq = ?")

        def fetch(seq: int) -> str | bytes | None:
            row = cur.execute(query, (session_id, seq)).fetchone()
            return row[0] if row else None

        return fetch

    def _with_refs(
        self,
        cur: Cursor,
        session_id: str,
        state: SessionState,
        batch: Sequence[LogEntry],
        rows: list[tuple[str, str]],
    ) -> list[tuple[str, str]]:
        """``rows`` with every compaction's view written as references to the messages the log
        already holds (``stores/viewrefs.py``); unchanged when the batch has no compaction."""
        if len(batch) == 1 and type(batch[0]) is not CompactionBoundary:
            return rows  # the write-through case, without a generator on every append
        if not any(isinstance(e, CompactionBoundary) for e in batch):
            return rows
        since = "SELECT seq, body FROM {e} WHERE session_id = ? AND seq >= ? ORDER BY seq"
        stored = cur.execute(self._q(since), (session_id, max(state.last_boundary, 1)))
        fetch = self._fetcher(cur, session_id)
        view = placed_view(stored.fetchall(), self._where(session_id), fetch)
        out = []
        for seq, (entry, row) in enumerate(zip(batch, rows, strict=True), state.version + 1):
            refs = view.refs(entry.view) if isinstance(entry, CompactionBoundary) else []
            out.append((row[0], encode(entry, refs)) if refs else row)
            view.add(seq, entry, refs)
        return out

    def delete(self, session_id: str) -> bool:
        validate_session_id(session_id)
        self._states.pop(session_id, None)
        with self._write() as cur:
            self._lock_row(cur, session_id)  # waits for an append in flight to commit
            cur.execute(self._q("DELETE FROM {e} WHERE session_id = ?"), (session_id,))
            cur.execute(self._q("DELETE FROM {s} WHERE id = ?"), (session_id,))
            return cur.rowcount > 0

    # ----------------------------------------------------------------- reading
    def _read_log(self, session_id: str) -> tuple[list[LogEntry], list[LoadIssue]]:
        with self._read() as cur:
            query = "SELECT seq, body FROM {e} WHERE session_id = ? ORDER BY seq"
            rows = cur.execute(self._q(query), (session_id,)).fetchall()
        with paused_gc():
            return decode_rows(rows, self._where(session_id)), []

    def version(self, session_id: str) -> int:
        validate_session_id(session_id)
        with self._read() as cur:
            query = "SELECT version FROM {s} WHERE id = ?"
            row = cur.execute(self._q(query), (session_id,)).fetchone()
        return int(row[0]) if row else 0

    def list_sessions(self) -> list[str]:
        with self._read() as cur:
            rows = cur.execute(self._q("SELECT id FROM {s} WHERE version > 0 ORDER BY id"))
            return [str(r[0]) for r in rows.fetchall()]


def apply_migrations(store: SqlStore, cur: Cursor, migrations_table: str) -> int:
    """Bring the schema up to date inside the caller's (locked) transaction; the new version.

    StoreError when the database was migrated by a newer contextwarden than this one.
    """
    cur.execute(
        f"CREATE TABLE IF NOT EXISTS {migrations_table} "
        f"(version INTEGER PRIMARY KEY, applied_at {store.dialect.timestamp_type})"
    )
    current = _schema_version(store, cur, migrations_table)
    for number in range(current + 1, len(MIGRATIONS) + 1):
        for statement in MIGRATIONS[number - 1]:
            cur.execute(
                statement.format(
                    s=store.sessions_table, e=store.events_table, ts=store.dialect.timestamp_type
                )
            )
        cur.execute(store._q(f"INSERT INTO {migrations_table} (version) VALUES (?)"), (number,))
    return len(MIGRATIONS)


def check_schema(store: SqlStore, cur: Cursor, migrations_table: str) -> int:
    """For a store opened read-only: the schema must be the current one, since it cannot be
    migrated; StoreError otherwise."""
    current = _schema_version(store, cur, migrations_table)
    if current < len(MIGRATIONS):
        raise StoreError(
            f"{store!r} is read-only and has schema version {current}, older than this "
            f"contextwarden's {len(MIGRATIONS)}; open it once with write access to migrate it"
        )
    return current


def _schema_version(store: SqlStore, cur: Cursor, migrations_table: str) -> int:
    row = cur.execute(f"SELECT COALESCE(MAX(version), 0) FROM {migrations_table}").fetchone()
    current = int(row[0])
    if current > len(MIGRATIONS):
        raise StoreError(
            f"{store!r} has schema version {current}, newer than this contextwarden knows "
            f"({len(MIGRATIONS)}); upgrade contextwarden"
        )
    return current
