"""Reading server-sent events on the side while their bytes pass through untouched: the proxy
needs only the usage a stream reports, and must not hold back a single event to get it."""

from __future__ import annotations

import json
from typing import Any

MAX_PENDING = 1 << 20
"""Bytes of an unfinished event kept for parsing; a longer event is passed through unread."""


class EventReader:
    """Feed it chunks as they arrive; it yields each complete event's JSON ``data``."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> list[Any]:
        data = (self._pending + chunk).replace(b"\r\n", b"\n")
        *events, self._pending = data.split(b"\n\n")
        if len(self._pending) > MAX_PENDING:
            self._pending = b""
        return [value for raw in events if (value := _data(raw)) is not None]


def _data(raw: bytes) -> Any:
    lines = [line[5:].lstrip() for line in raw.split(b"\n") if line.startswith(b"data:")]
    if not lines:
        return None
    try:
        return json.loads(b"\n".join(lines))
    except ValueError:
        return None  # e.g. OpenAI's closing "[DONE]"
