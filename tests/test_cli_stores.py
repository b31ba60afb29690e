"""Session stores are first-class on the command line: a store the proxy wrote and one chat
wrote go through ``inspect`` (which lists their sessions), ``replay --session`` and
``compact --session``; a wrong or missing ``--session`` names the sessions there are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import fixture_path

from contextwarden.formats import load
from contextwarden.manager import ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.proxy.apis import ANTHROPIC
from contextwarden.proxy.sessions import Sessions
from contextwarden.stores import SqliteStore
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.cliruns import run_cli, run_json
from tests.servers import Captured, Reply, openai_completion, openai_stream, serving

CLAUDE = fixture_path("claude-code/entireio__cli__7662d755ef9f-s2-1compact-sonnet.jsonl")
PROXY_WINDOW = 8_000
"""Small enough that the proxy compacts the fixture's session on the way."""


def proxy_store(path: Path) -> Path:
    """The proxy's session handling fed a real session request by request (as an agent behind
    ``contextwarden proxy`` sends them), under two session keys."""
    store = SqliteStore(path)
    sessions = Sessions(
        store, ContextManager(ContextPolicy(context_window=PROXY_WINDOW)), HeuristicCounter()
    )
    wire = load(CLAUDE).to_anthropic()["messages"]
    for key, turns in (("agent-a", wire), ("agent-b", wire[:5])):
        for end in range(1, len(turns) + 1, 2):
            body = {"messages": turns[:end], "system": "you are a coding agent"}
            sessions.manage(ANTHROPIC.conversation(body, key))
    store.close()
    return path


def chat_store(home: Path) -> Path:
    """``contextwarden chat -p`` run twice against a scripted model on 127.0.0.1."""

    def answer(request: Captured) -> Reply:
        asked = request.body["messages"][-1]["content"]
        return openai_stream(openai_completion(f"Scripted answer to: {asked}"))

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    store = home / "chat.db"
    with serving("/v1/chat/completions", answer) as api:
        for task in ("explain the parser", "list the tests"):
            argv = [sys.executable, "-m", "contextwarden", "chat", "--provider", "openai",
                    "--base-url", f"{api.url}/v1", "--store", str(store), "-p", task,
                    "--workspace", str(home)]  # fmt: skip
            done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
            assert done.returncode == 0, done.stderr
    return store


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    home = tmp_path_factory.mktemp("stores")
    chat = chat_store(home)
    (chat_session, _) = sorted(SqliteStore(chat).list_sessions())
    return {"proxy": (proxy_store(home / "proxy.db"), "agent-a"), "chat": (chat, chat_session)}


