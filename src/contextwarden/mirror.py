"""A managed history kept in step with a client that resends its whole conversation every call.

Agent frameworks hand their full message list to a hook before each model call. The mirror finds
what it has already recorded for that conversation, adds only what is new, and lets the
ContextManager manage the result, so summaries, boundaries and the breaker persist across calls and,
through the store, across restarts.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextwarden.compaction.apply import CompactionReport
from contextwarden.history import ConversationHistory
from contextwarden.log import MessageAdded
from contextwarden.manager import ContextManager
from contextwarden.model import Message, thaw
from contextwarden.policy import ContextPolicy
from contextwarden.stores import store_from
from contextwarden.stores.base import SessionStore
from contextwarden.summarizers.base import Summarizer
from contextwarden.tokens.base import TokenCounter

__all__ = ["FORK_KEY", "Managed", "SessionMirror"]

FORK_KEY = "mirror.fork"
"""Metadata key of a conversation's base session naming the session that now continues it."""


@dataclass(frozen=True, slots=True)
class Managed:
    """What to send: the managed ``messages`` of ``history`` after ``report``'s rungs ran."""

    history: ConversationHistory
    report: CompactionReport
    session_id: str
    """The store session holding this conversation (the base id, or a fork of it)."""

    @property
    def messages(self) -> tuple[Message, ...]:
        return self.history.messages


@dataclass
class _Tracked:
    session_id: str
    history: ConversationHistory
    added: list[Message] = field(default_factory=list)
    """Every message the client sent so far, as added (the log's originals)."""


class SessionMirror:
    """Per-conversation histories in ``store``, synchronised from the client's full message list.

    The incoming list may continue either what the client sent before (frameworks that keep
    their own state unmanaged, like LangGraph) or the managed view this mirror returned (those
    that adopt it, like pydantic-ai). A list that continues neither (the client rewrote its past)
    starts a fork, ``<id>~<n>``, named in the base session's metadata; nothing is overwritten.
    Calls for one conversation are serialised; different conversations never wait on each other.
    """

    def __init__(
        self,
        store: SessionStore | str | os.PathLike[str] | None = None,
        manager: ContextManager | None = None,
        *,
        policy: ContextPolicy | None = None,
        summarizer: Summarizer | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        """``store``: a SessionStore or a location for ``open_store`` (default: the SQLite
        database at ``stores.default_location()``); ``manager``, or ``policy`` and ``summarizer``
        to build one; ``counter``: the histories' token counter."""
        self.store = store_from(store)
        self.manager = manager or ContextManager(policy=policy, summarizer=summarizer)
        self.counter = counter
        self._tracked: dict[str, _Tracked] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def manage(
        self,
        conversation: str,
        messages: Sequence[Message],
        *,
        system: str | Sequence[Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> Managed:
        """Record what is new in ``messages`` and prepare the conversation for its next request."""
        with self._lock(conversation):
            tracked = self._sync(conversation, messages, system, tools)
            report = self.manager.prepare(tracked.history)
            return Managed(tracked.history, report, tracked.session_id)

    def history(self, conversation: str) -> ConversationHistory:
        """The conversation's history as last synchronised (resumed from the store if needed)."""
        with self._lock(conversation):
            return self._track(conversation, None, None).history

    def record_usage(self, conversation: str, usage: Any) -> None:
        """Anchor the conversation's token count on a model reply's usage."""
        with self._lock(conversation):
            tracked = self._tracked.get(conversation)
            if tracked is not None:
                self.manager.record_usage(tracked.history, usage)

    # ------------------------------------------------------------------ internals
    def _lock(self, conversation: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(conversation, threading.Lock())

    def _sync(
        self,
        conversation: str,
        messages: Sequence[Message],
        system: str | Sequence[Mapping[str, Any]] | None,
        tools: Sequence[Mapping[str, Any]] | None,
    ) -> _Tracked:
        tracked = self._track(conversation, system, tools)
        answered = bool(tracked.added)  # the first new message may be the reply to our request
        new = _continuation(messages, tracked.added, tracked.history.messages)
        if new is None:
            tracked = self._fork(conversation, tracked, system, tools)
            new, answered = list(messages), False
        for i, message in enumerate(new):
            tracked.history.add(message)
            tracked.added.append(message)
            usage = message.meta.extra.get("usage")
            if i == 0 and answered and message.role == "assistant" and usage is not None:
                # The reply to the managed request we returned: its usage measures that context.
                self.manager.record_usage(tracked.history, thaw(usage))
        return tracked

    def _track(
        self,
        conversation: str,
        system: str | Sequence[Mapping[str, Any]] | None,
        tools: Sequence[Mapping[str, Any]] | None,
    ) -> _Tracked:
        tracked = self._tracked.get(conversation)
        if tracked is None:
            session = conversation
            base = self._open(session, system, tools)
            while isinstance(fork := base.metadata.get(FORK_KEY), str) and fork != session:
                session, base = fork, self._open(fork, system, tools)
            tracked = _Tracked(session, base, _originals(base))
            self._tracked[conversation] = tracked
        else:
            tracked.history.set_preamble(system, tools)
        return tracked

    def _fork(
        self,
        conversation: str,
        tracked: _Tracked,
        system: str | Sequence[Mapping[str, Any]] | None,
        tools: Sequence[Mapping[str, Any]] | None,
    ) -> _Tracked:
        number = int(tracked.session_id.rpartition("~")[2]) + 1 if "~" in tracked.session_id else 1
        session = f"{conversation}~{number}"
        tracked.history.set_metadata(FORK_KEY, session)
        fork = _Tracked(session, self._open(session, system, tools))
        self._tracked[conversation] = fork
        return fork

    def _open(
        self,
        session: str,
        system: str | Sequence[Mapping[str, Any]] | None,
        tools: Sequence[Mapping[str, Any]] | None,
    ) -> ConversationHistory:
        return ConversationHistory.open(
            self.store, session, system=system, tools=tools, counter=self.counter
        )


def _continuation(
    incoming: Sequence[Message], added: Sequence[Message], view: Sequence[Message]
) -> list[Message] | None:
    """What ``incoming`` adds to what was sent before or to the managed view; None if neither."""
    for known in (added, view):
        if len(incoming) >= len(known) and all(
            a == b for a, b in zip(incoming, known, strict=False)
        ):
            return list(incoming[len(known) :])
    return None


def _originals(history: ConversationHistory) -> list[Message]:
    return [e.message for e in history.log if isinstance(e, MessageAdded)]
