"""Proxy sessions: which stored conversation a request belongs to, and its managed form.

Clients resend the whole conversation every turn. Each managed turn is recorded in the session's
log as ``proxy.turn`` metadata (how many incoming items, a hash chain over them, the log version
after management), so a request is matched to the longest prefix already seen: only the new
items are added, a retry of a turn gets exactly the view that turn got (never compacted twice),
and a conversation that branched off an earlier point continues in a fork session of its own.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from contextwarden.compaction.apply import CompactionReport
from contextwarden.errors import ContextOverflowError, ContextWardenError
from contextwarden.history import ConversationHistory
from contextwarden.log import LogEntry, MetadataSet, derive_view
from contextwarden.manager import ContextManager
from contextwarden.model import Message, thaw
from contextwarden.proxy import edits
from contextwarden.proxy.edits import ClearToolUses
from contextwarden.stores.base import SessionStore, validate_session_id
from contextwarden.stores.binding import open_history
from contextwarden.tokens.base import TokenCounter

TURN_KEY = "proxy.turn"
"""Metadata key of the record each managed turn leaves in the session log."""
KEY_HASH_CHARS = 32
"""Hex digits of the hashes that name sessions (128 bits: no collisions in practice)."""
INPUT_USAGE_FIELDS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
"""Usage fields that measure the request's prompt (the reply is not in the view yet)."""
OPENAI_INPUT_FIELDS = ("prompt_tokens",)
MAX_OPEN_SESSIONS = 1_000
"""Histories kept in memory between requests (least recently used dropped first); a dropped one
is loaded from the store on its next request."""

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


@dataclass(frozen=True, slots=True)
class Turn:
    """A managed turn: ``incoming`` items with hash ``digest`` got the view at log ``version``."""

    incoming: int
    digest: str
    version: int
    applied_edits: tuple[Any, ...] = field(default=(), compare=False)


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


def session_key(header: str | None, system: Any, first_user: Any) -> str:
    """The session a request names: its ``x-contextwarden-session`` header when that is a valid
    id (a hash of it otherwise), else a hash of the system prompt and the first user message."""
    if header:
        try:
            return validate_session_id(header)
        except ContextWardenError:
            return "h-" + _digest(header)
    return "c-" + _digest(_canonical([system, first_user]))


def chain(items: Sequence[Any]) -> list[str]:
    """``chain[n]`` identifies ``items[:n]`` (a hash chain, so equal prefixes share values)."""
    out = [""]
    for item in items:
        out.append(_digest(out[-1] + _canonical(item)))
    return out


