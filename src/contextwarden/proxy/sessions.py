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
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import Any

from contextwarden.compaction.apply import CompactionReport
from contextwarden.errors import (
    CompactionError,
    ContextOverflowError,
    FormatError,
    HistoryError,
    StoreError,
    ToolPairingError,
)
from contextwarden.history import ConversationHistory
from contextwarden.log import LogEntry, MessageAdded, derive_view
from contextwarden.manager import ContextManager
from contextwarden.model import Message
from contextwarden.proxy import edits
from contextwarden.proxy.config import DEFAULT_MAX_SESSIONS
from contextwarden.proxy.edits import ClearToolUses
from contextwarden.proxy.matching import (
    EDIT_DEPTH,
    TURN_KEY,
    Mark,
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
    session_key,
    turn_record,
)
from contextwarden.proxy.rewind import EDIT_TRIGGER, DropTail, ReplaceLead, summarized_lead
from contextwarden.recall import Recalled, recall
from contextwarden.rules import DEFAULT_RULES, RoleAlternation, validate
from contextwarden.stores.base import SessionStore, StoreConflictError
from contextwarden.stores.binding import WriteThrough, open_history
from contextwarden.tokens.base import TokenCounter

log = logging.getLogger("contextwarden.proxy")

__all__ = ["Incoming", "Managed", "Sessions", "recorded_turns", "session_key"]

INPUT_USAGE_FIELDS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
"""Usage fields that measure the request's prompt (the reply is not in the view yet)."""
OPENAI_INPUT_FIELDS = ("prompt_tokens",)
FIXED_SHARE_WARNING = 0.5
"""Share of the window the agent's fixed part (system prompt + tools) may take before the proxy
says so: past it, what compaction can free is small next to what it cannot touch."""
FIXED_SHARE_HEADER = "x-contextwarden-fixed-share"
"""Response header carrying ``Managed.fixed_share`` to the client."""
REQUEST_RULES = tuple(r for r in DEFAULT_RULES if not isinstance(r, RoleAlternation))
"""The rules a request's new items are checked against before anything is written (the APIs
merge consecutive same-role messages, and so does the proxy's history)."""

LEAD_RESTORE_ROOM = 0.5
"""Share of the room left under the compaction threshold a summarized lead-in's new version may
take to be put back in full; a larger one stays as the summary left it (restoring it would only
bring the next summary on at once: aider's READ ONLY files can outgrow the window)."""

CONTEXT_MESSAGES = 2
"""Messages of the view new items are checked after (a result needs the call before it)."""

Converter = Callable[[Sequence[Any], int], list[Message]]
"""Turns wire items (the tail from index ``start`` of a request's conversation) into our
messages, through wire/ (the index makes errors name the item)."""


@dataclass(frozen=True, slots=True)
class Incoming:
    """One request's conversation as the client sent it."""

    key: str
    """The session it names (``session_key``)."""
    system: str | list[dict[str, Any]] | None
    tools: list[dict[str, Any]]
    items: Sequence[Any]
    """The conversation items as sent (wire dicts), hashed to match prefixes."""
    convert: Converter
    edits: tuple[ClearToolUses, ...] = ()
    """Context edits the client asked for (Anthropic ``context_management``)."""
    model: str | None = None
    """The model the body names: the session's count is calibrated for it (Claude models)."""


@dataclass(frozen=True, slots=True)
class Managed:
    """What to send upstream for one request, and how it came about."""

    session_id: str
    messages: tuple[Message, ...]
    version: int
    """Store version once this turn was recorded: usage is anchored only if it still holds."""
    new_items: int
    """Items of the request not seen before (0: a retry of a managed turn)."""
    tokens: int
    report: CompactionReport | None
    """What ``prepare`` did; None when the turn was replayed from the log."""
    applied_edits: tuple[Any, ...] = ()
    """The context edits applied to this turn, as the API reports them."""
    fixed_share: float | None = None
    """The share of the window the system prompt and tools take, when it is over
    ``FIXED_SHARE_WARNING`` (compaction can then free little: summaries come often)."""
    fixed_share_warned: bool = False
    """This is the session's first request found over the share in this process (logged)."""
    model: str | None = None
    """The model the session's count was calibrated for (its reload after the reply keeps it)."""


class Sessions:
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
        self.store = store
        self.manager = manager
        self.counter = counter
        self.max_open = max_open
        self._open: OrderedDict[str, ConversationHistory] = OrderedDict()
        self._guard = threading.Lock()
        self._warned: set[str] = set()
        self._seen: dict[str, tuple[int, list[Turn]]] = {}
        """Per session: log entries read for turns, and the turns found in them."""

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
                managed = self._extend(session_id, history, request, each, ())
                return replace(managed, new_items=added)
            history = self.history(session_id, request.system, request.tools, request.model)
            turns = self._turns(session_id, history)
            if not turns:  # a first turn that crashed before its record, or none yet
                new = request.convert(request.items, 0)
                new = new[_held(history.log, new) :]
                check_new(history.messages, new, 0)
                return self._extend(session_id, history, request, each, new)
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
                    new = new[_already_added(history.log, latest, new) :]
                check_new(kept, new, found.at)
                if self._rewound(history, request, found):
                    return self._extend(session_id, history, request, each, new)
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
        new: Sequence[Message],
    ) -> Managed:
        """Add the request's checked ``new`` messages, manage, and record the turn."""
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
        digests = prefix_chain(each)
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

    # ----------------------------------------------------------------- histories
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


