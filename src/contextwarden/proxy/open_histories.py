"""The proxy's sessions held in memory between requests: reloaded when another process wrote,
the least recently used dropped beyond a bound, with the turn records read from each log.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from contextwarden.history import ConversationHistory
from contextwarden.proxy.config import DEFAULT_MAX_SESSIONS
from contextwarden.proxy.matching import Turn, recorded_turns
from contextwarden.stores.base import SessionStore
from contextwarden.stores.binding import open_history
from contextwarden.tokens.base import TokenCounter

__all__ = ["OpenHistories"]


class OpenHistories:
    """Session histories kept in memory between requests, so a session is loaded once per
    process, not per turn (synchronous: callers serialize the work of one session).

    At most ``max_open`` histories stay in memory: the least recently used beyond it is dropped
    and reloaded from the store (its log, so its view and turn records) on its next request.
    """

    def __init__(
        self, store: SessionStore, counter: TokenCounter, max_open: int = DEFAULT_MAX_SESSIONS
    ) -> None:
        self.store = store
        self.counter = counter
        self.max_open = max_open
        self._open: OrderedDict[str, ConversationHistory] = OrderedDict()
        self._guard = threading.Lock()
        self._seen: dict[str, tuple[int, list[Turn]]] = {}
        """Per session: log entries read for turns, and the turns found in them."""

    def history(
        self,
        session_id: str,
        system: Any = None,
        tools: list[dict[str, Any]] | None = None,
        model: str | None = None,
    ) -> ConversationHistory:
        """The session's history, up to date with the store and with this preamble, its count
        calibrated for ``model`` (the latest request's: a session whose model changed is
        reloaded, since what the old model's tokenizer counted does not hold for the new one)."""
        cached = self._fresh(session_id)
        if cached is not None and cached.model == model:
            cached.set_preamble(system, tools or [])
            return cached
        history = open_history(
            self.store,
            session_id,
            system=system,
            tools=tools or [],
            mode="merge",
            counter=self.counter,
            model=model,
        )
        self._keep(session_id, history)
        return history

    def _keep(self, session_id: str, history: ConversationHistory) -> None:
        """Hold ``history`` in memory as the most recently used, dropping the least recently
        used beyond ``max_open`` (the store holds all of theirs)."""
        dropped = []
        with self._guard:
            self._open[session_id] = history
            self._open.move_to_end(session_id)
            while len(self._open) > self.max_open:
                session, _ = self._open.popitem(last=False)
                self._seen.pop(session, None)
                dropped.append(session)
        forget: Callable[[str], None] | None = getattr(self.store, "forget", None)
        if forget is not None:
            for session in dropped:
                forget(session)  # what the store caches of them goes too

    def _fresh(self, session_id: str) -> ConversationHistory | None:
        """The in-memory history if it still mirrors the store (a bound history's log is the
        store's log, so equal lengths mean nobody else wrote since)."""
        with self._guard:
            cached = self._open.get(session_id)
            if cached is not None:
                self._open.move_to_end(session_id)
        if cached is not None and self.store.version(session_id) == len(cached.log):
            return cached
        return None

    def _forget(self, session_id: str) -> None:
        """Drop the in-memory history of ``session_id`` (it is reloaded from the store)."""
        with self._guard:
            self._open.pop(session_id, None)
            self._seen.pop(session_id, None)

    def _turns(self, session_id: str, history: ConversationHistory) -> list[Turn]:
        """The session's recorded turns, read from the log entries not read before (the log
        is append-only, so a request costs the turns it added, not the whole log)."""
        log = history.log
        with self._guard:
            read, turns = self._seen.get(session_id, (0, []))
        if read > len(log):
            read, turns = 0, []
        turns = [*turns, *recorded_turns(log[read:])]
        with self._guard:
            self._seen[session_id] = (len(log), turns)
        return turns

    def _current(self, session_id: str, model: str | None = None) -> ConversationHistory:
        """The session's history, reloaded for ``model`` if it is not in memory (recall's
        calls come right after their request was managed, so theirs always is)."""
        cached = self._fresh(session_id)
        if cached is not None:
            return cached
        return self.history(session_id, *self._preamble(session_id), model)

    def _preamble(self, session_id: str) -> tuple[Any, list[dict[str, Any]]]:
        history = self.store.load(session_id, counter=self.counter, mode="merge")
        return history.system, history.tools
