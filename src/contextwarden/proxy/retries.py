"""Crash-retry recognition: what a turn cut off before its record already wrote, found in
the log, so that the client's retry of that turn is stored once.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextwarden.log import LogEntry, MessageAdded, derive_view
from contextwarden.model import Message
from contextwarden.proxy.matching import Turn


def held(log: Sequence[LogEntry], new: Sequence[Message]) -> int:
    """How many of the request's messages ``new`` a session without a turn record already holds:
    all of its written view, when that view is where ``new`` starts (the session's first turn was
    written and the process died before recording it, so the client's retry is stored once)."""
    view = written_view(log, 0)
    return len(view) if view and view == tuple(new[: len(view)]) else 0


def already_added(log: Sequence[LogEntry], latest: Turn, new: Sequence[Message]) -> int:
    """How many of ``new`` a turn that crashed before its record already added: the tail of the
    view its adds left equals them (a retry after a crash is stored once)."""
    view = written_view(log, latest.version + 1)
    for n in range(min(len(new), len(view)), 0, -1):
        if view[-n:] == tuple(new[:n]):
            return n
    return 0


def written_view(log: Sequence[LogEntry], start: int) -> tuple[Message, ...]:
    """The view as the messages added from log entry ``start`` on left it, before anything the
    turn did after them (its compaction snips what the client sends again, so the view it left
    is no longer where the retry's items start); () when none were added. Found from the log,
    not the view: the turn that added them was cut off before its record."""
    for end in range(len(log), start, -1):
        if isinstance(log[end - 1], MessageAdded):
            return tuple(derive_view(log[:end]))
    return ()
