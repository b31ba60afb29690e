"""PostgresStore: sessions shared by many workers on many machines (psycopg 3 + a pool).

Same schema as SQLite, inside its own PostgreSQL schema. An append locks its session's row
(``SELECT … FOR UPDATE``) and checks the version in the same transaction, so of two workers
compacting the same session at once exactly one succeeds and the other gets StoreConflictError.
psycopg is imported only when a PostgresStore is made (extra ``postgres``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from contextwarden.errors import StoreError, require
from contextwarden.rules import DEFAULT_RULES, Rule
from contextwarden.stores.base import validate_session_id
from contextwarden.stores.sqlbase import Cursor, Dialect, SqlStore, apply_migrations

if TYPE_CHECKING:
    from types import ModuleType

DSN_ENV = "CONTEXTWARDEN_DSN"
"""Environment variable read for the DSN when none is passed."""
DEFAULT_SCHEMA = "contextwarden"
POOL_MIN_SIZE = 1
"""Connections the pool keeps open when idle."""
POOL_MAX_SIZE = 10
"""Most connections one store opens; appends beyond that wait for a free one."""
CONNECT_TIMEOUT = 10.0
"""Seconds to wait for the first connection (and for a free pooled one) before StoreError."""

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


class PostgresStore(SqlStore):
    """Sessions in a PostgreSQL schema; DSN from ``dsn`` or ``$CONTEXTWARDEN_DSN``."""

    format_name = "contextwarden-postgres"
    dialect = Dialect(
        timestamp_type="TIMESTAMPTZ NOT NULL DEFAULT now()",
        now="now()",
        lock_for_update=" FOR UPDATE",
        placeholder="%s",
    )

    def __init__(
        self,
        dsn: str | None = None,
        *,
        schema: str = DEFAULT_SCHEMA,
        min_size: int = POOL_MIN_SIZE,
        max_size: int = POOL_MAX_SIZE,
        timeout: float = CONNECT_TIMEOUT,
        rules: Iterable[Rule] = DEFAULT_RULES,
        create: bool = True,
    ) -> None:
        """``create=False`` opens only a store that is already there (a StoreError otherwise),
        so reading one never adds a schema to someone else's database."""
        super().__init__(rules)
        dsn = dsn or os.environ.get(DSN_ENV)
        if not dsn:
            raise StoreError(f"no PostgreSQL DSN: pass dsn= or set ${DSN_ENV}")
        if not _SCHEMA_NAME.fullmatch(schema):
            raise StoreError(
                f"schema name {schema!r} must be lower-case letters, digits and '_' "
                "(at most 63, not starting with a digit)"
            )
        self.schema = schema
        self.sessions_table = f'"{schema}"."sessions"'
        self.events_table = f'"{schema}"."events"'
        self._psycopg = cast("ModuleType", require("psycopg", "postgres"))
        pool_module = cast("Any", require("psycopg_pool", "postgres"))
        self._label = _describe(self._psycopg, dsn)
        self._pool = pool_module.ConnectionPool(
            dsn, min_size=min_size, max_size=max_size, timeout=timeout, open=False
        )
        try:
            self._pool.open(wait=True, timeout=timeout)
        except pool_module.PoolTimeout as exc:
            self._pool.close()
            raise StoreError(
                f"cannot connect to PostgreSQL at {self._label} within {timeout:g} s"
            ) from exc
        try:
            if not create:
                self._require_existing()
            self._migrate()
        except BaseException:
            self._pool.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresStore({self._label!r}, schema={self.schema!r})"

    def _where(self, session_id: str) -> str:
        return f"postgresql://{self._label}/{self.schema}#{session_id}"

    def close(self) -> None:
        self._pool.close()

    def _require_existing(self) -> None:
        with self._read() as cur:
            cur.execute("SELECT to_regclass(%s)", (self.sessions_table,))
            row = cur.fetchone()
        if row is None or row[0] is None:
            raise StoreError(
                f"no contextwarden store in schema {self.schema!r} at {self._label}; "
                "give the schema `contextwarden proxy --schema` wrote to"
            )

    def _migrate(self) -> None:
        with self._write() as cur:
            # Serialise first-time setup between processes starting together.
            cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"cw:{self.schema}",))
            cur.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
            apply_migrations(self, cur, f'"{self.schema}"."schema_migrations"')

    @contextmanager
    def _write(self) -> Iterator[Cursor]:
        # The pooled connection commits when the block succeeds and rolls back when it raises.
        try:
            with self._pool.connection() as conn, conn.cursor() as cur:
                yield cur
        except self._psycopg.Error as exc:
            raise StoreError(f"PostgreSQL error ({self._label}): {exc}") from exc

    _read = _write

    @contextmanager
    def session_lock(self, session_id: str) -> Iterator[object]:
        """A PostgreSQL advisory lock on the session, held on one pooled connection: every
        process sharing the database waits for it; a dead holder's lock dies with its
        connection."""
        key = f"cw:{self.schema}:{validate_session_id(session_id)}"
        try:
            with self._pool.connection() as conn:
                conn.autocommit = True
                conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
                try:
                    yield conn
                finally:
                    conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
                    conn.autocommit = False
        except self._psycopg.Error as exc:
            raise StoreError(f"PostgreSQL error ({self._label}): {exc}") from exc


def _describe(psycopg: ModuleType, dsn: str) -> str:
    """``user@host:port/dbname`` of the DSN, never its password."""
    try:
        parts = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        raise StoreError(f"bad PostgreSQL DSN: {exc}") from exc
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"{user}{parts.get('host', 'localhost')}{port}/{parts.get('dbname', '')}"
