"""The autocompact circuit breaker and its back-off, kept in the history's metadata so both
survive a restart.

Every change is written with ``history.set_metadata(…)`` (a logged entry, so a write-through store
keeps it); a manager that first sees a history resumed from a store reads it back, and a
summarizer that failed three times before the restart is not called a fourth time, nor one whose
summary would not have saved tokens called again before the context has grown enough.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, TypeGuard

from contextwarden.history import ConversationHistory

log = logging.getLogger("contextwarden")

BREAKER_KEY = "contextwarden.breaker"
"""Metadata key: ``{"consecutive_failures": int, "open": bool}``."""

BACKOFF_KEY = "contextwarden.backoff"
"""Metadata key: ``{"declined_at": int, "removed": int, "declines": int}`` while autocompact backs
off after a summary that would not have saved tokens; ``None`` once a summary is applied.
A record without ``declines`` (written before it was kept) counts as one decline."""


@dataclass(eq=False, slots=True)
class Breaker:
    """Summarizer failures in a row, and whether autocompact stopped calling the summarizer."""

    failures: int = 0
    open: bool = False

    @classmethod
    def load(cls, history: ConversationHistory) -> Breaker:
        """The breaker ``history``'s metadata records (closed, no failures, when none is)."""
        saved = history.metadata.get(BREAKER_KEY)
        if saved is None:
            return cls()
        failures = saved.get("consecutive_failures") if isinstance(saved, dict) else None
        is_open = saved.get("open") if isinstance(saved, dict) else None
        if isinstance(failures, int) and _count(failures) and isinstance(is_open, bool):
            return cls(failures, is_open)
        _ignored(BREAKER_KEY, saved, "{'consecutive_failures': int >= 0, 'open': bool}")
        return cls()

    def failed(self, history: ConversationHistory, limit: int) -> bool:
        """Count a failure; True when this one opened the breaker (``limit`` in a row)."""
        opens = not self.open and self.failures + 1 >= limit
        self._set(history, self.failures + 1, self.open or opens)
        return opens

    def reset(self, history: ConversationHistory) -> None:
        """A summary succeeded, or the user compacted by hand: closed, no failures."""
        self._set(history, 0, False)

    def _set(self, history: ConversationHistory, failures: int, is_open: bool) -> None:
        if (failures, is_open) == (self.failures, self.open):
            return  # unchanged: nothing to record
        history.set_metadata(BREAKER_KEY, {"consecutive_failures": failures, "open": is_open})
        self.failures, self.open = failures, is_open


@dataclass(eq=False, slots=True)
class Backoff:
    """After a summary that would not have saved tokens, how much the conversation has grown.

    A summary does not save tokens when the part it would replace is smaller than the summary
    (a system prompt that takes most of the window, a kept tail that takes the rest); it is no
    summarizer error, so the breaker does not count it, but the next request would only decline
    the same summary again. Growth is what was added since: the context's tokens now, plus what
    compaction (truncation, microcompact) removed meanwhile, less the tokens at the decline.
    Each decline in a row doubles the growth waited for (``wait``), so a summarizer whose
    summaries never save is asked a number of times that grows with the logarithm of the
    session's length, not with its requests.
    """

    declined_at: int | None = None
    """The context's tokens when the summary was declined; ``None``: not backing off."""
    removed: int = 0
    """Tokens compaction removed from the context since then."""
    declines: int = 0
    """Summaries declined in a row (none applied, no manual compact, since the first)."""

    @classmethod
    def load(cls, history: ConversationHistory) -> Backoff:
        """The back-off ``history``'s metadata records (none, when none is)."""
        saved = history.metadata.get(BACKOFF_KEY)
        if saved is None:
            return cls()
        declined = saved.get("declined_at") if isinstance(saved, dict) else None
        removed = saved.get("removed") if isinstance(saved, dict) else None
        declines = saved.get("declines", 1) if isinstance(saved, dict) else None
        if _count(declined) and _count(removed) and _count(declines) and declines > 0:
            return cls(declined, removed, declines)
        expected = "{'declined_at': int >= 0, 'removed': int >= 0, 'declines': int > 0} or None"
        _ignored(BACKOFF_KEY, saved, expected)
        return cls()

    def waiting(self, tokens: int, retry_after: int, window: int) -> bool:
        """Whether autocompact still backs off with ``tokens`` in the context now: until the
        conversation has grown by ``retry_after``, or sooner, once, when the context first goes
        over the effective ``window`` after a decline under it (truncation would drop next what
        a summary keeps, so a summary is tried first; declined there, the wait starts above the
        window and truncation keeps each request inside it)."""
        if self.declined_at is None:
            return False
        if self.declined_at <= window < tokens:
            return False
        return tokens + self.removed - self.declined_at < self.wait(retry_after, window)

    def wait(self, retry_after: int, window: int) -> int:
        """The growth waited for after this many declines in a row: ``retry_after``, doubled
        for each decline after the first, and never more than ``window`` (a whole window of new
        conversation is worth one more try)."""
        if self.declines <= 1:
            return retry_after
        return min(retry_after << min(self.declines - 1, window.bit_length()), window)

    def declined(self, history: ConversationHistory, tokens: int) -> None:
        """A summary was declined with ``tokens`` in the context: back off from here, for twice
        as long as after the decline before it, if there was one."""
        self._set(history, tokens, 0, self.declines + 1)

    def shrank(self, history: ConversationHistory, tokens: int) -> None:
        """A compaction removed ``tokens`` from the context (counted only while backing off)."""
        if self.declined_at is not None and tokens > 0:
            self._set(history, self.declined_at, self.removed + tokens, self.declines)

    def reset(self, history: ConversationHistory) -> None:
        """A summary was applied, or the user compacted by hand: no back-off."""
        if self.declined_at is not None:
            history.set_metadata(BACKOFF_KEY, None)
            self.declined_at, self.removed, self.declines = None, 0, 0

    def _set(
        self, history: ConversationHistory, declined_at: int, removed: int, declines: int
    ) -> None:
        record = {"declined_at": declined_at, "removed": removed, "declines": declines}
        history.set_metadata(BACKOFF_KEY, record)
        self.declined_at, self.removed, self.declines = declined_at, removed, declines


def _count(value: Any) -> TypeGuard[int]:
    """A count: an int (not a bool) >= 0."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _ignored(key: str, saved: Any, expected: str) -> None:
    log.warning(
        "ignoring metadata %r = %r: expected %s; the breaker starts closed, with no back-off",
        key,
        saved,
        expected,
    )
