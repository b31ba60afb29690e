"""Readings of a text worked out once per process: the loss report, the summary and microcompact
read the same tool results and assistant texts again at every compaction of a session.

A reading is a pure function of its arguments (texts and flags), so a remembered value is the one
a new call would give. Keys hold the texts' content ids, never the texts: what a reading found (an
excerpt, a few sentences) does not keep a long output alive. A short line (a decision, a line of
output) is its own key (``RememberedLines``): hashing it again costs less than its content id.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import lru_cache
from typing import Generic, TypeVar

from contextwarden.content_ids import content_id

T = TypeVar("T")

REMEMBERED_READINGS = 4096
"""How many readings each remembered function keeps, the least recently used forgotten first: a
long session's compactions re-read a few hundred results and texts; each value is a few lines."""
REMEMBERED_LINES = 8192
"""How many short lines' readings ``RememberedLines`` keeps, the least recently used forgotten
first."""
REMEMBERED_LINE_CHARS = 1000
"""Only lines this long or shorter are kept by ``RememberedLines``, so the memory stays small:
``REMEMBERED_LINES`` lines of at most this many characters."""


class Remembered(Generic[T]):
    """``fn`` with its values remembered by its arguments, each text by its content id.

    ``fn`` must be pure and return an immutable value (a str, a tuple, None): every caller gets
    the same object. Calls from several threads are safe (the proxy runs sync work in threads).
    """

    def __init__(self, fn: Callable[..., T], size: int = REMEMBERED_READINGS) -> None:
        self._fn = fn
        self._size = size
        self._values: OrderedDict[tuple[Hashable, ...], T] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, *args: str | bool | int | None) -> T:
        # sha256 of a 50,000-character output: some 0.1 ms; judging it, ten to a hundred times more
        key = tuple(content_id(a) if isinstance(a, str) else a for a in args)
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        value = self._fn(*args)
        with self._lock:
            self._values[key] = value
            while len(self._values) > self._size:
                self._values.popitem(last=False)
        return value


class RememberedLines(Generic[T]):
    """``fn`` of one line, remembered by the line itself when it is short
    (``REMEMBERED_LINE_CHARS``): a string keeps its hash, so asking again costs less than a
    content id, and a short line kept alive costs little. ``fn`` must be pure and return an
    immutable value (every caller gets the same object)."""

    def __init__(self, fn: Callable[[str], T], size: int = REMEMBERED_LINES) -> None:
        self._fn = fn
        self._remembered = lru_cache(maxsize=size)(fn)

    def __call__(self, line: str) -> T:
        if len(line) > REMEMBERED_LINE_CHARS:
            return self._fn(line)
        return self._remembered(line)

    def __len__(self) -> int:
        """How many lines' values are kept."""
        return self._remembered.cache_info().currsize