class Sessions:
    """Manages requests against a store (synchronous: the app runs it in worker threads).

    Histories are kept in memory between requests and reloaded when another process changed
    the session (its store version moved), so a session is loaded once per process, not per turn.
    Callers serialize the work of one session (``SessionLocks``); other sessions run in parallel.
    """

    def __init__(self, store: SessionStore, manager: ContextManager, counter: TokenCounter) -> None:
        self.store = store
        self.manager = manager
        self.counter = counter
        self._open: OrderedDict[str, ConversationHistory] = OrderedDict()
        self._guard = threading.Lock()

    # ----------------------------------------------------------------- per request
    def manage(self, request: Incoming) -> Managed:
        """Match ``request`` to its session and return the managed conversation to send."""
        with self.lock(request.key):
            return self._manage(request)

    def lock(self, session_id: str) -> AbstractContextManager[object]:
        """The store's lock on a session across processes, where the store has one."""
        hook = getattr(self.store, "session_lock", None)
        return hook(session_id) if hook is not None else nullcontext()

    def _manage(self, request: Incoming) -> Managed:
        digests = chain(request.items)
        session_id = request.key
        while True:  # at most one step per branch point the client introduced
            history = self.history(session_id, request.system, request.tools)
            turns = recorded_turns(history.log)
            best = _longest(turns, digests)
            latest = turns[-1] if turns else None
            if latest is None:
                return self._extend(session_id, history, request, digests, 0)
            if best is not None and best.incoming == len(request.items):
                return self._replay(session_id, history, best, latest)
            if best is not None and best == latest:
                return self._extend(session_id, history, request, digests, best.incoming)
            at = best.incoming if best is not None else 0
            session_id = "f-" + _digest(session_id + digests[at] + digests[at + 1])

    def force_compact(self, key: str, managed: Managed, items: Sequence[Any]) -> Managed:
        """Summarize now (the upstream said the prompt is too long) and re-record the turn, so
        a retry of this request gets the compacted view too."""
        with self.lock(key):
            history = self._current(managed.session_id)
            report = self.manager.compact(history)
            return self._record(managed.session_id, history, chain(items), len(items), 0, report)

    def record_usage(self, key: str, managed: Managed, usage: Any) -> bool:
        """Anchor the ledger on the reply's prompt usage, if the session is still as it was."""
        prompt = prompt_usage(usage)
        if managed.report is None or not prompt:
            return False
        with self.lock(key):
            if self.store.version(managed.session_id) != managed.version:
                return False
            self._current(managed.session_id).record_usage(prompt)
            return True

    # ----------------------------------------------------------------- steps
    def _extend(
        self,
        session_id: str,
        history: ConversationHistory,
        request: Incoming,
        digests: Sequence[str],
        seen: int,
    ) -> Managed:
        new = request.items[seen:]
        for message in request.convert(new, seen):
            history.add(message)
        applied = edits.apply(self.manager, history, request.edits)
        report = self.manager.prepare(history)
        limit = self.manager.policy.effective_window
        if history.estimate_tokens() > limit:  # prepare() raises first unless told to flag
            raise ContextOverflowError(history.estimate_tokens(), limit)
        count = len(request.items)
        return self._record(session_id, history, digests, count, len(new), report, applied)

    def _record(
        self,
        session_id: str,
        history: ConversationHistory,
        digests: Sequence[str],
        count: int,
        new: int,
        report: CompactionReport | None,
        applied: Sequence[Any] = (),
    ) -> Managed:
        turn = {"incoming": count, "digest": digests[count], "version": len(history.log)}
        history.set_metadata(TURN_KEY, {**turn, "applied_edits": list(applied)})
        tokens = history.estimate_tokens()
        return Managed(
            session_id, history.messages, len(history.log), new, tokens, report, tuple(applied)
        )

    def _replay(
        self, session_id: str, history: ConversationHistory, turn: Turn, latest: Turn
    ) -> Managed:
        if turn == latest:
            messages = history.messages
        else:
            messages = tuple(derive_view(history.log[: turn.version]))
        tokens = sum(self.counter.count_message(m) for m in messages)
        applied = turn.applied_edits
        return Managed(session_id, messages, len(history.log), 0, tokens, None, applied)

    # ----------------------------------------------------------------- histories
    def history(
        self, session_id: str, system: Any = None, tools: list[dict[str, Any]] | None = None
    ) -> ConversationHistory:
        """The session's history, up to date with the store and with this preamble."""
        cached = self._fresh(session_id)
        if cached is not None and cached.system == system and cached.tools == (tools or []):
            return cached
        history = open_history(
            self.store,
            session_id,
            system=system,
            tools=tools or [],
            mode="merge",
            counter=self.counter,
        )
        with self._guard:
            self._open[session_id] = history
            while len(self._open) > MAX_OPEN_SESSIONS:
                self._open.popitem(last=False)  # least recently used; the store keeps it
        return history

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

    def _current(self, session_id: str) -> ConversationHistory:
        cached = self._fresh(session_id)
        if cached is not None:
            return cached
        return self.history(session_id, *self._preamble(session_id))

    def _preamble(self, session_id: str) -> tuple[Any, list[dict[str, Any]]]:
        history = self.store.load(session_id, counter=self.counter, mode="merge")
        return history.system, history.tools


def recorded_turns(log: Sequence[LogEntry]) -> list[Turn]:
    """The ``proxy.turn`` records of a session log, oldest first."""
    turns = []
    for entry in log:
        if isinstance(entry, MetadataSet) and entry.key == TURN_KEY:
            value = thaw(entry.value)
            applied = tuple(value.get("applied_edits") or ())
            turn = Turn(
                int(value["incoming"]), str(value["digest"]), int(value["version"]), applied
            )
            turns.append(turn)
    return turns


def prompt_usage(usage: Any) -> dict[str, int]:
    """The prompt part of a reply's usage (Anthropic or OpenAI), without the reply's tokens."""
    if not isinstance(usage, dict):
        return {}
    fields = OPENAI_INPUT_FIELDS if "prompt_tokens" in usage else INPUT_USAGE_FIELDS
    return {k: v for k in fields if isinstance(v := usage.get(k), int) and not isinstance(v, bool)}


def _longest(turns: Sequence[Turn], digests: Sequence[str]) -> Turn | None:
    """The latest-recorded turn among those with the longest prefix matching ``digests``."""
    best: Turn | None = None
    for turn in turns:
        if turn.incoming < len(digests) and digests[turn.incoming] == turn.digest:
            if best is None or turn.incoming >= best.incoming:
                best = turn
    return best


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:KEY_HASH_CHARS]
