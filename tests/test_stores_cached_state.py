"""A SQL store checks an append against the state it cached when it last wrote, and skips reading
the session row; these tests change the session behind its back (another store object on the same
database, as another process would) and check that nothing gets through that the stored state
refuses, and nothing is written against a stale state."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextwarden.errors import StoreError
from contextwarden.log import MessageAdded, MetadataSet, Preamble
from contextwarden.model import Message
from contextwarden.rules import validate
from contextwarden.stores import SqliteStore, StoreConflictError


def _stores(tmp_path: Path) -> tuple[SqliteStore, SqliteStore]:
    return SqliteStore(tmp_path / "s.db"), SqliteStore(tmp_path / "s.db")


def test_a_stale_cache_does_not_let_a_refused_message_through(tmp_path: Path) -> None:
    ours, theirs = _stores(tmp_path)
    ours.append("s", [Preamble(None), MessageAdded(Message.user("hi"))])
    ours.append("s", [MessageAdded(Message.assistant("hello"))])  # cached: ends with assistant
    theirs.append("s", [MessageAdded(Message.user("next"))])  # stored: ends with user
    with pytest.raises(StoreError, match="would break an API rule"):
        ours.append("s", [MessageAdded(Message.user("again"))])
    assert [m.text for m in ours.load("s").messages] == ["hi", "hello", "next"]


def test_a_stale_cache_sees_the_other_writers_version(tmp_path: Path) -> None:
    ours, theirs = _stores(tmp_path)
    ours.append("s", [Preamble(None), MessageAdded(Message.user("hi"))])
    theirs.append("s", [MessageAdded(Message.assistant("hello"))], expected_version=2)
    with pytest.raises(StoreConflictError) as caught:
        ours.append("s", [MessageAdded(Message.assistant("late"))], expected_version=2)
    assert caught.value.actual == 3
    assert ours.append("s", [MessageAdded(Message.user("go on"))], expected_version=3) == 4
    messages = theirs.load("s").messages
    assert [m.text for m in messages] == ["hi", "hello", "go on"] and not validate(messages)


def test_a_session_deleted_and_recreated_elsewhere_is_not_written_as_the_old_one(
    tmp_path: Path,
) -> None:
    ours, theirs = _stores(tmp_path)
    ours.append("s", [Preamble(None), MessageAdded(Message.user("old"))])
    ours.append("s", [MessageAdded(Message.assistant("old reply"))])  # cached: version 3
    theirs.delete("s")
    recreated = [Preamble(None), MessageAdded(Message.user("new")), MetadataSet("k", 1)]
    assert theirs.append("s", recreated) == 3  # the same version, another session
    with pytest.raises(StoreError, match="would break an API rule"):
        ours.append("s", [MessageAdded(Message.user("more"))], expected_version=3)
    assert ours.append("s", [MessageAdded(Message.assistant("reply"))], expected_version=3) == 4
    assert [m.text for m in theirs.load("s").messages] == ["new", "reply"]
