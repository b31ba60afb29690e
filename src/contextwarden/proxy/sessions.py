"""Proxy sessions: a request matched to its stored conversation (``matching``) and managed.

Clients resend the whole conversation every turn. A request is matched to the longest prefix a
recorded turn has seen: only the new items are checked against the API rules and added, a retry
of a turn gets exactly the view that turn got (never compacted twice), a rewritten tail of the
latest turn is an edit of the same session, and a conversation that branched off an earlier
point continues in a fork session of its own. Nothing is written before the new items are known
to be valid, and a history that failed to write is dropped from memory and reloaded.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any

from contextwarden.compaction.apply import CompactionReport
from contextwarden.errors import CompactionError, ContextOverflowError, HistoryError, StoreError
from contextwarden.history import ConversationHistory
from contextwarden.log import derive_view
from contextwarden.manager import ContextManager
from contextwarden.model import Message
from contextwarden.proxy import edits
from contextwarden.proxy.checking import check_new, checked
from contextwarden.proxy.config import DEFAULT_MAX_SESSIONS
from contextwarden.proxy.matching import (
    TURN_KEY,
    Match,
    Turn,
    best_match,
    body_marks,
    chain,
    fork_key,
    item_digests,
    lead_match,
    lead_of,
    prefix_chain,
    recorded_turns,
    turn_record,
)
from contextwarden.proxy.open_histories import OpenHistories
from contextwarden.proxy.retries import already_added, held
from contextwarden.proxy.rewind import EDIT_TRIGGER, DropTail, ReplaceLead, summarized_lead
from contextwarden.proxy.tail_marks import tail_marks
from contextwarden.proxy.usage import prompt_usage
from contextwarden.proxy.values import FIXED_SHARE_WARNING, Incoming, Managed
from contextwarden.recall import Recalled, recall
from contextwarden.stores.base import SessionStore, StoreConflictError
from contextwarden.stores.binding import WriteThrough
from contextwarden.tokens.base import TokenCounter

log = logging.getLogger("contextwarden.proxy")

__all__ = ["Sessions"]

LEAD_RESTORE_ROOM = 0.5
"""Share of the room left under the compaction threshold a summarized lead-in's new version may
take to be put back in full; a larger one stays as the summary left it (restoring it would only
bring the next summary on at once: aider's READ ONLY files can outgrow the window)."""


class Sessions(OpenHistories):
    """Manages requests against a store (synchronous: the app runs it in worker threads).

    Histories are kept in memory between requests and reloaded when another process changed
    the session (its store version moved), so a session is loaded once per process, not per turn.
    Callers serialize the work of one session (``SessionLocks``); other sessions run in parallel.
    At most ``max_open`` histories stay in memory: the least recently used beyond it is dropped
    and reloaded from the store (its log, so its view and turn records) on its next request.
    """

    def __init__(
        self,
        store: SessionStore,
        manager: ContextManager,
        counter: TokenCounter,
        max_open: int = DEFAULT_MAX_SESSIONS,
    ) -> None:
        super().__init__(store, counter, max_open)
        self.manager = manager
        self._warned: set[str] = set()

    # ----------------------------------------------------------------- per request
    def manage(self, request: Incoming) -> Managed:
        """Match ``request`` to its session and return the managed conversation to send.

        HistoryError/FormatError: the request's new items break an API rule or cannot be read;
        nothing was written."""
        with self.lock(request.key):
            return self._manage(request)

    def lock(self, session_id: str) -> AbstractContextManager[object]:
        """The store's lock on a session across processes, where the store has one."""
        hook = getattr(self.store, "session_lock", None)
        return hook(session_id) if hook is not None else nullcontext()

    def _manage(self, request: Incoming) -> Managed:
        each = item_digests(request.items)
        digests = prefix_chain(each)
        session_id = request.key
        while True:  # at most one step per branch point the client introduced
            created = self._create(session_id, request)
            if created is not None:
                history, added = created
                managed = self._extend(session_id, history, request, each, digests, ())
                return replace(managed, new_items=added)
            history = self.history(session_id, request.system, request.tools, request.model)
            turns = self._turns(session_id, history)
            if not turns:  # a first turn that crashed before its record, or none yet
                new = request.convert(request.items, 0)
                new = new[held(history.log, new) :]
                check_new(history.messages, new, 0)
                return self._extend(session_id, history, request, each, digests, new)
            found, latest = best_match(turns, digests), turns[-1]
            if found is None or found.turn != latest:
                found = lead_match(latest, request.items, each) or found
            if (
                found is not None
                and not (found.drop or found.lead)
                and found.at == len(request.items)
            ):
                return self._replay(session_id, history, found.turn, latest)
            if found is not None and found.turn == latest:
                kept = history.messages[: len(history.messages) - found.drop]
                new = request.convert(request.items[found.at :], found.at)
                if not found.drop and not found.lead:
                    new = new[already_added(history.log, latest, new) :]
                check_new(kept, new, found.at)
                if self._rewound(history, request, found):
                    return self._extend(session_id, history, request, each, digests, new)
            session_id = fork_key(session_id, digests, found.at if found is not None else 0)

    def _create(self, session_id: str, request: Incoming) -> tuple[ConversationHistory, int] | None:
        """A new session holding the request's checked conversation, written to the store in
        one append (not one per message), and the number of messages; None when the session
        exists (or was created by another process meanwhile). A rejected request creates none."""
        if self.store.version(session_id):
            return None
        new = checked((), request, 0)
        history = ConversationHistory(
            request.system, request.tools, mode="merge", counter=self.counter, model=request.model
        )
        for message in new:
            history.add(message)
        try:
            version = self.store.append(session_id, history.log, expected_version=0)
        except StoreConflictError:
            return None
        history.subscribe(WriteThrough(self.store, session_id, version))
        self._keep(session_id, history)
        return history, len(new)

    def preview(self, request: Incoming, key: str) -> tuple[Message, ...] | None:
        """What session ``key`` would be sent for ``request`` before this turn's management
        (its view plus the request's new messages), writing nothing; None when the request
        does not continue the session's latest turn."""
        history = self._fresh(key)
        if history is None and self.store.version(key):
            history = self.store.load(key, counter=self.counter, mode="merge")
        turns = recorded_turns(history.log) if history is not None else []
        if history is None or not turns:
            return None
        found = best_match(turns, chain(request.items))
        if found is None or found.turn != turns[-1] or found.drop:
            return None
        return (*history.messages, *checked(history.messages, request, found.at))

    def force_compact(self, key: str, managed: Managed, items: Sequence[Any]) -> Managed:
        """Summarize now (the upstream said the prompt is too long) and re-record the turn, so
        a retry of this request gets the compacted view too."""
        with self.lock(key):
            history = self._current(managed.session_id, managed.model)
            report = self.manager.compact(history)
            turn = Turn(len(items), chain(items)[len(items)], len(history.log))
            return self._record(managed.session_id, history, turn, 0, report)

    def record_usage(self, key: str, managed: Managed, usage: Any) -> bool:
        """Anchor the ledger on the reply's prompt usage, if the session is still as it was."""
        prompt = prompt_usage(usage)
        if managed.report is None or not prompt:
            return False
        with self.lock(key):
            if self.store.version(managed.session_id) != managed.version:
                return False
            self._current(managed.session_id, managed.model).record_usage(prompt)
            return True

    def recalled(self, session_id: str, tool_input: Mapping[str, Any], page_chars: int) -> Recalled:
        """The ``recall`` tool's answer to ``tool_input`` from the session's log, a page of at
        most ``page_chars`` characters."""
        with self.lock(session_id):
            return recall(self._current(session_id), tool_input, page_chars=page_chars)

    def headroom(self, session_id: str) -> int:
        """Tokens the session's view (with its system prompt and tools) leaves under the
        effective window: what a request may add to it and still fit."""
        with self.lock(session_id):
            history = self._current(session_id)
            return self.manager.policy.effective_window - history.estimate_tokens()

    def note(self, session_id: str, key: str, value: Any) -> None:
        """Record a fact about the session that is not conversation (logged metadata)."""
        with self.lock(session_id):
            self._current(session_id).set_metadata(key, value)

    # ----------------------------------------------------------------- steps
    def _rewound(self, history: ConversationHistory, request: Incoming, found: Match) -> bool:
        """Whether the view now ends where the request's unseen items start: at once for a
        request that extends the latest turn; after dropping the rewritten tail for an edit,
        and with the request's version of the lead-in when the agent rewrote that."""
        lead = self._new_lead(history, request, found)
        if not found.drop and not lead:
            return True
        try:
            if lead:
                edit = ReplaceLead(lead, found.drop)
                report = self.manager.apply(history, edit, trigger=EDIT_TRIGGER, grow=True)
            else:
                report = self.manager.apply(history, DropTail(found.drop), trigger=EDIT_TRIGGER)
        except CompactionError:
            return False  # the rewind would break a rule: the edited request forks instead
        return report.applied

    def _new_lead(
        self, history: ConversationHistory, request: Incoming, found: Match
    ) -> tuple[Message, ...]:
        """The agent's new lead-in to put in the view: none when it did not rewrite it, or
        when a summary took the old one and the new one would not leave the next summary
        several requests away (``LEAD_RESTORE_ROOM``): it stays as the summary left it."""
        if not found.lead:
            return ()
        lead = tuple(checked((), replace(request, items=request.items[: found.lead]), 0))
        if not summarized_lead(history.messages):
            return lead
        room = self.manager.policy.autocompact_threshold - history.estimate_tokens()
        size = sum(self.counter.count_message(m) for m in lead)
        return lead if size <= room * LEAD_RESTORE_ROOM else ()

    def _extend(
        self,
        session_id: str,
        history: ConversationHistory,
        request: Incoming,
        each: Sequence[bytes],
        digests: Sequence[str],
        new: Sequence[Message],
    ) -> Managed:
        """Add the request's checked ``new`` messages, manage, and record the turn (``each``:
        the request's item hashes, ``digests``: their chain, as ``_manage`` matched with)."""
        try:
            for message in new:
                history.add(message)
            applied = edits.apply(self.manager, history, request.edits)
            report = self.manager.prepare(history)
        except (StoreError, HistoryError):
            self._forget(session_id)  # the next request reloads what the store holds
            raise
        limit = self.manager.policy.effective_window
        if history.estimate_tokens() > limit:  # prepare() raises first unless told to flag
            raise ContextOverflowError(history.estimate_tokens(), limit)
        count = len(request.items)
        marks = tail_marks(history.messages, request, digests)
        lead, bodies = lead_of(each, count), body_marks(each, count, marks)
        turn = Turn(count, digests[count], len(history.log), tuple(applied), marks, lead, bodies)
        return self._record(session_id, history, turn, len(new), report)

    def _record(
        self,
        session_id: str,
        history: ConversationHistory,
        turn: Turn,
        new: int,
        report: CompactionReport | None,
    ) -> Managed:
        history.set_metadata(TURN_KEY, turn_record(turn))
        tokens = history.estimate_tokens()
        share, warned = self._fixed_share(session_id, history)
        return Managed(
            session_id,
            history.messages,
            len(history.log),
            new,
            tokens,
            report,
            turn.applied_edits,
            share,
            warned,
            history.model,
        )

    def _fixed_share(
        self, session_id: str, history: ConversationHistory
    ) -> tuple[float | None, bool]:
        """The window share of the session's fixed part when over the warning share, and
        whether this is the first time (logged once per session and process)."""
        share = history.preamble_tokens / self.manager.policy.context_window
        if share <= FIXED_SHARE_WARNING:
            return None, False
        with self._guard:
            first = session_id not in self._warned
            self._warned.add(session_id)
        if first:
            log.warning(
                "session %s: the system prompt and tools take %.0f%% of the %d-token window;"
                " compaction can free little of it (a larger --window, or fewer tools, helps)",
                session_id,
                share * 100,
                self.manager.policy.context_window,
            )
        return share, first

    def _replay(
        self, session_id: str, history: ConversationHistory, turn: Turn, latest: Turn
    ) -> Managed:
        if turn == latest:  # the ledger holds its messages' counts: no recount of the view
            messages = history.messages
            tokens = history.counted_tokens() - history.preamble_tokens
        else:
            messages = tuple(derive_view(history.log[: turn.version]))
            tokens = sum(self.counter.count_message(m) for m in messages)
        applied = turn.applied_edits
        return Managed(
            session_id, messages, len(history.log), 0, tokens, None, applied, model=history.model
        )