def checked(view: Sequence[Message], request: Incoming, seen: int) -> list[Message]:
    """The request's items from ``seen`` on as messages, once they are known to follow ``view``
    without breaking an API rule the upstream would refuse them for (HistoryError naming the
    item otherwise; FormatError when an item cannot be read)."""
    new = request.convert(request.items[seen:], seen)
    check_new(view, new, seen)
    return new


def check_new(view: Sequence[Message], new: Sequence[Message], seen: int) -> None:
    """Raise HistoryError when ``new`` (from the request's item ``seen`` on) appended to
    ``view`` breaks an API rule; its ``index`` is the item's."""
    context = list(view[-CONTEXT_MESSAGES:])
    problems = [
        p
        for p in validate([*context, *new], REQUEST_RULES)
        if p.index >= len(context) or (p.index == len(context) - 1 and p.tool_use_id)
    ]  # the view's own messages were checked when they came; its last call is answered now
    if not problems:
        return
    first = problems[0]
    index = max(seen + first.index - len(context), 0)
    kind = ToolPairingError if first.rule == "tool_pairing" else HistoryError
    raise kind(
        f"message {index}: {first.message}",
        index=index,
        tool_use_id=first.tool_use_id,
        rule=first.rule,
    )


def tail_marks(
    view: Sequence[Message], request: Incoming, digests: Sequence[str]
) -> tuple[Mark, ...]:
    """Where the request's last items start in ``view``, for an edit of them next time: a mark
    for each of the last ``EDIT_DEPTH`` positions whose items became the view's tail (the
    same messages, their content perhaps shortened by compaction)."""
    marks: list[Mark] = []
    count = len(request.items)
    for at in range(count - 1, max(count - EDIT_DEPTH, 0) - 1, -1):
        try:
            tail = request.convert(request.items[at:], at)
        except FormatError:
            continue  # a tail that cannot stand alone (a tool output without its call)
        if 0 < len(tail) < len(view) and _shapes(view[-len(tail) :]) == _shapes(tail):
            marks.append(Mark(at, digests[at], len(tail)))
    return tuple(marks)


def _shapes(messages: Sequence[Message]) -> list[tuple[Any, ...]]:
    """What compaction keeps of the latest messages when it shortens their content: roles,
    block types and tool ids (so the view's tail is known to be what these items became)."""
    return [
        (
            m.role,
            tuple(b.type for b in m.content),
            tuple(u.id for u in m.tool_uses),
            tuple(r.tool_use_id for r in m.tool_results),
        )
        for m in messages
    ]


def _held(log: Sequence[LogEntry], new: Sequence[Message]) -> int:
    """How many of the request's messages ``new`` a session without a turn record already holds:
    all of its written view, when that view is where ``new`` starts (the session's first turn was
    written and the process died before recording it, so the client's retry is stored once)."""
    view = _written_view(log, 0)
    return len(view) if view and view == tuple(new[: len(view)]) else 0


def _already_added(log: Sequence[LogEntry], latest: Turn, new: Sequence[Message]) -> int:
    """How many of ``new`` a turn that crashed before its record already added: the tail of the
    view its adds left equals them (a retry after a crash is stored once)."""
    view = _written_view(log, latest.version + 1)
    for n in range(min(len(new), len(view)), 0, -1):
        if view[-n:] == tuple(new[:n]):
            return n
    return 0


def _written_view(log: Sequence[LogEntry], start: int) -> tuple[Message, ...]:
    """The view as the messages added from log entry ``start`` on left it, before anything the
    turn did after them (its compaction snips what the client sends again, so the view it left
    is no longer where the retry's items start); () when none were added. Found from the log,
    not the view: the turn that added them was cut off before its record."""
    for end in range(len(log), start, -1):
        if isinstance(log[end - 1], MessageAdded):
            return tuple(derive_view(log[:end]))
    return ()


def prompt_usage(usage: Any) -> dict[str, int]:
    """The prompt part of a reply's usage (Anthropic or OpenAI), without the reply's tokens."""
    if not isinstance(usage, dict):
        return {}
    fields = OPENAI_INPUT_FIELDS if "prompt_tokens" in usage else INPUT_USAGE_FIELDS
    return {k: v for k in fields if isinstance(v := usage.get(k), int) and not isinstance(v, bool)}