@pytest.mark.parametrize("kind", ["proxy", "chat"])
def test_inspect_lists_a_stores_sessions_and_shows_one(
    kind: str, stores: dict[str, tuple[Path, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    store, session = stores[kind]
    listing = run_json(capsys, "inspect", str(store))
    assert len(listing["sessions"]) == 2
    row = next(s for s in listing["sessions"] if s["id"] == session)
    assert row["messages"] > 0 and row["tokens"] > 0 and row["first_request"]
    if kind == "chat":
        assert row["date"] is not None and row["first_request"] == "explain the parser"
    code, text, _ = run_cli(capsys, "inspect", str(store))
    assert code == 0 and "session store, 2 session(s)" in text and session in text
    shown = run_json(capsys, "inspect", str(store), "--session", session)
    assert shown["messages"] == row["messages"] and shown["violations"] == []


@pytest.mark.parametrize("kind", ["proxy", "chat"])
def test_replay_and_compact_take_a_session_of_a_store(
    kind: str,
    stores: dict[str, tuple[Path, str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store, session = stores[kind]
    replayed = run_json(capsys, "replay", str(store), "--session", session, "--window", "8000")
    stored = SqliteStore(store).load(session)
    assert replayed["messages"] == len(stored.messages)
    out = tmp_path / "compacted.json"
    args = ("compact", str(store), "--session", session, "-o", str(out), "--window", "4000")
    compacted = run_json(capsys, *args)
    assert compacted["messages_before"] == len(stored.messages)
    body = json.loads(out.read_text(encoding="utf-8"))
    assert len(body["messages"]) == compacted["messages_after"]
    if kind == "proxy":  # the proxy's session is long enough to need it
        assert compacted["compacted"] is True
    lines = tmp_path / "compacted.jsonl"
    args = ("compact", str(store), "--session", session, "-o", str(lines), "--window", "4000")
    as_claude = run_json(capsys, *args)
    assert as_claude["note"] == (
        "a session from a store has no file format of its own; wrote claude-code instead (see --to)"
    )
    records = [json.loads(line) for line in lines.read_text(encoding="utf-8").splitlines()]
    assert {r["sessionId"] for r in records} == {session}
    shown = run_json(capsys, "inspect", str(lines))
    sent = shown["sent_context"] or shown  # the context as sent, after our compaction if any
    assert sent["messages"] == as_claude["messages_after"]


@pytest.mark.parametrize("command", ["inspect", "replay", "compact"])
def test_a_wrong_or_missing_session_names_the_real_ones(
    command: str,
    stores: dict[str, tuple[Path, str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store, _ = stores["proxy"]
    extra = ("-o", str(tmp_path / "o.json")) if command == "compact" else ()
    code, _, err = run_cli(capsys, command, str(store), "--session", "agent-c", *extra)
    assert code == 2 and f"no session 'agent-c' in {store}; it holds agent-a, agent-b" in err
    if command != "inspect":  # inspect lists them instead
        code, _, err = run_cli(capsys, command, str(store), *extra)
        assert code == 2 and "holding 2 sessions; choose one with --session ID" in err
    code, _, err = run_cli(capsys, command, str(CLAUDE), "--session", "agent-a", *extra)
    assert code == 2 and "is a session file, not a session store" in err


def test_inspect_says_what_each_stored_compaction_removed(
    stores: dict[str, tuple[Path, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    store, session = stores["proxy"]
    shown = run_json(capsys, "inspect", str(store), "--session", session)
    lost = shown["compactions_lost"]
    assert lost, "the proxy compacted this session at an 8K window"
    assert all(c["lost"]["tokens"] > 0 and c["lost"]["items"] for c in lost)
    code, text, _ = run_cli(capsys, "inspect", str(store), "--session", session)
    assert code == 0 and f"{len(lost)} compaction(s) recorded" in text
    first = lost[0]["lost"]
    assert f"{first['tokens']:,} tokens" in text


def test_a_jsonl_store_directory_is_a_store_too(
    stores: dict[str, tuple[Path, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from contextwarden.stores import JsonlStore

    source, session = stores["proxy"]
    sqlite, directory = SqliteStore(source), JsonlStore(tmp_path / "jsonl-store")
    directory.append(session, sqlite.log(session))
    sqlite.close()
    listing = run_json(capsys, "inspect", str(tmp_path / "jsonl-store"))
    assert [s["id"] for s in listing["sessions"]] == [session]
    store = str(tmp_path / "jsonl-store")
    shown = run_json(capsys, "inspect", store, "--session", session)
    replayed = run_json(capsys, "replay", store, "--window", "8000")  # its only session
    assert replayed["messages"] == shown["messages"] == listing["sessions"][0]["messages"]


def test_a_sqlite_file_that_is_no_store_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3
    from contextlib import closing

    foreign = tmp_path / "app.db"
    with closing(sqlite3.connect(foreign)) as db:
        db.execute("CREATE TABLE users (name TEXT)")
        db.commit()
    before = foreign.read_bytes()
    for command in ("inspect", "replay"):
        code, _, err = run_cli(capsys, command, str(foreign))
        assert code == 2 and "is a SQLite database but not a session store" in err
    assert foreign.read_bytes() == before  # no tables of ours added


def test_a_postgresql_store_is_read_by_its_dsn(
    stores: dict[str, tuple[Path, str]],
    postgres_dsn: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A store the proxy keeps in PostgreSQL (``--store postgresql://… --schema``) is named by
    the same DSN and schema on the command line; a schema holding no store is refused, and not
    created by the look."""
    import psycopg

    from contextwarden.stores import PostgresStore

    schema = f"cw_cli_{os.getpid()}"
    source, session = stores["proxy"]
    sqlite, postgres = SqliteStore(source), PostgresStore(postgres_dsn, schema=schema)
    try:
        postgres.append(session, sqlite.log(session))
        listing = run_json(capsys, "inspect", postgres_dsn, "--schema", schema)
        assert [s["id"] for s in listing["sessions"]] == [session]
        shown = run_json(capsys, "inspect", postgres_dsn, "--schema", schema, "--session", session)
        assert shown["messages"] == len(sqlite.load(session).messages)
        out = tmp_path / "compacted.json"
        args = ("compact", postgres_dsn, "--schema", schema, "-o", str(out), "--window", "4000")
        assert run_json(capsys, *args)["messages_before"] == shown["messages"]
        missing = f"{schema}_none"
        code, _, err = run_cli(capsys, "inspect", postgres_dsn, "--schema", missing)
        assert code == 2 and f"no contextwarden store in schema {missing!r}" in err
        with psycopg.connect(postgres_dsn) as conn:
            found = conn.execute(
                "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (missing,)
            ).fetchone()
        assert found is None
    finally:
        sqlite.close()
        postgres.close()
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_an_unreachable_postgresql_store_is_one_line() -> None:
    """The connection pool's warning per failed attempt stays off the terminal: the person sees
    the store's one line saying what failed, and exit code 2."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, "-m", "contextwarden", "inspect", "postgresql://postgres@127.0.0.1:1/x"]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "contextwarden: error: cannot connect to PostgreSQL at postgres@127.0.0.1:1/x within 10 s"
    ]
