"""The proxy's connections on uvicorn: a client must send each request's headers within
``--client-timeout`` (uvicorn's parsers wait for them forever, so a client sending them a byte
at a time would hold a connection for as long as it likes), and at most ``--max-connections``
requests are served at once (uvicorn answers the rest 503).

Served on uvicorn's httptools parser where it is installed (``connections_httptools``), on h11
otherwise. Imported by ``serve`` only, where uvicorn is already required."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from abc import ABC, abstractmethod

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from contextwarden.proxy.guard import peer

log = logging.getLogger("contextwarden.proxy")

TIMED_OUT_TEXT = b"the request headers took too long to arrive (--client-timeout)\n"
HEADERS_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-type: text/plain\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(TIMED_OUT_TEXT), TIMED_OUT_TEXT)
)
"""What a client whose headers did not arrive in time is told before its connection closes
(written raw: the parser has no response to send before it has a request)."""
FAST_PARSER = importlib.util.find_spec("httptools") is not None
"""Whether uvicorn's httptools parser (C, llhttp) is installed: the proxy serves on it, a small
request ~0.2 ms cheaper than on h11 (pure Python; docs/benchmarks.md), and on h11 without it."""


class HeaderDeadline(ABC):
    """The header deadline, for either of uvicorn's protocols (this class comes first among the
    bases): from the moment the connection opens, and again from the end of each response (the
    next request on a kept-alive connection). A client whose headers are not all in by then is
    told 408 and has its connection closed."""

    header_timeout: float = 0.0
    """Seconds (set by ``serve.header_deadline``)."""
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    client: tuple[str, int] | None
    _deadline: asyncio.TimerHandle | None = None

    @abstractmethod
    def _waiting(self) -> bool:
        """Whether the connection waits for a request's headers (it serves none)."""

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.header_timeout, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if not self._waiting() or self.transport.is_closing():
            return
        log.warning(
            "client %s sent no complete request headers in %g s; connection closed",
            peer(self.client),
            self.header_timeout,
        )
        self.transport.write(HEADERS_TIMED_OUT)
        self.transport.close()


class H11Deadline(HeaderDeadline, H11Protocol):
    """uvicorn's h11 protocol with the header deadline."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self._waiting():  # the headers are in: the body has its own deadline
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._waiting() and not self.transport.is_closing():
            self._arm()  # a pipelined request already parsed above needs no deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _waiting(self) -> bool:
        return self.conn.their_state is h11.IDLE
