"""Session stores on the command line: telling a store (the SQLite file or JSONL directory of
``proxy`` and ``chat``) from a session file, picking a session by ``--session`` or naming the
real ones, and the one-line summary of each session (``inspect STORE``, chat's ``/sessions``)."""

from __future__ import annotations

import argparse
import re
import sqlite3
import time
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from rich import box
from rich.table import Table

from contextwarden.errors import FormatError, StoreError, UsageError
from contextwarden.formats import detect_format, load
from contextwarden.history import ConversationHistory
from contextwarden.log import CompactionBoundary, MessageAdded
from contextwarden.stores import SqliteStore, open_store
from contextwarden.stores.base import SessionStore
from contextwarden.stores.postgres import DEFAULT_SCHEMA
from contextwarden.tokens.base import TokenCounter

SQLITE_MAGIC = b"SQLite format 3\x00"
STORE_TABLES = frozenset({SqliteStore.sessions_table, SqliteStore.events_table})
"""The first 16 bytes of every SQLite database file."""
MAX_NAMED = 8
"""Session ids an error names before saying how many more there are."""
EMPTY_PROBE_BYTES = 65_536
"""A file shorter than this holding only whitespace is called empty (read whole to check)."""
FIRST_REQUEST_CHARS = 60
"""How much of a session's first user request a listing shows."""
LAST_ACTIVE_KEY = "last_active"
"""Session metadata: epoch seconds of the last turn, set by ``chat`` (whose messages carry no
time), so "the session just used" is the one used last, not the one created last."""
_ID_TIME = re.compile(r"(\d{8}-\d{6})")
"""Chat session ids carry their creation time (``chat-20261203-074613-ab12``)."""


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """What a listing shows of one stored session."""

    id: str
    date: float | None
    """Epoch seconds of its latest known moment (message, compaction, or the time in its id)."""
    first_request: str
    messages: int
    tokens: int

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "date": when(self.date),
            "first_request": self.first_request,
            "messages": self.messages,
            "tokens": self.tokens,
        }


_NOT_A_STORE = (
    "{path} is a SQLite database but not a session store (it has no "
    f"{SqliteStore.sessions_table!r} table) nor a session file a loader reads; give a store "
    "`contextwarden proxy`/`chat` wrote, or a session file"
)


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


Location = Path | str
"""What ``inspect``/``compact``/``replay`` read: a file or directory, or a PostgreSQL DSN."""


def is_store(path: Location) -> bool:
    """A PostgreSQL DSN, a JSONL store directory (``*.jsonl`` session files, or nothing yet) or a
    SQLite database holding a store's tables (by its header and schema, not its name). An
    agent's own database or storage folder (OpenCode's) is a session file for ``formats/``, not
    a store."""
    if isinstance(path, str):
        return True
    if path.is_dir():
        return any(path.glob("*.jsonl")) or not any(path.iterdir())
    return _is_sqlite(path) and STORE_TABLES <= _tables(path)


