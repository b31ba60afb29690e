"""Server-sent events passed through one event at a time: each event's bytes go out as they came
(or rewritten, when the proxy adds what the API would report), and its JSON ``data`` is read on
the side for usage. Nothing waits for more than the event it is in; each byte is scanned once,
and an event over ``MAX_EVENT_BYTES`` is passed on unread instead of held."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

SEPARATOR = re.compile(rb"\r?\n\r?\n")
"""The blank line that ends an event (LF or CRLF line ends)."""
SEPARATOR_REACH = 3
"""Bytes before a chunk's end a separator split across chunks may start at (it has 2-4)."""
MAX_EVENT_BYTES = 4 * 1024 * 1024
"""Bytes one event may hold and still be read: the API events the proxy reads (usage,
message_start) are a few KB; a larger one (or a stream without separators) passes unread."""


@dataclass(frozen=True, slots=True)
class Event:
    raw: bytes
    """The event's bytes, its terminating blank line included."""
    name: str | None
    data: Any
    """The parsed JSON of its ``data`` lines; None when there is none or it is not JSON."""

    def with_data(self, data: Any) -> bytes:
        """The event re-encoded with new ``data`` (same event name)."""
        head = f"event: {self.name}\n" if self.name else ""
        return f"{head}data: {json.dumps(data)}\n\n".encode()


class EventReader:
    """Feed it chunks as they arrive; it returns the events each completes."""

    def __init__(self) -> None:
        self._pending = bytearray()
        self._scanned = 0
        """Where the next separator search starts: bytes before it hold none."""
        self._oversized = False
        """The pending bytes are the tail of an event already passed on unread."""

    @property
    def buffered(self) -> int:
        """Bytes held for an event not yet complete."""
        return len(self._pending)

    def feed(self, chunk: bytes) -> list[Event]:
        pending = self._pending
        pending += chunk
        events: list[Event] = []
        start = 0
        while (end := SEPARATOR.search(pending, self._scanned)) is not None:
            raw = bytes(pending[start : end.end()])
            events.append(Event(raw, None, None) if self._oversized else _event(raw))
            start = self._scanned = end.end()
            self._oversized = False
        del pending[:start]
        self._scanned = max(0, len(pending) - SEPARATOR_REACH)
        if len(pending) > MAX_EVENT_BYTES:
            events.append(Event(bytes(pending), None, None))
            pending.clear()
            self._scanned, self._oversized = 0, True
        return events

    def rest(self) -> bytes:
        """Bytes after the last complete event (a stream cut short), passed on as they are."""
        rest = bytes(self._pending)
        self._pending.clear()
        self._scanned = 0
        return rest


def _event(raw: bytes) -> Event:
    name: str | None = None
    data: list[bytes] = []
    for line in raw.splitlines():
        if line.startswith(b"event:"):
            name = line[6:].strip().decode("utf-8", "replace")
        elif line.startswith(b"data:"):
            data.append(line[5:].lstrip())
    try:
        value = json.loads(b"\n".join(data)) if data else None
    except ValueError:
        value = None  # e.g. OpenAI's closing "[DONE]"
    return Event(raw, name, value)
