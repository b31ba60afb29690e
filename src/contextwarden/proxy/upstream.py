"""Talking to the upstream model API (aiohttp): headers forwarded as the client sent them (its
API key included, never logged or stored), bodies re-sent, replies streamed back chunk by chunk,
and every phase bounded by ``--timeout``; a failure becomes an UpstreamError that says which."""

from __future__ import annotations

import socket
import urllib.request
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from contextwarden.errors import UpstreamError, require
from contextwarden.proxy.deadlines import Deadline

if TYPE_CHECKING:
    import aiohttp

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
"""Headers that describe one connection, not the message (RFC 9110 §7.6.1): never forwarded."""
NOT_FORWARDED = HOP_BY_HOP | {"host", "content-length", "accept-encoding", "expect"}
"""Also recomputed per hop: the body changes size, asking for identity encoding lets the proxy
read usage out of the reply while passing its bytes through as they arrive, and the proxy holds
the whole body already (a client's ``expect: 100-continue`` would make the upstream client wait
a round trip for leave to send it)."""
NOT_RETURNED = HOP_BY_HOP | {"content-length", "content-encoding"}
OWN_HEADER_PREFIX = "x-contextwarden-"
"""Headers meant for the proxy itself (the session id); the upstream does not see them."""
NOT_ADDED = ("User-Agent", "Content-Type")
"""Headers the client library would add of its own when the client sent none: the upstream sees
the client's headers, not the proxy's."""
CONNECT_TIMEOUT = 30.0
"""Seconds to open a connection, at most (``--timeout`` when that is shorter)."""
HEADERS = "before its reply's headers"
BODY = "while sending its whole reply"
STREAM = "while streaming its reply"
"""The phases an UpstreamError names."""


def request_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The client's headers to send upstream, unchanged but for per-hop ones and ours."""
    kept = {
        k: v
        for k, v in headers.items()
        if k.lower() not in NOT_FORWARDED and not k.lower().startswith(OWN_HEADER_PREFIX)
    }
    return {**kept, "accept-encoding": "identity"}


def response_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The upstream's reply headers to return to the client (request ids, rate limits …)."""
    return {k: v for k, v in headers.items() if k.lower() not in NOT_RETURNED}


