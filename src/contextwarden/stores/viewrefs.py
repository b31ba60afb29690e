"""A compaction's view written as references to the messages the log already holds.

Each CompactionBoundary records the whole new view, and most of it is the view before it,
unchanged: written whole every time, a session that compacts on every request stores its view
once per request (a 12-request LangChain run: 2.0 MB of 2.03 MB were repeated views). A SQL store
writes each unchanged message as ``{"ref": seq}`` (the message of MessageAdded event ``seq``) or
``{"ref": seq, "at": i}`` (item ``i`` of compaction event ``seq``, always a message written whole
there: references are never chained), and the log grows with what is new. Reading resolves them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from contextwarden.errors import StoreError
from contextwarden.log import CompactionBoundary, LogEntry, MessageAdded
from contextwarden.model import Message, MessageMeta
from contextwarden.repair import merge_messages
from contextwarden.stores.codec import (
    Ref,
    Resolve,
    decode_object,
    message_from_json,
    parse,
    ref_of,
)

__all__ = ["Fetch", "PlacedView", "decode_rows", "placed_view"]

Fetch = Callable[[int], "str | bytes | None"]
"""The stored body of event ``seq`` of the session being read (None: there is none)."""
Row = tuple[int, "str | bytes"]


class PlacedView:
    """The view at one point of a stored log, with where each of its messages is stored (None:
    nowhere whole, e.g. a message merged from several events). A local builder: followed event
    by event, then asked for the references of a new view."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.places: list[Ref | None] = []

    def add(self, seq: int, entry: LogEntry, refs: Sequence[Ref | None] = ()) -> None:
        """Follow event ``seq``; ``refs``: for a compaction, how its view was written (a
        reference, or None where the message is written whole in it)."""
        if isinstance(entry, CompactionBoundary):
            self.messages = list(entry.view)
            written = refs or [None] * len(entry.view)
            self.places = [ref or (seq, i) for i, ref in enumerate(written)]
        elif isinstance(entry, MessageAdded):
            if entry.merge and self.messages:
                self.messages[-1] = merge_messages(self.messages[-1], entry.message)
                self.places[-1] = None
            else:
                self.messages.append(entry.message)
                self.places.append((seq, None))

    def refs(self, view: Sequence[Message]) -> list[Ref | None]:
        """For each message of ``view``: where the same message is stored, or None. The same
        means its meta too (``Message`` equality leaves meta out): a reference restores both."""
        stored: dict[tuple[Message, MessageMeta], Ref] = {}
        for message, place in zip(self.messages, self.places, strict=True):
            if place is not None:
                stored.setdefault((message, message.meta), place)
        return [stored.get((message, message.meta)) for message in view]


def decode_rows(rows: Iterable[Row], where: str, fetch: Fetch | None = None) -> list[LogEntry]:
    """The events of ``rows`` (seq, body) in order; a reference to an event before them is read
    with ``fetch`` (None: every reference must point into ``rows``, as in a whole log)."""
    decoded: dict[int, LogEntry] = {}
    resolve = _resolver(decoded, fetch, where)
    for seq, body in rows:
        label = f"{where} event {seq}"
        decoded[seq] = decode_object(parse(body, where=label), where=label, resolve=resolve)
    return list(decoded.values())


def placed_view(rows: Iterable[Row], where: str, fetch: Fetch) -> PlacedView:
    """The view after ``rows`` (from the last compaction on), with where each message is."""
    view = PlacedView()
    decoded: dict[int, LogEntry] = {}
    resolve = _resolver(decoded, fetch, where)
    for seq, body in rows:
        label = f"{where} event {seq}"
        raw = parse(body, where=label)
        entry = decode_object(raw, where=label, resolve=resolve)
        decoded[seq] = entry
        refs = [ref_of(m) for m in raw["view"]] if isinstance(entry, CompactionBoundary) else []
        view.add(seq, entry, refs)
    return view


def _resolver(decoded: Mapping[int, LogEntry], fetch: Fetch | None, where: str) -> Resolve:
    fetched: dict[int, Any] = {}

    def resolve(seq: int, at: int | None) -> Message:
        entry = decoded.get(seq)
        if entry is not None:
            message = _message_in(entry, at)
        elif fetch is not None:
            if seq not in fetched:
                body = fetch(seq)
                fetched[seq] = parse(body, where=f"{where} event {seq}") if body else None
            message = _message_in_raw(fetched[seq], at)
        else:
            message = None
        if message is None:
            raise StoreError(
                f"{where}: a compaction refers to event {seq}"
                + (f" item {at}" if at is not None else "")
                + ", which holds no such message; the stored log was changed outside contextwarden"
            )
        return message

    return resolve


def _message_in(entry: LogEntry, at: int | None) -> Message | None:
    if at is None:
        return entry.message if isinstance(entry, MessageAdded) else None
    if isinstance(entry, CompactionBoundary) and 0 <= at < len(entry.view):
        return entry.view[at]
    return None


def _message_in_raw(raw: Any, at: int | None) -> Message | None:
    """The message a reference names in a stored body, read without its other references
    (references are never chained, so the named item is a message written whole)."""
    if type(raw) is not dict:
        return None
    if at is None:
        item = raw.get("message") if raw.get("type") == "message" else None
    else:
        view = raw.get("view") if raw.get("type") == "compaction" else None
        item = view[at] if type(view) is list and 0 <= at < len(view) else None
    if type(item) is not dict or ref_of(item) is not None:
        return None
    try:
        return message_from_json(item)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise StoreError(f"a compaction's reference names a malformed message ({exc!r})") from exc
