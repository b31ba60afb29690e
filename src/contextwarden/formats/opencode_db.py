"""OpenCode's SQLite database (``~/.local/share/opencode/opencode.db``, newer OpenCode) into a
history: one session of the many it holds.

The tables read are ``session`` (a row per session), ``message`` (``id``, ``session_id``,
``time_created``, ``data``: the message info as JSON without its ids) and ``part`` (``id``,
``message_id``, ``data``: the part as JSON). ``index=`` picks the session, in order of creation
(0: the first); ``metadata["sessions"]`` lists them all (id, title, created) to choose from.
Messages are read in order of ``time_created`` then id, parts in id order, and then exactly as
an export's (``opencode``). The file is opened read-only; a row whose JSON does not parse is
reported and skipped.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.formats.opencode import from_records
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.common import loads

NAME = "opencode-db"
EXPECTED = "OpenCode's SQLite database (opencode.db) with session, message and part tables"
SQLITE_HEADER = "SQLite format 3\x00"
TABLES = frozenset({"session", "message", "part"})


def sniff(path: Path, head: str) -> bool:
    """True for a SQLite file holding OpenCode's session, message and part tables."""
    if not head.startswith(SQLITE_HEADER):
        return False
    try:
        with closing(_open(path)) as db:
            return TABLES <= _tables(db)
    except sqlite3.Error:
        return False


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read session ``index`` of the database (merge mode); see the module docstring."""
    try:
        with closing(_open(path)) as db:
            if not TABLES <= _tables(db):
                raise FormatError(f"not an OpenCode database: {EXPECTED}", path=str(path))
            sessions = _sessions(db)
            report.metadata["sessions"] = sessions
            if not sessions:
                raise FormatError("the database holds no session", path=str(path))
            if not 0 <= index < len(sessions):
                raise FormatError(
                    f"index {index} is out of range: the database holds {len(sessions)} "
                    f"session(s); pick one with --index 0 to {len(sessions) - 1} (index= in "
                    "Python), in order of creation",
                    path=str(path),
                )
            report.metadata["session"] = sessions[index]
            records = _records(db, sessions[index]["id"], report)
    except sqlite3.Error as exc:
        raise FormatError(f"cannot read the SQLite database: {exc}", path=str(path)) from exc
    return from_records(records, report, counter=counter)


def _open(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def _tables(db: sqlite3.Connection) -> set[str]:
    rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {str(name) for (name,) in rows}


def _sessions(db: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT id, title, directory, version, time_created FROM session ORDER BY time_created, id"
    ).fetchall()
    keys = ("id", "title", "directory", "version", "time_created")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def _records(db: sqlite3.Connection, session: str, report: LoadReport) -> list[dict[str, Any]]:
    messages = db.execute(
        "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (session,)
    ).fetchall()
    records: list[dict[str, Any]] = []
    for message_id, data in messages:
        info = _row(data, f"message {message_id}", report)
        parts = db.execute(
            "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (message_id,)
        ).fetchall()
        ids = {"sessionID": session, "messageID": message_id}
        read = [(str(p), _row(d, f"part {p}", report)) for p, d in parts]
        info.update(id=message_id, sessionID=session)
        records.append({"info": info, "parts": [{**d, "id": p, **ids} for p, d in read if d]})
    return records


def _row(data: Any, what: str, report: LoadReport) -> dict[str, Any]:
    try:
        value = loads(data) if isinstance(data, str | bytes) else None
    except json.JSONDecodeError as exc:
        report.skip(f"{what}: malformed JSON ({exc.msg}); skipped")
        return {}
    if not isinstance(value, Mapping):
        report.skip(f"{what}: data is not a JSON object; skipped")
        return {}
    return dict(value)