class Reply:
    """An upstream reply: its status and headers, and its body, read or streamed through
    ``Upstream`` (``read``, ``chunks``), or held in memory (``Reply.held``)."""

    def __init__(
        self,
        status_code: int,
        headers: Mapping[str, str],
        response: aiohttp.ClientResponse | None = None,
        data: bytes | None = None,
    ) -> None:
        self.status_code = status_code
        self.headers = headers
        """Case-insensitive, as the upstream sent them."""
        self._response = response
        self._data = data

    @classmethod
    def held(cls, reply: Reply, data: bytes) -> Reply:
        """``reply`` again, its body ``data`` from memory (read already)."""
        return cls(reply.status_code, reply.headers, data=data)

    @property
    def socket(self) -> Any:
        """The connection's socket while the reply is being read (None once released)."""
        connection = self._response.connection if self._response is not None else None
        transport = connection.transport if connection is not None else None
        return transport.get_extra_info("socket") if transport is not None else None

    async def body(self) -> bytes:
        """The whole body, kept: reading it again (a 400 read to see whether it says "prompt is
        too long", then relayed) returns the same bytes after the connection is given back."""
        if self._data is None:
            self._data = await self._response.read() if self._response is not None else b""
        return self._data

    async def parts(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (all at once when read already)."""
        if self._data is not None or self._response is None:
            yield await self.body()
            return
        async for chunk in self._response.content.iter_any():
            yield chunk

    async def aclose(self) -> None:
        """Give the connection back: to the pool when the body was read to its end, else closed."""
        if self._response is not None:
            self._response.release()


class Upstream:
    """One pooled HTTP client for the upstream API root; each phase of a request under
    ``timeout`` seconds (aiohttp bounds each read, the deadlines here the whole)."""

    def __init__(self, base_url: str, timeout: float) -> None:
        aiohttp_module: Any = require("aiohttp", "proxy")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._failures: tuple[type[Exception], ...] = (TimeoutError, aiohttp_module.ClientError)
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        """The session, made on first use: aiohttp binds it to the running event loop."""
        if self._session is None:
            import aiohttp

            self._session = aiohttp.ClientSession(
                # no cap on connections: --max-connections bounds the requests served at once
                connector=aiohttp.TCPConnector(limit=0),
                timeout=aiohttp.ClientTimeout(
                    total=None, connect=min(self.timeout, CONNECT_TIMEOUT), sock_read=self.timeout
                ),
                cookie_jar=aiohttp.DummyCookieJar(),  # one caller's cookies never reach another
                skip_auto_headers=NOT_ADDED,
                proxy=environment_proxy(self.base_url),
            )
        return self._session

    async def send(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        query: str = "",
    ) -> Reply:
        """Send and return the reply with its body not yet read (the caller streams it)."""
        from yarl import URL

        url = URL(self.base_url + path + (f"?{query}" if query else ""), encoded=True)
        try:
            with Deadline(self.timeout):
                response = await self._client().request(
                    method, url, headers=request_headers(headers), data=body, allow_redirects=False
                )
        except self._failures as exc:
            raise self.failure(exc, HEADERS) from exc
        reply = Reply(response.status, response.headers, response)
        acknowledge(reply)
        return reply

    async def read(self, reply: Reply) -> bytes:
        """A non-streaming reply's whole body, within ``timeout`` (a dripping reply ends)."""
        try:
            with Deadline(self.timeout):
                return await reply.body()
        except self._failures as exc:
            raise self.failure(exc, BODY) from exc
        finally:
            await reply.aclose()

    async def chunks(self, reply: Reply) -> AsyncIterator[bytes]:
        """The reply's bytes as they arrive (identity encoding); each within ``timeout``."""
        try:
            async for chunk in reply.parts():
                acknowledge(reply)
                yield chunk
        except self._failures as exc:
            raise self.failure(exc, STREAM) from exc

    def failure(self, exc: Exception, phase: str) -> UpstreamError:
        """``exc`` (aiohttp's, or a deadline's) as an UpstreamError naming what happened."""
        import aiohttp

        timed_out = isinstance(exc, TimeoutError)
        if timed_out:
            what = f"took longer than --timeout {self.timeout:g} s {phase}"
        elif isinstance(exc, aiohttp.ClientConnectorError):
            what = f"could not be reached ({exc or type(exc).__name__}); check --upstream"
        else:
            detail = str(exc) or "the connection was reset"
            what = f"broke the connection {phase}: {type(exc).__name__}: {detail}"
        message = f"the upstream {self.base_url} {what}"
        return UpstreamError(message, phase=phase, upstream=self.base_url, timed_out=timed_out)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


def environment_proxy(base_url: str) -> str | None:
    """The HTTP proxy the environment names for ``base_url`` (``HTTPS_PROXY``, ``HTTP_PROXY``,
    ``ALL_PROXY``, minus ``NO_PROXY``), as HTTP clients honour them; None for none."""
    parts = urlsplit(base_url)
    if parts.hostname is None or urllib.request.proxy_bypass(parts.hostname):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")


def acknowledge(reply: Reply) -> None:
    """Acknowledge what the upstream sent at once (TCP_QUICKACK) instead of after Linux's
    delayed-ACK timer (40 ms): an HTTP/1.1 server that writes its headers and its body in two
    sends without TCP_NODELAY holds the body back until the headers are acknowledged, and on a
    kept-alive connection the ACK waits for the timer. A no-op where the option does not exist."""
    sock = reply.socket
    if sock is not None and hasattr(socket, "TCP_QUICKACK"):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        except OSError:
            pass  # not a TCP socket: nothing to acknowledge early
