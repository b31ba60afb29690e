"""A SQL store writes a compaction's view as references to the messages its log already holds, so
a session that compacts on every request grows with what is new, not with its view each time; what
is read back is exactly what was appended, from a whole log, a cold start or an old store."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_stores import StoreSpec, make_spec

from contextwarden.errors import StoreError
from contextwarden.log import CompactionBoundary, LogEntry, MessageAdded, Preamble, derive_view
from contextwarden.model import Message, MessageMeta, TextBlock
from contextwarden.stores import SessionStore, SqliteStore
from contextwarden.stores.codec import encode

TURNS = 30
RESULT = "tool output line\n" * 200


@pytest.fixture(params=["sqlite", "postgres"])
def sql_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    yield from make_spec(request, tmp_path)


def _run(store: SessionStore, turns: int = TURNS) -> list[LogEntry]:
    """A session that compacts after every turn, changing one small message: the latest answer
    is trimmed; every long question stays in the view."""
    appended: list[LogEntry] = [Preamble("system")]
    store.append("s", appended)
    for n in range(turns):
        turn = [
            MessageAdded(Message.user(f"question {n}: {RESULT}")),
            MessageAdded(Message.assistant(f"answer {n}")),
        ]
        view = derive_view([*appended, *turn])
        view[-1] = Message.assistant(f"answer {n} [trimmed]")
        boundary = CompactionBoundary("budget", "budget", 1, 1, 1, tuple(view))
        store.append("s", [*turn, boundary])
        appended += [*turn, boundary]
    return appended


def test_compacting_every_request_stores_each_message_once(sql_spec: StoreSpec) -> None:
    store = sql_spec.open()
    appended = _run(store)
    assert store.log("s") == appended
    assert store.load("s").messages == tuple(derive_view(appended))
    whole = sum(len(encode(e)) for e in appended)  # every view written whole, as before
    stored = _stored_bytes(sql_spec)
    store.close()
    new_text = TURNS * (len(RESULT) + 100)
    assert stored < 1.5 * new_text and whole > 10 * stored, (stored, new_text, whole)


def _stored_bytes(spec: StoreSpec) -> int:
    query = "SELECT sum(length(body)) FROM events"
    if spec.kind == "sqlite":
        with sqlite3.connect(spec.location) as conn:
            return int(conn.execute(query).fetchone()[0])
    import psycopg

    with psycopg.connect(spec.location) as conn:
        row = conn.execute(query.replace("events", f'"{spec.schema}".events')).fetchone()
        assert row is not None
        return int(row[0])


def test_a_cold_start_resolves_references_to_before_the_last_boundary(tmp_path: Path) -> None:
    appended = _run(SqliteStore(tmp_path / "s.db"), turns=5)
    fresh = SqliteStore(tmp_path / "s.db")  # another process: no cached state
    question = MessageAdded(Message.user("one more"))
    assert fresh.append("s", [question], expected_version=len(appended)) == len(appended) + 1
    assert fresh.load("s").messages == (*derive_view(appended), question.message)


def test_a_store_written_with_whole_views_still_loads(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    appended = _run(store, turns=4)
    with sqlite3.connect(store.path) as conn:  # rewrite every event as before references
        for seq, entry in enumerate(appended, 1):
            conn.execute("UPDATE events SET body = ? WHERE seq = ?", (encode(entry), seq))
        bodies = [json.loads(b) for (b,) in conn.execute("SELECT body FROM events")]
    assert {b["v"] for b in bodies} == {1}
    assert SqliteStore(tmp_path / "s.db").log("s") == appended


def test_a_reference_to_nothing_is_a_store_error(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    _run(store, turns=2)
    with sqlite3.connect(store.path) as conn:
        conn.execute("DELETE FROM events WHERE seq = 2")
    with pytest.raises(StoreError, match=r"s\.db#s: a compaction refers to event 2"):
        SqliteStore(tmp_path / "s.db").log("s")


def test_a_reference_keeps_the_message_meta(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    first, second = (
        Message("user", (TextBlock("ok"),), MessageMeta(timestamp=t, id=f"m{t}")) for t in (1, 2)
    )
    added = [
        MessageAdded(first),
        MessageAdded(Message.assistant("a")),
        MessageAdded(second),
    ]
    view = tuple(e.message for e in added)
    store.append("s", [Preamble(None), *added, CompactionBoundary("x", "x", 1, 1, 0, view)])
    (boundary,) = [
        e for e in SqliteStore(tmp_path / "s.db").log("s") if isinstance(e, CompactionBoundary)
    ]
    assert [m.meta for m in boundary.view] == [m.meta for m in view]  # equal messages, own metas
