"""Stores under hostile conditions: read-only files and directories, a symlink planted in a JSONL
store, a row edited on disk into a message that breaks the rules. Every failure is a StoreError.

Permission tests run the store as an unprivileged user (``nobody``) in a forked child when the
suite runs as root, since root ignores file modes.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_stores import KINDS, StoreSpec, make_spec

from contextwarden.errors import StoreError
from contextwarden.history import ConversationHistory
from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.stores import JsonlStore, SqliteStore
from contextwarden.wire.anthropic import message_to_wire

NOBODY = 65534


def unprivileged(fn: Callable[[], Any]) -> str:
    """``repr`` of what ``fn`` returns, or ``"<ErrorClass>: <message>"``, run without root."""

    def run(queue: Any) -> None:
        if os.geteuid() == 0:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
        try:
            queue.put(repr(fn()))
        except Exception as exc:
            queue.put(f"{type(exc).__name__}: {exc}")

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=run, args=(queue,))
    child.start()
    outcome: str = queue.get(timeout=60)
    child.join()
    return outcome


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory the unprivileged user can enter (pytest's own tmp_path is root-only)."""
    path = Path(tempfile.mkdtemp(prefix="cw-hostile-"))
    path.chmod(0o755)
    yield path
    for child in sorted(path.rglob("*"), reverse=True):
        if child.is_dir() and not child.is_symlink():
            child.chmod(0o755)
    import shutil

    shutil.rmtree(path)


def conversation() -> list[Message]:
    return [
        Message.user("go"),
        Message.assistant([ToolUseBlock("t1", "Read", {"file_path": "a.py"})]),
        Message("user", (ToolResultBlock("t1", "print('a')"),)),
        Message.assistant("done"),
    ]


def saved(store: Any, session_id: str = "s1") -> ConversationHistory:
    history = ConversationHistory.open(store, session_id)
    for message in conversation():
        history.add(message)
    return history


def read_only(*paths: Path) -> None:
    for path in paths:
        path.chmod(0o555 if path.is_dir() else 0o444)


# ----------------------------------------------------------------------------- read-only
def test_jsonl_store_in_a_read_only_directory_reads_and_refuses_writes(shared_dir: Path) -> None:
    directory = shared_dir / "sessions"
    saved(JsonlStore(directory))
    read_only(directory, *directory.iterdir())
    assert unprivileged(lambda: JsonlStore(directory).load("s1").messages[-1].text) == "'done'"
    assert unprivileged(lambda: JsonlStore(directory).list_sessions()) == "['s1']"
    refused = unprivileged(lambda: saved(JsonlStore(directory), "s2"))
    assert refused.startswith("StoreError: ") and "permission denied" in refused
    appended = unprivileged(lambda: saved(JsonlStore(directory), "s1"))
    assert appended.startswith("StoreError: ")
    deleted = unprivileged(lambda: JsonlStore(directory).delete("s1"))
    assert deleted.startswith("StoreError: ")
    assert (directory / "s1.jsonl").exists()


def test_jsonl_session_in_a_read_only_directory_is_not_deleted(shared_dir: Path) -> None:
    """The file may be writable while its directory is not: unlink fails, as StoreError."""
    directory = shared_dir / "sessions"
    saved(JsonlStore(directory))
    (directory / "s1.jsonl").chmod(0o666)
    read_only(directory)
    outcome = unprivileged(lambda: JsonlStore(directory).delete("s1"))
    assert outcome.startswith("StoreError: cannot delete")
    assert JsonlStore(directory).load("s1").messages[-1].text == "done"


def test_jsonl_store_that_cannot_create_its_directory_raises_store_error(
    shared_dir: Path,
) -> None:
    read_only(shared_dir)
    outcome = unprivileged(lambda: saved(JsonlStore(shared_dir / "a" / "b")))
    assert outcome.startswith("StoreError: cannot create the store directory")


def test_an_existing_read_only_sqlite_file_opens_for_reading(shared_dir: Path) -> None:
    path = shared_dir / "sessions.db"
    store = SqliteStore(path)
    saved(store)
    store.close()
    read_only(path)
    assert unprivileged(lambda: SqliteStore(path).read_only) == "True"
    assert unprivileged(lambda: SqliteStore(path).load("s1").messages[-1].text) == "'done'"
    assert unprivileged(lambda: SqliteStore(path).list_sessions()) == "['s1']"
    refused = unprivileged(lambda: saved(SqliteStore(path), "s2"))
    assert refused.startswith("StoreError: ") and "read-only" in refused


def test_sqlite_read_only_on_request_refuses_every_write(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    saved(SqliteStore(path))
    store = SqliteStore(path, read_only=True)
    assert store.load("s1").messages[-1].text == "done"
    with pytest.raises(StoreError, match="read-only"):
        store.append("s1", ConversationHistory().log)
    with pytest.raises(StoreError, match="read-only"):
        store.delete("s1")


# ----------------------------------------------------------------------------- symlinks
def test_a_symlink_planted_in_a_jsonl_store_is_never_followed(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    store = JsonlStore(directory)
    saved(store, "real")
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes((directory / "real.jsonl").read_bytes())
    before = outside.read_bytes()
    (directory / "planted.jsonl").symlink_to(outside)
    (directory / "dangling.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    fresh = JsonlStore(directory)
    for session in ("planted", "dangling"):
        with pytest.raises(StoreError, match="symbolic link"):
            fresh.append(session, ConversationHistory().log)
        with pytest.raises(StoreError, match="symbolic link"):
            fresh.load(session)
    assert outside.read_bytes() == before
    assert not (tmp_path / "nowhere.jsonl").exists()
    assert fresh.list_sessions() == ["real"]


# ----------------------------------------------------------------------------- edited rows
@pytest.fixture(params=KINDS)
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    yield from make_spec(request, tmp_path)


def rewrite_event(spec: StoreSpec, session_id: str, seq: int, body: dict[str, Any]) -> None:
    """Replace stored event ``seq`` (1-based) with ``body``, as someone editing the file or
    row by hand would."""
    text = json.dumps(body)
    if spec.kind == "jsonl":
        path = Path(spec.location) / f"{session_id}.jsonl"
        lines = path.read_text().splitlines()
        lines[seq - 1] = text
        path.write_text("\n".join(lines) + "\n")
        return
    if spec.kind == "sqlite":
        import sqlite3

        with sqlite3.connect(spec.location) as conn:
            query = "UPDATE events SET body = ? WHERE session_id = ? AND seq = ?"
            conn.execute(query, (text, session_id, seq))
        return
    import psycopg

    with psycopg.connect(spec.location, autocommit=True) as conn:
        query = f'UPDATE "{spec.schema}".events SET body = %s WHERE session_id = %s AND seq = %s'
        conn.execute(query, (text, session_id, seq))


def test_a_row_edited_into_a_message_that_breaks_the_rules_does_not_load(
    spec: StoreSpec,
) -> None:
    store = spec.open()
    saved(store)
    store.close()
    # Event 3 is the tool call (after the preamble and the prompt); it becomes plain text, so
    # the result that answered it (message 2) answers nothing.
    edited = {"v": 1, "type": "message", "message": message_to_wire(Message.assistant("hm"))}
    rewrite_event(spec, "s1", 3, edited)
    reopened = spec.open()
    try:
        with pytest.raises(StoreError, match=r"session 's1'.*at message 2") as caught:
            reopened.load("s1")
        assert "tool_result 't1' answers no tool_use" in str(caught.value)
        with pytest.raises(StoreError, match=r"session 's1'.*at message 2"):
            ConversationHistory.open(reopened, "s1")
    finally:
        reopened.close()
