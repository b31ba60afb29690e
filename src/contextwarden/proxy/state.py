"""The running proxy's state (``Proxy``): sessions, the upstream client, counters, per-session
locks, and the worker threads that keep store, compaction and large-body work off the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from contextwarden.proxy.anchors import Anchors
from contextwarden.proxy.config import ProxyConfig
from contextwarden.proxy.guard import read_body
from contextwarden.proxy.metrics import Metrics
from contextwarden.proxy.sessions import Sessions
from contextwarden.proxy.upstream import Upstream

if TYPE_CHECKING:
    from starlette.requests import Request

T = TypeVar("T")

MANAGE_THREADS = 4
"""Worker threads managing sessions at once: the work is CPU-bound, so more than the cores
gains nothing, and each may hold two store connections (a session lock and an append)."""
OFFLOAD_BYTES = 1024 * 1024
"""A body or SSE buffer this large is parsed or rendered in a worker thread, off the event loop.
A parse holds the interpreter lock throughout, so a smaller one stalls the loop as long in a
thread as inline (0.45 ms for 0.28 MB, a 100,000-token request), and the hop there and back is
a wait of its own on a busy machine (p90 +2 ms at load 19); from about a megabyte the thread
lets the loop in between (a 19 MB parse: its longest stall 118 ms threaded, 203 ms inline)."""


@dataclass
class Proxy:
    """The app's state: sessions, the upstream client, counters, per-session locks."""

    sessions: Sessions
    upstream: Upstream
    config: ProxyConfig
    metrics: Metrics = field(default_factory=Metrics)
    anchors: Anchors = field(default_factory=Anchors)
    _locks: dict[str, tuple[asyncio.Lock, int]] = field(default_factory=dict)
    _limiter: Any = None

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a worker thread (store and compaction work blocks)."""
        import anyio

        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(MANAGE_THREADS)
        return await anyio.to_thread.run_sync(fn, *args, limiter=self._limiter)

    async def offload(self, size: int, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)``, in a worker thread when it works on ``size`` ≥ OFFLOAD_BYTES bytes."""
        import anyio

        if size < OFFLOAD_BYTES:
            return fn(*args)
        return await anyio.to_thread.run_sync(fn, *args)

    async def body(self, request: Request) -> bytearray:
        """The request's body, within ``--max-body`` and ``--client-timeout`` (RequestRefused
        otherwise)."""
        return await read_body(request, self.config.max_body, self.config.client_timeout)

    @property
    def place_breakpoints(self) -> bool:
        return self.config.cache == "auto"

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Serialize one session's work in this process; other sessions never wait on it."""
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
