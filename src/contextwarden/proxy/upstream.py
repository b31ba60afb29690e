"""Talking to the upstream model API: headers forwarded as the client sent them (its API key
included, never logged or stored), bodies re-sent, replies streamed back chunk by chunk, and
every phase bounded by ``--timeout``; a failure becomes an UpstreamError that says which."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from contextwarden.errors import UpstreamError, require

if TYPE_CHECKING:
    import httpx

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
NOT_FORWARDED = HOP_BY_HOP | {"host", "content-length", "accept-encoding"}
"""Also recomputed per hop: the body changes size, and asking for identity encoding lets the
proxy read usage out of the reply while passing its bytes through as they arrive."""
NOT_RETURNED = HOP_BY_HOP | {"content-length", "content-encoding"}
OWN_HEADER_PREFIX = "x-contextwarden-"
"""Headers meant for the proxy itself (the session id); the upstream does not see them."""
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


def response_headers(headers: httpx.Headers) -> dict[str, str]:
    """The upstream's reply headers to return to the client (request ids, rate limits …)."""
    return {k: v for k, v in headers.items() if k.lower() not in NOT_RETURNED}


class Upstream:
    """One pooled HTTP client for the upstream API root; each phase of a request under
    ``timeout`` seconds (httpx bounds each read and write, the deadlines here the whole)."""

    def __init__(self, base_url: str, timeout: float) -> None:
        httpx_module: Any = require("httpx", "proxy")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._failures: tuple[type[Exception], ...] = (TimeoutError, httpx_module.HTTPError)
        self._client: httpx.AsyncClient = httpx_module.AsyncClient(
            timeout=httpx_module.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
            limits=httpx_module.Limits(max_connections=None, max_keepalive_connections=100),
        )

    async def send(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        query: str = "",
    ) -> httpx.Response:
        """Send and return the response with its body not yet read (the caller streams it)."""
        import anyio

        url = self.base_url + path + (f"?{query}" if query else "")
        request = self._client.build_request(
            method, url, headers=request_headers(headers), content=body
        )
        try:
            with anyio.fail_after(self.timeout):
                response = await self._client.send(request, stream=True)
        except self._failures as exc:
            raise self.failure(exc, HEADERS) from exc
        acknowledge(response)
        return response

    async def read(self, response: httpx.Response) -> bytes:
        """A non-streaming reply's whole body, within ``timeout`` (a dripping reply ends)."""
        import anyio

        try:
            with anyio.fail_after(self.timeout):
                return await response.aread()
        except self._failures as exc:
            raise self.failure(exc, BODY) from exc
        finally:
            await response.aclose()

    async def chunks(self, response: httpx.Response) -> AsyncIterator[bytes]:
        """The reply's bytes as they arrive (identity encoding); each within ``timeout``."""
        try:
            async for chunk in response.aiter_raw():
                acknowledge(response)
                yield chunk
        except self._failures as exc:
            raise self.failure(exc, STREAM) from exc

    def failure(self, exc: Exception, phase: str) -> UpstreamError:
        """``exc`` (httpx's, or a deadline's) as an UpstreamError naming what happened."""
        import httpx

        timed_out = isinstance(exc, TimeoutError | httpx.TimeoutException)
        if timed_out:
            what = f"took longer than --timeout {self.timeout:g} s {phase}"
        elif isinstance(exc, httpx.ConnectError):
            what = f"could not be reached ({exc or type(exc).__name__}); check --upstream"
        else:
            detail = str(exc) or "the connection was reset"
            what = f"broke the connection {phase}: {type(exc).__name__}: {detail}"
        message = f"the upstream {self.base_url} {what}"
        return UpstreamError(message, phase=phase, upstream=self.base_url, timed_out=timed_out)

    async def close(self) -> None:
        await self._client.aclose()


def acknowledge(response: httpx.Response) -> None:
    """Acknowledge what the upstream sent at once (TCP_QUICKACK) instead of after Linux's
    delayed-ACK timer (40 ms): an HTTP/1.1 server that writes its headers and its body in two
    sends without TCP_NODELAY holds the body back until the headers are acknowledged, and on a
    kept-alive connection the ACK waits for the timer. A no-op where the option does not exist."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is not None and hasattr(socket, "TCP_QUICKACK"):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        except OSError:
            pass  # not a TCP socket: nothing to acknowledge early
