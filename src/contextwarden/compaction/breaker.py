"""The autocompact circuit breaker, kept in the history's metadata so it survives a restart.

Every change is written with ``history.set_metadata(BREAKER_KEY, …)`` (a logged entry, so a
write-through store keeps it); a manager that first sees a history resumed from a store reads it
back, and a summarizer that failed three times before the restart is not called a fourth time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from contextwarden.history import ConversationHistory

log = logging.getLogger("contextwarden")

BREAKER_KEY = "contextwarden.breaker"
"""Metadata key: ``{"consecutive_failures": int, "open": bool}``."""


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
        log.warning(
            "ignoring metadata %r = %r: expected {'consecutive_failures': int >= 0, 'open': bool}; "
            "the breaker starts closed",
            BREAKER_KEY,
            saved,
        )
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


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
