"""Anchoring a session's token count on a reply's usage, off the reply's path: the session's
lock is taken before the reply goes out, so the session's next turn waits for the anchor, and
the store write runs while the reply travels. A lost anchor only costs the count's accuracy: a
crash before the write, or, with several processes on one store, a next turn that another
process records first (the anchor then finds the session moved on and is dropped)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any, Protocol, TypeVar

from contextwarden.errors import ContextWardenError
from contextwarden.proxy.sessions import Sessions
from contextwarden.proxy.values import Managed

log = logging.getLogger("contextwarden.proxy")
T = TypeVar("T")


class Holder(Protocol):
    """What anchoring needs of the running proxy (``proxy.state.Proxy`` is one)."""

    sessions: Sessions

    def hold(self, key: str) -> AbstractAsyncContextManager[None]: ...

    async def run(self, fn: Callable[..., T], *args: Any) -> T: ...


class Anchors:
    """The anchors being written, one task each; ``settled`` waits for them all."""

    def __init__(self) -> None:
        self._pending: set[asyncio.Task[None]] = set()

    async def start(self, proxy: Holder, usage: Any, key: str, managed: Managed) -> bool:
        """Take session ``key``'s lock and write the anchor in the background; False when
        there is nothing to anchor (no usage, or a replayed turn)."""
        if usage is None or managed.report is None:
            return False
        held = AsyncExitStack()
        await held.enter_async_context(proxy.hold(key))
        task = asyncio.get_running_loop().create_task(self._write(proxy, held, usage, key, managed))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        return True

    async def _write(
        self, proxy: Holder, held: AsyncExitStack, usage: Any, key: str, managed: Managed
    ) -> None:
        async with held:
            try:
                await proxy.run(proxy.sessions.record_usage, key, managed, usage)
            except ContextWardenError as exc:
                log.warning("session %s: usage not recorded: %s", managed.session_id, exc)
            except Exception:  # a bug: no client waits on this task to be told
                log.exception("contextwarden proxy bug while recording usage")

    async def settled(self) -> None:
        """Return once every anchor started so far is written (or failed and was logged)."""
        while self._pending:
            await asyncio.gather(*self._pending)
