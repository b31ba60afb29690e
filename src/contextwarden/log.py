"""The append-only log of a session: what was added, what compaction did, what the API reported.

The view a model sees is derived from it: the last compaction boundary's view plus every message
added after it. Nothing is ever removed from the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from contextwarden.model import EMPTY, FrozenDict, Message, slot_setters
from contextwarden.repair import merge_messages


@dataclass(frozen=True, slots=True)
class Preamble:
    """The system prompt and tool definitions in force from this point on."""

    system: str | tuple[FrozenDict, ...] | None
    tools: tuple[FrozenDict, ...] = ()


@dataclass(frozen=True, slots=True, init=False)
class MessageAdded:
    """A message joined the view; with ``merge`` it was merged into the view's last message.

    ``tokens``: what the view's message this entry produced (the merged one with ``merge``)
    costs, as counted by the counter whose ``cache_key`` is ``counter``; a history restoring the
    log with the same counter reuses it instead of counting again. Both are None when unknown,
    and neither takes part in equality (they describe the message, they are not part of it).
    """

    message: Message
    merge: bool = False
    tokens: int | None = field(default=None, compare=False)
    counter: str | None = field(default=None, compare=False)

    def __init__(
        self,
        message: Message,
        merge: bool = False,
        tokens: int | None = None,
        counter: str | None = None,
    ) -> None:
        # One entry per add: slots set directly (see model.slot_setters).
        set_message, set_merge, set_tokens, set_counter = _ADDED_SETTERS
        set_message(self, message)
        set_merge(self, merge)
        set_tokens(self, tokens)
        set_counter(self, counter)


_ADDED_SETTERS = slot_setters(MessageAdded, "message", "merge", "tokens", "counter")


@dataclass(frozen=True, slots=True)
class UsageRecorded:
    """A real API response said the context up to this point costs ``total`` tokens."""

    total: int
    raw: FrozenDict = EMPTY


@dataclass(frozen=True, slots=True)
class CompactionBoundary:
    """A compaction replaced the view: ``view`` is the whole new view at this point."""

    strategy: str
    trigger: str
    tokens_before: int
    tokens_after: int
    replaced: int
    """How many messages of the previous view the new one replaced."""
    view: tuple[Message, ...]
    summary: str | None = None
    timestamp: float | None = None
    details: FrozenDict = field(default=EMPTY)


@dataclass(frozen=True, slots=True)
class MetadataSet:
    """A session fact that is not conversation (e.g. the circuit breaker's failure count)."""

    key: str
    value: Any


LogEntry: TypeAlias = Preamble | MessageAdded | UsageRecorded | CompactionBoundary | MetadataSet


def derive_view(entries: Sequence[LogEntry]) -> list[Message]:
    """The current view: the last boundary's view plus every message added after it."""
    view: list[Message] = []
    for entry in entries:
        if isinstance(entry, CompactionBoundary):
            view = list(entry.view)
        elif isinstance(entry, MessageAdded):
            if entry.merge and view:
                view[-1] = merge_messages(view[-1], entry.message)
            else:
                view.append(entry.message)
    return view


def last_boundary_index(entries: Sequence[LogEntry]) -> int | None:
    for i in range(len(entries) - 1, -1, -1):
        if isinstance(entries[i], CompactionBoundary):
            return i
    return None


def current_metadata(entries: Sequence[LogEntry]) -> dict[str, Any]:
    """The latest value of every metadata key."""
    return {e.key: e.value for e in entries if isinstance(e, MetadataSet)}


def stored_counts(entries: Sequence[LogEntry], key: str | None) -> list[int | None]:
    """The count stored for each message of ``derive_view(entries)`` by a counter with ``key``;
    None where there is none (boundary views, other counters, older logs): those are counted."""
    counts: list[int | None] = []
    for entry in entries:
        if isinstance(entry, CompactionBoundary):
            counts = [None] * len(entry.view)
        elif isinstance(entry, MessageAdded):
            known = entry.tokens if key is not None and entry.counter == key else None
            if entry.merge and counts:
                counts[-1] = known
            else:
                counts.append(known)
    return counts


def last_anchor(entries: Sequence[LogEntry]) -> tuple[int, int] | None:
    """(usage total, view length it covers) of the last usage since the last boundary, if any."""
    found: tuple[int, int] | None = None
    length = 0
    for entry in entries:
        if isinstance(entry, CompactionBoundary):
            found, length = None, len(entry.view)
        elif isinstance(entry, MessageAdded):
            length += 0 if entry.merge and length else 1
        elif isinstance(entry, UsageRecorded):
            found = (entry.total, length)
    return found
