"""Readings of a text worked out once per process: the loss report, the summary and microcompact
read the same tool results and assistant texts again at every compaction of a session.

A reading is a pure function of its arguments (texts and flags), so a remembered value is the one
a new call would give. Keys hold the texts' content ids, never the texts: what a reading found (an
excerpt, a few sentences) does not keep a long output alive.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from contextwarden.content_ids import content_id

T = TypeVar("T")

REMEMBERED_READINGS = 4096
"""How many readings each remembered function keeps, the least recently used forgotten first: a
long session's compactions re-read a few hundred results and texts; each value is a few lines."""


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
