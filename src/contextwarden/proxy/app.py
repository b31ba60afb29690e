"""The ASGI app: the routes of the model APIs (``handling``), of what passes through
(``passthrough``) and of the admin views (``views``), over one ``Proxy`` and its lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from contextwarden.errors import RequestRefused, require
from contextwarden.proxy.access import AccessLine
from contextwarden.proxy.apis import ANTHROPIC
from contextwarden.proxy.apis_gemini import GEMINI, PASSED
from contextwarden.proxy.apis_gemini import routes as gemini_paths
from contextwarden.proxy.apis_openai import CHAT, RESPONSES
from contextwarden.proxy.config import ProxyConfig
from contextwarden.proxy.counting import counted_body
from contextwarden.proxy.guard import SlowReaders
from contextwarden.proxy.handling import handle
from contextwarden.proxy.passthrough import caller_api, forward
from contextwarden.proxy.refusals import classify, refuse
from contextwarden.proxy.sessions import Sessions
from contextwarden.proxy.state import Proxy
from contextwarden.proxy.upstream import Upstream
from contextwarden.proxy.views import routes as admin_routes

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response


def create_app(sessions: Sessions, upstream: Upstream, config: ProxyConfig) -> Starlette:
    """The proxy as an ASGI app over ``sessions`` (store + manager) and ``upstream``, with the
    limits, admin token and cache choice of ``config``."""
    require("starlette", "proxy")
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Route

    proxy = Proxy(sessions, upstream, config)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await proxy.anchors.settled()  # before the store closes under them
        await upstream.close()
        sessions.store.close()

    async def messages(request: Request) -> Response:
        return await handle(proxy, ANTHROPIC, request)

    async def chat(request: Request) -> Response:
        return await handle(proxy, CHAT, request)

    async def responses(request: Request) -> Response:
        return await handle(proxy, RESPONSES, request)

    async def gemini(request: Request) -> Response:
        return await handle(proxy, GEMINI, request)

    async def passthrough(request: Request) -> Response:
        return await forward(proxy, caller_api(request), request)

    async def gemini_passthrough(request: Request) -> Response:
        return await forward(proxy, GEMINI, request)

    async def responses_compact(request: Request) -> Response:
        return await forward(proxy, RESPONSES, request)

    async def count_tokens(request: Request) -> Response:
        try:
            raw = bytes(await proxy.body(request))
        except RequestRefused as exc:
            kind, reason = classify(exc)
            return refuse(proxy, ANTHROPIC, kind, f"contextwarden proxy: {exc}", reason)
        body = await proxy.run(counted_body, proxy.sessions, request.headers, raw)
        return await forward(proxy, ANTHROPIC, request, body)

    routes = [
        Route(ANTHROPIC.path, messages, methods=["POST"]),
        Route(CHAT.path, chat, methods=["POST"]),
        Route(RESPONSES.path, responses, methods=["POST"]),
        Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
        Route("/v1/responses/compact", responses_compact, methods=["POST"]),
        Route("/", passthrough, methods=["GET", "HEAD"]),
        *(Route(api.path, passthrough, methods=["HEAD"]) for api in (ANTHROPIC, CHAT, RESPONSES)),
        *(Route(path, gemini, methods=["POST"]) for path in gemini_paths()),
        *(Route(path, gemini_passthrough, methods=["POST"]) for path in gemini_paths(PASSED)),
        Route("/v1/models", passthrough, methods=["GET"]),
        Route("/v1/models/{model:path}", passthrough, methods=["GET"]),
        *admin_routes(proxy, config.admin_token),
    ]
    slow = Middleware(SlowReaders, timeout=config.client_timeout)
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(AccessLine), slow])
    app.state.proxy = proxy
    return app
