"""A deadline for one phase of a request (the body's arrival, the upstream's headers and body, a
reply chunk's delivery): anyio's ``fail_after``, at a third of its cost, five times a request."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anyio import CancelScope


class Deadline:
    """``with Deadline(seconds):`` raises TimeoutError when its block is not done within
    ``seconds``, as ``anyio.fail_after`` does: an anyio cancel scope with that deadline (other
    cancellations pass through it untouched). A class rather than anyio's two nested generators,
    and the event loop's own clock (anyio's on asyncio) rather than a look-up of the running
    library: the proxy always runs on asyncio, under uvicorn."""

    __slots__ = ("_scope", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._scope: CancelScope | None = None

    def __enter__(self) -> None:
        import anyio

        deadline = asyncio.get_running_loop().time() + self.seconds
        self._scope = anyio.CancelScope(deadline=deadline)
        self._scope.__enter__()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        scope = self._scope
        assert scope is not None, "exited before it was entered"
        if scope.__exit__(kind, exc, traceback) and scope.cancelled_caught:
            # The scope swallowed the cancellation it raised, which only its deadline can have
            # asked for (no one else holds it): the deadline passed.
            raise TimeoutError
