"""Talking to the upstream model API: headers forwarded as the client sent them (its API key
included, never logged or stored), bodies re-sent, replies streamed back chunk by chunk."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

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
    """One pooled HTTP client for the upstream API root."""

    def __init__(self, base_url: str, timeout: float) -> None:
        from contextwarden.errors import require

        httpx_module: Any = require("httpx", "proxy")
        self.base_url = base_url.rstrip("/")
        self._client: httpx.AsyncClient = httpx_module.AsyncClient(
            timeout=httpx_module.Timeout(timeout, connect=min(timeout, 30.0)),
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
        url = self.base_url + path + (f"?{query}" if query else "")
        request = self._client.build_request(
            method, url, headers=request_headers(headers), content=body
        )
        return await self._client.send(request, stream=True)

    async def close(self) -> None:
        await self._client.aclose()


async def chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The reply's bytes as they arrive (the upstream was asked for identity encoding)."""
    async for chunk in response.aiter_raw():
        yield chunk
