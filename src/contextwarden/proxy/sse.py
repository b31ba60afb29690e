"""Server-sent events passed through one event at a time: each event's bytes go out as they came
(or rewritten, when the proxy adds what the API would report), and its JSON ``data`` is read on
the side for usage. Nothing waits for more than the event it is in."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

SEPARATOR = re.compile(rb"\r?\n\r?\n")
"""The blank line that ends an event (LF or CRLF line ends)."""


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
        self._pending = b""

    def feed(self, chunk: bytes) -> list[Event]:
        self._pending += chunk
        events: list[Event] = []
        while (end := SEPARATOR.search(self._pending)) is not None:
            raw, self._pending = self._pending[: end.end()], self._pending[end.end() :]
            events.append(_event(raw))
        return events

    def rest(self) -> bytes:
        """Bytes after the last complete event (a stream cut short), passed on as they are."""
        rest, self._pending = self._pending, b""
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