def _tables(path: Path) -> set[str]:
    """The table names of a SQLite file, read without writing to it (none if unreadable)."""
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            return {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    except sqlite3.Error:
        return set()


def load_input(args: argparse.Namespace, counter: TokenCounter) -> ConversationHistory:
    """The session ``add_input_options`` names: a session file, or ``--session`` of a store."""
    if is_store(args.file):
        return load_stored(args.file, args.session, counter, schema=args.schema)
    if args.session is not None:
        raise UsageError(
            f"{args.file} is a session file, not a session store; --session picks a session "
            "in a store (the SQLite file or JSONL directory of `contextwarden proxy`/`chat`): "
            "leave it out"
        )
    try:
        return load_file(
            args.file, args.format, index=args.index, counter=counter, lenient=args.lenient
        )
    except FormatError as exc:
        if _is_sqlite(args.file):  # no loader reads it, and it has no store's tables
            raise UsageError(_NOT_A_STORE.format(path=args.file)) from exc
        raise


def load_file(path: Path, format: str, **options: Any) -> ConversationHistory:
    """``formats.load`` with the two errors a person meets first said plainly: an empty file,
    and a ``--format`` that is not the file's (naming the format it looks like)."""
    if path.stat().st_size < EMPTY_PROBE_BYTES and not path.read_bytes().strip():
        raise FormatError("the file is empty: there is no session in it", path=str(path))
    try:
        return load(path, format, **options)
    except FormatError as exc:
        if format == "auto":
            raise
        try:
            looks = detect_format(path)
        except FormatError:
            raise exc from None
        if looks == format:
            raise
        raise FormatError(
            f"not in the {format} format: it looks like {looks}; use --format {looks}, or leave "
            "--format out to detect it",
            path=str(path),
        ) from exc


def load_stored(
    path: Location, session: str | None, counter: TokenCounter, *, schema: str = DEFAULT_SCHEMA
) -> ConversationHistory:
    """One session of the store at ``path``: ``session``, or the only one there is."""
    store = open_existing(path, schema=schema)
    try:
        ids = session_ids(store, path)
        if session is None and len(ids) > 1:
            raise UsageError(
                f"{path} is a session store holding {len(ids)} sessions; choose one with "
                f"--session ID: {named(ids)}"
            )
        if session is not None and session not in ids:
            raise UsageError(f"no session {session!r} in {path}; it holds {named(ids)}")
        return store.load(session or ids[0], counter=counter, mode="merge")
    finally:
        store.close()


def open_existing(path: Location, *, schema: str = DEFAULT_SCHEMA) -> SessionStore:
    """The store at ``path``, refusing a database that is not one: opening it as a store would
    add our tables to someone else's database."""
    if isinstance(path, str):
        try:
            return open_store(path, schema=schema, create=False)
        except StoreError as exc:
            raise UsageError(str(exc)) from exc
    if not path.is_dir() and not STORE_TABLES <= _tables(path):
        raise UsageError(_NOT_A_STORE.format(path=path))
    return open_store(path)


def session_ids(store: SessionStore, path: Location) -> list[str]:
    """The store's sessions; UsageError when it has none (an empty directory, say)."""
    ids = store.list_sessions()
    if not ids:
        what = "a directory" if isinstance(path, Path) and path.is_dir() else "a session store"
        raise UsageError(
            f"{path} is {what} with no stored sessions in it; give a session file, or a "
            "store `contextwarden proxy`/`chat` wrote to"
        )
    return ids


def named(ids: Sequence[str]) -> str:
    """``a, b, c`` or ``a, b, … and 12 more``."""
    shown = ", ".join(ids[:MAX_NAMED])
    more = len(ids) - MAX_NAMED
    return f"{shown} … and {more} more" if more > 0 else shown


def summaries(store: SessionStore, counter: TokenCounter | None = None) -> list[SessionSummary]:
    """Every session of ``store``, the one used last first."""
    found = [
        summarize(sid, store.load(sid, counter=counter, mode="merge"))
        for sid in store.list_sessions()
    ]
    return sorted(found, key=lambda s: (s.date or 0.0, s.id), reverse=True)


def summarize(session_id: str, history: ConversationHistory) -> SessionSummary:
    first = next((e.message for e in history.log if isinstance(e, MessageAdded)), None)
    request = " ".join(first.text.split()) if first is not None else ""
    if len(request) > FIRST_REQUEST_CHARS:
        request = request[: FIRST_REQUEST_CHARS - 1] + "…"
    return SessionSummary(
        session_id,
        _latest(session_id, history),
        request,
        len(history.messages),
        history.estimate_tokens(),
    )


def _latest(session_id: str, history: ConversationHistory) -> float | None:
    stamps = [
        e.message.meta.timestamp if isinstance(e, MessageAdded) else e.timestamp
        for e in history.log
        if isinstance(e, MessageAdded | CompactionBoundary)
    ]
    active = history.metadata.get(LAST_ACTIVE_KEY)
    known = [s for s in (*stamps, active) if isinstance(s, int | float)]
    if known:
        return max(known)
    match = _ID_TIME.search(session_id)
    if match is None:
        return None
    return time.mktime(time.strptime(match.group(1), "%Y%m%d-%H%M%S"))


def when(stamp: float | None) -> str | None:
    """``2026-12-03 07:46`` in local time, None when unknown."""
    if stamp is None:
        return None
    return datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def sessions_table(found: Sequence[SessionSummary], current: str = "") -> Table:
    """Id, date, size and first request of each session (``inspect STORE``, ``/sessions``);
    only the first request is shortened to fit the terminal."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    cells = [
        (
            f"▶ {s.id}" if s.id == current else s.id,
            when(s.date) or "—",
            f"{s.messages:,}",
            f"{s.tokens:,}",
            s.first_request,
        )
        for s in found
    ]
    for i, column in enumerate(("session", "date", "messages", "tokens")):
        width = max([len(column), *(len(row[i]) for row in cells)])
        table.add_column(
            column, justify="right" if i > 1 else "left", no_wrap=True, min_width=width
        )
    table.add_column("first request", overflow="ellipsis", no_wrap=True)
    for row in cells:
        table.add_row(*row)
    return table
