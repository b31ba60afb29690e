"""What only one backend does: JSONL torn lines and locking, SQLite WAL and migrations, PostgreSQL
DSN and schema handling."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_stores import added, compaction, drop_schema, turn

from contextwarden.errors import StoreError
from contextwarden.history import ConversationHistory
from contextwarden.log import derive_view
from contextwarden.stores import (
    JsonlStore,
    PostgresStore,
    SqliteStore,
    StoreWarning,
    open_store,
)
from contextwarden.stores.codec import SCHEMA_VERSION


# ----------------------------------------------------------------------------- JSONL
def test_jsonl_torn_last_line_is_reported_ignored_and_sealed(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    store.append("s", [*turn("t0"), *turn("t1")])
    path = store.path("s")
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) - 25])  # the last event lost its end, as after a kill
    with pytest.warns(StoreWarning, match=r"line 4: incomplete event"):
        loaded = store.load("s")
    assert list(loaded.messages) == added([*turn("t0"), *turn("t1")])[:3]
    assert loaded.source is not None and loaded.source.issues[0].line == 4
    fresh = JsonlStore(tmp_path)  # as in a new process: no cached state
    assert fresh.version("s") == 3
    fresh.append("s", [turn("t1")[1]], expected_version=3)  # the reply that was cut off
    fresh.append("s", turn("t2"))
    with pytest.warns(StoreWarning, match="line 4"):  # still reported, never rewritten
        log = fresh.log("s")
    assert added(log) == added([*turn("t0"), *turn("t1"), *turn("t2")])
    assert path.read_bytes().startswith(whole[: len(whole) - 25] + b"\n")


def test_jsonl_complete_last_event_without_newline_counts(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    store.append("s", turn("t0"))
    path = store.path("s")
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert JsonlStore(tmp_path).version("s") == 2
    JsonlStore(tmp_path).append("s", turn("t1"), expected_version=2)
    assert added(store.log("s")) == added([*turn("t0"), *turn("t1")])


def test_jsonl_refuses_events_from_a_newer_schema(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    store.append("s", turn("t0"))
    with store.path("s").open("a") as fh:
        fh.write(f'{{"v": {SCHEMA_VERSION + 1}, "type": "hologram"}}\n')
    with pytest.raises(StoreError, match=r"s.jsonl: line 3: written with schema version"):
        store.log("s")


def test_jsonl_sees_appends_and_deletes_of_other_store_objects(tmp_path: Path) -> None:
    mine, theirs = JsonlStore(tmp_path), JsonlStore(tmp_path)
    mine.append("s", turn("t0"))
    theirs.append("s", turn("t1"), expected_version=2)
    with pytest.raises(StoreError, match="consecutive 'user'"):
        mine.append("s", [turn("t2")[0], turn("t2")[0]])  # checked against their append too
    theirs.delete("s")
    mine.append("s", turn("new"), expected_version=0)
    assert added(theirs.log("s")) == added(turn("new"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


# ----------------------------------------------------------------------------- SQLite
def test_sqlite_uses_wal_and_numbered_migrations(tmp_path: Path) -> None:
    path = tmp_path / "db" / "sessions.db"
    SqliteStore(path).append("s", turn("t0"))
    SqliteStore(path).append("s", turn("t1"))  # opening again does not migrate again
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT version FROM schema_migrations").fetchall() == [(1,)]
        rows = conn.execute("SELECT seq, kind FROM events ORDER BY seq").fetchall()
        assert rows == [(1, "message"), (2, "message"), (3, "message"), (4, "message")]
        assert conn.execute("SELECT version FROM sessions WHERE id = 's'").fetchone() == (4,)


def test_sqlite_refuses_a_database_from_a_newer_contextwarden(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    SqliteStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_migrations (version) VALUES (99)")
    with pytest.raises(StoreError, match="schema version 99, newer"):
        SqliteStore(path)


def test_sqlite_rejects_in_memory_databases() -> None:
    with pytest.raises(StoreError, match="needs a database file"):
        SqliteStore(":memory:")


def test_sqlite_cold_start_reads_only_from_the_last_boundary(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SqliteStore(path)
    for i in range(3):
        store.append("s", turn(f"t{i}"))
    store.append("s", [compaction(derive_view(store.log("s")), "c")])
    store.append("s", turn("t3"))
    with sqlite3.connect(path) as conn:  # damage an event before the boundary
        conn.execute("UPDATE events SET body = 'garbage' WHERE seq = 1")
    fresh = SqliteStore(path)
    fresh.append("s", turn("t4"), expected_version=9)  # never needed event 1
    with pytest.raises(StoreError, match=r"sessions.db#s event 1: not valid JSON"):
        fresh.log("s")


# ----------------------------------------------------------------------------- PostgreSQL
@pytest.fixture
def schema(postgres_dsn: str) -> Iterator[str]:
    name = f"cw_test_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    yield name
    drop_schema(postgres_dsn, name)


def test_postgres_dsn_from_the_environment(
    postgres_dsn: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTEXTWARDEN_DSN", postgres_dsn)
    with PostgresStore(schema=schema) as store:
        ConversationHistory.open(store, "s").add_user_message("hello")
    with open_store(postgres_dsn, schema=schema) as same:
        assert isinstance(same, PostgresStore) and same.list_sessions() == ["s"]
    with PostgresStore(schema=schema) as store:
        assert store.load("s").messages[0].text == "hello"
        assert repr(store).startswith("PostgresStore('postgres@127.0.0.1:5432/test'")


def test_postgres_errors_name_the_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONTEXTWARDEN_DSN", raising=False)
    with pytest.raises(StoreError, match=r"pass dsn= or set \$CONTEXTWARDEN_DSN"):
        PostgresStore()
    with pytest.raises(StoreError, match="schema name"):
        PostgresStore("postgresql://x@127.0.0.1/test", schema='x"; DROP TABLE y; --')
    unreachable = r"cannot connect to PostgreSQL at nobody@127\.0\.0\.1:9/none"  # no password
    with pytest.raises(StoreError, match=unreachable):
        PostgresStore("postgresql://nobody:secret@127.0.0.1:9/none", timeout=0.5)


def test_open_store_picks_the_backend(tmp_path: Path) -> None:
    assert isinstance(open_store(tmp_path), JsonlStore)
    sqlite_store = open_store(tmp_path / "sessions.db")
    assert isinstance(sqlite_store, SqliteStore)
    sqlite_store.close()
