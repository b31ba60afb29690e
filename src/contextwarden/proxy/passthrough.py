"""Requests the proxy does not manage (model lists, token counts, probes), passed through to the
upstream as they are; the proxy's own errors come back in the caller's API shape."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from contextwarden.errors import RequestRefused, UpstreamError
from contextwarden.proxy.apis import ANTHROPIC, Api
from contextwarden.proxy.apis_gemini import VERSIONS
from contextwarden.proxy.apis_openai import CHAT
from contextwarden.proxy.guard import confined
from contextwarden.proxy.metrics import RequestRecord
from contextwarden.proxy.refusals import classify
from contextwarden.proxy.upstream import response_headers

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from contextwarden.proxy.state import Proxy

log = logging.getLogger("contextwarden.proxy")

API_PREFIXES = ("/v1/", *(f"/{version}/" for version in VERSIONS if version != "v1"))
"""Every path the proxy passes through stays under one of them, in normal form
(``guard.confined``): ``/v1/`` for every API, Gemini's other versions for its own methods
(``countTokens`` under ``/v1beta/``, which its SDKs use by default)."""


def caller_api(request: Request) -> Api:
    """Whose error shape a shared path's caller reads (``/v1/models``, probes): Anthropic's
    SDKs and agents send ``anthropic-version``, OpenAI's never do."""
    return ANTHROPIC if "anthropic-version" in request.headers else CHAT


async def forward(proxy: Proxy, api: Api, request: Request, body: bytes | None = None) -> Response:
    """A request the proxy does not manage (model list, token counts), passed through as is;
    the proxy's own errors come back in ``api``'s shape."""
    from starlette.responses import JSONResponse, StreamingResponse

    try:
        if body is None:
            body = bytes(await proxy.body(request))
        path = confined(request.scope["path"], API_PREFIXES)
        reply = await proxy.upstream.send(
            request.method, path, request.headers, body or None, request.url.query
        )
    except (RequestRefused, UpstreamError) as exc:
        kind, reason = classify(exc)
        proxy.metrics.observe(RequestRecord("passthrough", kind.status, error=reason))
        return JSONResponse(api.error(kind, f"contextwarden proxy: {exc}"), kind.status)

    async def passed() -> AsyncIterator[bytes]:
        try:
            async for chunk in proxy.upstream.chunks(reply):
                yield chunk
        except UpstreamError as exc:
            log.warning("pass-through %s: %s", request.url.path, exc)
        finally:
            await reply.aclose()

    return StreamingResponse(passed(), reply.status_code, response_headers(reply.headers))
