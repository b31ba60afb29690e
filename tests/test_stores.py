"""The session-store behaviour suite, run against JSONL, SQLite and PostgreSQL alike.

PostgreSQL tests use the server of the ``postgres_dsn`` fixture, each in a schema of its own that
is dropped afterwards (they skip without a server, and fail in CI).
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import pytest
from conftest import FIXTURE_TRANSCRIPTS, session_params

from contextwarden.errors import StoreError
from contextwarden.formats import load as load_transcript
from contextwarden.history import ConversationHistory
from contextwarden.log import (
    CompactionBoundary,
    LogEntry,
    MessageAdded,
    MetadataSet,
    UsageRecorded,
    derive_view,
)
from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.rules import validate
from contextwarden.stores import (
    JsonlStore,
    PostgresStore,
    SessionStore,
    SqliteStore,
    StoreConflictError,
)
from contextwarden.stores.backend import StoreBase

KINDS = ("jsonl", "sqlite", "postgres")


# ----------------------------------------------------------------------------- stores under test
@dataclass(frozen=True)
class StoreSpec:
    """How to open the store under test; serialisable, so worker processes open the same one."""

    kind: str
    location: str
    schema: str = ""

    def open(self) -> SessionStore:
        if self.kind == "jsonl":
            return JsonlStore(self.location)
        if self.kind == "sqlite":
            return SqliteStore(self.location)
        return PostgresStore(self.location, schema=self.schema)

    def to_json(self) -> str:
        return json.dumps([self.kind, self.location, self.schema])

    @classmethod
    def from_json(cls, text: str) -> StoreSpec:
        kind, location, schema = json.loads(text)
        return cls(kind, location, schema)


def drop_schema(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def make_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    """The body of a ``spec`` fixture parametrized over KINDS (other modules reuse it)."""
    kind = request.param
    if kind == "postgres":
        dsn = request.getfixturevalue("postgres_dsn")
        schema = f"cw_test_{os.getpid()}_{uuid.uuid4().hex[:10]}"
        yield StoreSpec(kind, dsn, schema)
        drop_schema(dsn, schema)
    elif kind == "sqlite":
        yield StoreSpec(kind, str(tmp_path / "sessions.db"))
    else:
        yield StoreSpec(kind, str(tmp_path / "sessions"))


@pytest.fixture(params=KINDS)
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    yield from make_spec(request, tmp_path)


@pytest.fixture
def store(spec: StoreSpec) -> Iterator[SessionStore]:
    opened = spec.open()
    yield opened
    opened.close()


# ----------------------------------------------------------------------------- helpers
@cache
def transcript(path: Path) -> ConversationHistory:
    return load_transcript(path)


def turn(text: str) -> list[LogEntry]:
    return [MessageAdded(Message.user(f"{text} q")), MessageAdded(Message.assistant(f"{text} a"))]


def compaction(view: Sequence[Message], label: str, keep: int = 3) -> CompactionBoundary:
    """A valid boundary: a summary user message plus the last ``keep`` messages (from a reply)."""
    kept = tuple(view[-keep:])
    assert kept[0].role == "assistant", "keep must start at an assistant message"
    new_view = (Message.user(f"summary {label}"), *kept)
    return CompactionBoundary(
        strategy="test-summary",
        trigger="auto",
        tokens_before=len(view) * 10,
        tokens_after=len(new_view) * 10,
        replaced=len(view),
        view=new_view,
        summary=f"summary {label}",
        details={"label": label},
    )


def added(entries: Sequence[LogEntry]) -> list[Message]:
    return [e.message for e in entries if isinstance(e, MessageAdded)]


def assert_same(loaded: ConversationHistory, original: ConversationHistory) -> None:
    assert list(loaded.messages) == list(original.messages)
    assert [m.meta for m in loaded.messages] == [m.meta for m in original.messages]
    assert loaded.log == original.log
    assert [m.meta for m in added(loaded.log)] == [m.meta for m in added(original.log)]
    assert loaded.to_anthropic() == original.to_anthropic()
    assert loaded.estimate_tokens() == original.estimate_tokens()
    assert loaded.metadata == original.metadata


# ----------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("path", session_params())
def test_every_transcript_round_trips(store: SessionStore, path: Path) -> None:
    original = transcript(path)
    assert store.append("t", original.log, expected_version=0) == len(original.log)
    assert_same(store.load("t", mode="merge"), original)
    assert store.log("t") == list(original.log)
    assert store.version("t") == len(original.log)


@pytest.mark.parametrize("name", ["7662d755ef9f", "0034f597b72d", "sqlfluff-1733"])
def test_transcript_appended_event_by_event(store: SessionStore, name: str) -> None:
    """One append per event, each with the version the writer saw: every check passes."""
    original = transcript(next(p for p in FIXTURE_TRANSCRIPTS if name in p.name))
    for version, entry in enumerate(original.log):
        assert store.append("t", [entry], expected_version=version) == version + 1
    assert_same(store.load("t", mode="merge"), original)


def test_write_through_resumes_same_view_tokens_and_breaker(store: SessionStore) -> None:
    tools = [{"name": "Read", "description": "read a file", "input_schema": {"type": "object"}}]
    h = ConversationHistory.open(store, "s-1", system="You are careful.", tools=tools)
    h.add_user_message("read the config")
    use = ToolUseBlock("toolu_1", "Read", {"path": "cfg.toml"})
    h.add_assistant_message(Message.assistant([use]))
    h.add_tool_results([ToolResultBlock("toolu_1", "x = 1")], text="and explain it")
    h.record_usage({"input_tokens": 900, "cache_read_input_tokens": 100, "output_tokens": 7})
    h.add_assistant_message({"role": "assistant", "content": "x is one", "id": "msg_1"})
    h.set_metadata("circuit_breaker", {"consecutive_failures": 2, "open": False})
    resumed = ConversationHistory.open(store, "s-1")
    assert_same(resumed, h)
    assert resumed.system == "You are careful." and resumed.tools == tools
    assert resumed.metadata["circuit_breaker"] == {"consecutive_failures": 2, "open": False}
    assert resumed.estimate_tokens() > 1000  # anchored on the usage, not re-estimated
    resumed.add_user_message("thanks")
    assert added(store.log("s-1"))[-1] == Message.user("thanks")


def test_open_records_a_changed_system_prompt(store: SessionStore) -> None:
    ConversationHistory.open(store, "s", system="v1").add_user_message("hi")
    again = ConversationHistory.open(store, "s", system="v1")
    assert store.version("s") == 2  # same prompt: nothing new recorded
    changed = ConversationHistory.open(store, "s", system="v2")
    assert changed.system == "v2"
    assert store.load("s").system == "v2" and again.system == "v1"
    assert store.version("s") == 3


def test_full_log_after_several_compactions_holds_every_message(store: SessionStore) -> None:
    h = ConversationHistory.open(store, "long")
    said: list[Message] = []
    for i in range(30):
        for entry in turn(f"t{i}"):
            assert isinstance(entry, MessageAdded)
            h.add(entry.message)
            said.append(entry.message)
        if i % 10 == 9:
            h._replace_view(compaction(h.messages, f"c{i}"))
    log = store.log("long")
    assert added(log) == said
    assert sum(isinstance(e, CompactionBoundary) for e in log) == 3
    loaded = store.load("long")
    assert list(loaded.messages) == list(h.messages) == derive_view(log)
    assert loaded.messages[0] == Message.user("summary c29")
    assert loaded.estimate_tokens() == h.estimate_tokens()


# ----------------------------------------------------------------------------- undo
def test_undo_restores_the_view_before_each_compaction(store: SessionStore) -> None:
    for i in range(4):
        store.append("u", turn(f"t{i}"))
    before_first = derive_view(store.log("u"))
    store.append("u", [compaction(before_first, "one")])
    store.append("u", turn("t4"))
    before_second = derive_view(store.log("u"))
    store.append("u", [compaction(before_second, "two")])
    store.append("u", turn("t5"))

    undo = store.undo_compaction("u")
    assert undo.strategy == "undo" and undo.details["undoes"] == 12
    assert list(store.load("u").messages) == [*before_second, *added(turn("t5"))]
    store.undo_compaction("u")
    expected = [*before_first, *added(turn("t4")), *added(turn("t5"))]
    assert list(store.load("u").messages) == expected
    assert not validate(expected)
    with pytest.raises(StoreError, match="no compaction to undo"):
        store.undo_compaction("u")
    assert added(store.log("u")) == [m for i in range(6) for m in added(turn(f"t{i}"))]


def test_undo_makes_a_bound_history_stale(store: SessionStore) -> None:
    h = ConversationHistory.open(store, "u")
    for i in range(3):
        for entry in turn(f"t{i}"):
            assert isinstance(entry, MessageAdded)
            h.add(entry.message)
    h._replace_view(compaction(h.messages, "c"))
    store.undo_compaction("u")
    with pytest.raises(StoreConflictError):
        h.add_user_message("late")
    assert len(ConversationHistory.open(store, "u").messages) == 6


# ----------------------------------------------------------------------------- concurrency rules
def test_two_compactions_of_the_same_version_give_exactly_one(store: SessionStore) -> None:
    for i in range(4):
        store.append("c", turn(f"t{i}"))
    first = ConversationHistory.open(store, "c")
    second = ConversationHistory.open(store, "c")
    first._replace_view(compaction(first.messages, "first"))
    with pytest.raises(StoreConflictError) as info:
        second._replace_view(compaction(second.messages, "second"))
    assert info.value.expected == 8 and info.value.actual == 9
    log = store.log("c")
    assert [e.details["label"] for e in log if isinstance(e, CompactionBoundary)] == ["first"]
    with pytest.raises(StoreError, match="out of sync"):
        second.add_user_message("after the conflict")
    assert store.version("c") == 9


def test_append_with_a_stale_version_is_refused(store: SessionStore) -> None:
    store.append("c", turn("t0"))
    store.append("c", turn("t1"), expected_version=2)
    with pytest.raises(StoreConflictError):
        store.append("c", turn("t2"), expected_version=2)
    with pytest.raises(StoreConflictError):
        store.append("new", turn("t0"), expected_version=3)
    assert store.version("c") == 4 and store.version("new") == 0
    assert "new" not in store.list_sessions()


# ----------------------------------------------------------------------------- bad input
BAD_IDS = ["", "a/b", "../escape", "..", "a\x00b", "x" * 129, "a\\b", ".hidden", "-rf", "a b"]


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_bad_session_ids_are_rejected_before_any_access(
    store: SessionStore, spec: StoreSpec, tmp_path: Path, bad: str
) -> None:
    before = sorted(tmp_path.rglob("*"))
    calls = [
        lambda: store.append(bad, turn("t")),
        lambda: store.load(bad),
        lambda: store.log(bad),
        lambda: store.version(bad),
        lambda: store.delete(bad),
        lambda: store.undo_compaction(bad),
        lambda: ConversationHistory.open(store, bad),
    ]
    for call in calls:
        with pytest.raises(StoreError, match="session id"):
            call()
    assert sorted(tmp_path.rglob("*")) == before
    assert store.list_sessions() == []


def test_a_batch_that_breaks_a_rule_writes_nothing(store: SessionStore) -> None:
    store.append("v", turn("t0"))
    orphan = Message("user", (ToolResultBlock("toolu_nobody", "result"),))
    turn_view = added([*turn("t0"), *turn("t1")])
    bad_batches: list[list[LogEntry]] = [
        [*turn("t1"), MessageAdded(orphan)],
        [MessageAdded(Message.assistant("two replies in a row"))],
        [*turn("t1"), replace(compaction(turn_view, "x"), view=(Message.assistant("first"),))],
        [*turn("t1"), MetadataSet("not json", {1, 2})],
        [*turn("t1"), UsageRecorded(5, {"bad": float("nan")})],  # type: ignore[arg-type]
        [*turn("t1"), "not an event"],  # type: ignore[list-item]
    ]
    for batch in bad_batches:
        with pytest.raises(StoreError):
            store.append("v", batch)
    written = r"event 2 .*tool_pairing\] message 4.*nothing was written"
    with pytest.raises(StoreError, match=written):
        store.append("v", bad_batches[0])
    assert store.version("v") == 2 and added(store.log("v")) == added(turn("t0"))
    with pytest.raises(StoreError, match="role_alternation"):
        store.append("fresh", [MessageAdded(Message.assistant("reply first"))])
    assert store.list_sessions() == ["v"]


def test_a_forgotten_session_is_checked_against_what_is_stored(store: SessionStore) -> None:
    assert isinstance(store, StoreBase)
    store.append("v", turn("t0"))
    store.forget("v")  # what the proxy does when a session leaves its memory
    assert "v" not in store._states
    with pytest.raises(StoreError, match="role_alternation"):
        store.append("v", [MessageAdded(Message.assistant("two replies in a row"))])
    store.forget("v")
    assert store.append("v", turn("t1"), expected_version=2) == 4
    assert added(store.log("v")) == added([*turn("t0"), *turn("t1")])


def test_list_delete_and_missing_sessions(store: SessionStore) -> None:
    assert store.list_sessions() == []
    for name in ("b", "a", "c.1"):
        store.append(name, turn(name))
    assert store.list_sessions() == ["a", "b", "c.1"]
    assert store.delete("b") is True and store.delete("b") is False
    assert store.list_sessions() == ["a", "c.1"]
    assert store.log("b") == [] and store.version("b") == 0
    with pytest.raises(StoreError, match="no session 'b'"):
        store.load("b")
    store.append("b", turn("again"), expected_version=0)  # re-created from scratch
    assert added(store.log("b")) == added(turn("again"))


def test_threads_share_one_store_object(store: SessionStore) -> None:
    """Per-thread connections (SQLite), the pool (PostgreSQL), flock (JSONL): nothing lost."""

    def work(worker: int) -> None:
        for i in range(15):
            store.append("shared", turn(f"w{worker} t{i}"))
            store.append(f"own-{worker}", turn(f"t{i}"), expected_version=2 * i)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    texts = Counter(m.text for m in added(store.log("shared")))
    assert texts == Counter(f"w{w} t{i} {s}" for w in range(4) for i in range(15) for s in "qa")
    assert all(store.version(f"own-{w}") == 30 for w in range(4))
    assert not validate(store.load("shared").messages)


def test_manager_compactions_are_written_through_and_undoable(store: SessionStore) -> None:
    from contextwarden.manager import ContextManager
    from contextwarden.policy import ContextPolicy

    small = ContextPolicy(context_window=12_000, max_output_reserve=1_000, autocompact_buffer=1_000)
    manager = ContextManager(policy=small)
    h = ConversationHistory.open(store, "managed")
    said: list[Message] = []
    for i in range(40):
        said.append(h.add_user_message(f"question {i} " + "lorem ipsum dolor " * 40))
        said.append(h.add_assistant_message(Message.assistant(f"answer {i} " + "sit amet " * 60)))
        manager.prepare(h)
    log = store.log("managed")
    assert any(isinstance(e, CompactionBoundary) for e in log)
    assert added(log) == said  # the view was compacted; the log kept every message
    resumed = store.load("managed")
    assert list(resumed.messages) == list(h.messages) and len(h.messages) < 80
    assert resumed.estimate_tokens() == h.estimate_tokens()
    store.undo_compaction("managed")
    assert len(store.load("managed").messages) > len(h.messages)
