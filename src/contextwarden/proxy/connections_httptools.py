"""The header deadline (``connections.HeaderDeadline``) on uvicorn's httptools protocol, in a
module of its own: importing it needs httptools, which ``connections`` only may have."""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from contextwarden.proxy.connections import HeaderDeadline


class HttpToolsDeadline(HeaderDeadline, HttpToolsProtocol):
    """uvicorn's httptools protocol with the header deadline."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._disarm()  # the headers are in: the body has its own deadline

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._waiting() and not self.transport.is_closing():
            self._arm()  # a pipelined request already parsed needs no deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _waiting(self) -> bool:
        # a request whose headers are in has the current cycle until its response is complete
        return self.cycle is None or self.cycle.response_complete
