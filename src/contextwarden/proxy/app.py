"""The ASGI app: each model request is parsed (apis → wire/), matched to its session and
managed (sessions → ContextManager), re-rendered and forwarded; the reply streams back as the
upstream sends it. Session work runs in worker threads, one session at a time per session, and
so does any parse or render of a large body, so one big request never stalls the others. A
request's management and the render of its upstream body share one thread hop, and the reply's
usage is anchored after the reply goes out (``anchors``): each hop is a wait on a busy machine."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from contextwarden.errors import (
    ContextOverflowError,
    ContextWardenError,
    RequestRefused,
    StoreError,
    UpstreamError,
    require,
)
from contextwarden.model import Message
from contextwarden.proxy import recall_stream, recalling
from contextwarden.proxy.anchors import Anchors
from contextwarden.proxy.apis import (
    ANTHROPIC,
    BAD_REQUEST,
    DOES_NOT_FIT,
    INTERNAL,
    SESSION_HEADER,
    STORE_DOWN,
    UPSTREAM_DOWN,
    Api,
    ErrorKind,
)
from contextwarden.proxy.apis_gemini import GEMINI, PASSED
from contextwarden.proxy.apis_gemini import routes as gemini_paths
from contextwarden.proxy.apis_openai import CHAT, RESPONSES
from contextwarden.proxy.config import ProxyConfig
from contextwarden.proxy.counting import counted_body
from contextwarden.proxy.guard import (
    UPSTREAM_TIMEOUT,
    SlowReaders,
    confined,
    read_body,
    refused_kind,
)
from contextwarden.proxy.matching import credential_scope, scoped
from contextwarden.proxy.metrics import Metrics, RequestRecord
from contextwarden.proxy.sessions import FIXED_SHARE_HEADER, Incoming, Managed, Sessions
from contextwarden.proxy.sse import EventReader
from contextwarden.proxy.upstream import Upstream, response_headers
from contextwarden.proxy.views import routes as admin_routes
from contextwarden.proxy.wording import dump_body, parse_body, reworded

if TYPE_CHECKING:
    import httpx
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

log = logging.getLogger("contextwarden.proxy")
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
BYTES_PER_TOKEN = 4
"""About how many bytes of JSON a token is: enough to tell a large render from a small one."""
API_PREFIX = "/v1/"
"""Every path the proxy passes through stays under it, in normal form (``guard.confined``)."""


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
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[slow])
    app.state.proxy = proxy
    return app


# ----------------------------------------------------------------------------- one request
async def handle(proxy: Proxy, api: Api, request: Request) -> Response:
    """Manage one model request and forward it; errors come back in the API's shape.

    No client header can skip management: the proxy's own summary requests go straight to the
    upstream, so an ``x-contextwarden-query-source`` from a client means nothing here (and
    ``x-contextwarden-*`` headers never go upstream)."""
    try:
        raw = await proxy.body(request)
    except RequestRefused as exc:
        kind, reason = classify(exc)
        return refuse(proxy, api, kind, f"contextwarden proxy: {exc}", reason)
    try:
        body = await proxy.offload(len(raw), parse_body, raw)
        if not api.managed(body):
            # A request that continues server-side state carries only its new items.
            return await forward(proxy, api, request, bytes(raw))
        del raw  # the parsed body is all that is needed from here on
        incoming = api.conversation(body, request.headers.get(SESSION_HEADER))
        incoming = replace(incoming, key=scoped(incoming.key, credential_scope(request.headers)))
    except (ValueError, ContextWardenError) as exc:
        return refuse(proxy, api, BAD_REQUEST, f"contextwarden proxy: {exc}", "bad_request")
    try:
        async with proxy.hold(incoming.key):
            work = proxy.sessions.manage
            managed, out = await proxy.run(rendered, proxy, api, body, work, incoming)
    except Exception as exc:  # every failure becomes an API error, never a crash
        kind, reason = classify(exc)
        message = reworded(api.name, exc) or f"contextwarden proxy: {exc}"
        return refuse(proxy, api, kind, message, reason, incoming.key)
    return await send(proxy, api, request, body, incoming, managed, out)


def rendered(
    proxy: Proxy, api: Api, body: dict[str, Any], work: Callable[..., Managed], *args: Any
) -> tuple[Managed, bytes]:
    """``work(*args)`` (managing the request) and the upstream body for what it returns, in
    one call, so that a worker thread does both in one hop."""
    managed = work(*args)
    return managed, render_body(proxy, api, body, managed.messages)


def render_body(proxy: Proxy, api: Api, body: dict[str, Any], messages: Sequence[Message]) -> bytes:
    """The upstream body: ``body`` with ``messages`` as its conversation."""
    return dump_body(api.render(body, messages, cache=proxy.place_breakpoints))


def classify(exc: Exception) -> tuple[ErrorKind, str]:
    """The error a failure of the proxy itself is reported as, and its metrics reason."""
    if isinstance(exc, RequestRefused):
        return refused_kind(exc), exc.reason
    if isinstance(exc, UpstreamError):
        log.warning("upstream failed: %s", exc)
        return (UPSTREAM_TIMEOUT if exc.timed_out else UPSTREAM_DOWN), "upstream"
    if isinstance(exc, ContextOverflowError):
        return DOES_NOT_FIT, "does_not_fit"
    if isinstance(exc, StoreError):
        log.error("session store failed: %s", exc)
        return STORE_DOWN, "store"
    if isinstance(exc, ContextWardenError):
        return BAD_REQUEST, "unmanageable"
    log.exception("contextwarden proxy bug while managing a request")
    return INTERNAL, "bug"


def refuse(
    proxy: Proxy, api: Api, kind: ErrorKind, message: str, reason: str, session: str | None = None
) -> Response:
    from starlette.responses import JSONResponse

    proxy.metrics.observe(RequestRecord(api.name, kind.status, session, error=reason))
    return JSONResponse(api.error(kind, message), kind.status)


async def send(
    proxy: Proxy,
    api: Api,
    request: Request,
    body: dict[str, Any],
    incoming: Incoming,
    managed: Managed,
    out: bytes,
) -> Response:
    """Forward the managed request (rendered as ``out``); on "prompt is too long", compact
    once and retry."""
    started = time.perf_counter()
    offered = proxy.config.recall and await proxy.offload(
        managed.tokens * BYTES_PER_TOKEN,
        recalling.offer,
        api.name,
        body,
        managed.messages,
    )
    if offered:
        body = recalling.with_tool(api.name, body)
        out = await proxy.offload(
            managed.tokens * BYTES_PER_TOKEN, render_body, proxy, api, body, managed.messages
        )
    source = None
    try:
        reply = await post(proxy, api, request, out)
        retried = False
        if reply.status_code == 400:
            # read whole within --timeout (and closed); relay returns it from httpx's copy
            text = (await proxy.upstream.read(reply)).decode("utf-8", "replace")
            if api.too_long(reply.status_code, text):
                async with proxy.hold(incoming.key):
                    work, key, items = proxy.sessions.force_compact, incoming.key, incoming.items
                    managed, out = await proxy.run(
                        rendered, proxy, api, body, work, key, managed, items
                    )
                reply, retried = await post(proxy, api, request, out), True
        if offered and reply.status_code == 200:
            reply, source = await recall_rounds(proxy, api, request, body, incoming, managed, reply)
    except Exception as exc:  # the upstream failed, or a forced compaction did
        kind, reason = classify(exc)
        return refuse(proxy, api, kind, f"contextwarden proxy: {exc}", reason, incoming.key)
    record = RequestRecord(
        api.name,
        reply.status_code,
        managed.session_id,
        managed.report.tokens_before if managed.report else managed.tokens,
        managed.tokens,
        managed.report.applied if managed.report else (),
        retried=retried,
        new_items=managed.new_items,
        fixed_share_warned=managed.fixed_share_warned,
    )
    return await relay(proxy, api, reply, body, incoming.key, managed, record, started, source)


async def recall_rounds(
    proxy: Proxy,
    api: Api,
    request: Request,
    body: dict[str, Any],
    incoming: Incoming,
    managed: Managed,
    reply: httpx.Response,
) -> tuple[httpx.Response, AsyncIterator[bytes] | None]:
    """The model's recall calls answered (``proxy.recalling``): the reply the agent gets, and
    the stream the recall gate passes on instead of it (``proxy.recall_stream``), if any."""

    async def follow_up(messages: Sequence[Message]) -> httpx.Response:
        size = managed.tokens * BYTES_PER_TOKEN
        out = await proxy.offload(size, render_body, proxy, api, body, messages)
        return await post(proxy, api, request, out)

    async def kept(rounds: recalling.Rounds) -> None:
        # the ledger anchors on the first reply, the view alone (a stream's as it passed)
        await proxy.anchors.start(proxy, rounds.first_usage, incoming.key, managed)
        await recalling.keep(proxy, rounds, incoming, managed.session_id)

    turn = recalling.HiddenTurn(
        proxy, api.name, incoming.key, managed.session_id, managed.messages, follow_up, reply
    )
    if recall_stream.gates(api.name, body):
        return reply, recall_stream.gated(turn, reply, kept)
    rounds = await recalling.answer(turn, reply)
    if rounds.rounds:
        await kept(rounds)
    return rounds.reply, None


async def post(proxy: Proxy, api: Api, request: Request, out: bytes) -> httpx.Response:
    path = api.path or request.url.path  # Gemini's path names the model
    return await proxy.upstream.send("POST", path, request.headers, out, request.url.query)


async def relay(
    proxy: Proxy,
    api: Api,
    reply: httpx.Response,
    body: dict[str, Any],
    key: str,
    managed: Managed,
    record: RequestRecord,
    started: float,
    source: AsyncIterator[bytes] | None = None,
) -> Response:
    """Return the upstream reply as it is; read its usage on the way to anchor the ledger.
    ``source``: the stream's bytes as the recall gate passes them (``proxy.recall_stream``)."""
    from dataclasses import replace

    from starlette.responses import Response, StreamingResponse

    headers = response_headers(reply.headers)
    if managed.fixed_share is not None:
        headers[FIXED_SHARE_HEADER] = f"{managed.fixed_share:.2f}"
    if not reply.headers.get("content-type", "").startswith("text/event-stream"):
        try:
            data = await proxy.upstream.read(reply)
        except UpstreamError as exc:
            kind, reason = classify(exc)
            return refuse(proxy, api, kind, f"contextwarden proxy: {exc}", reason, key)
        if reply.status_code == 200:
            value = await proxy.offload(len(data), _json, data)
            await proxy.anchors.start(proxy, api.usage(value), key, managed)
            changed = api.finish(body, value, managed)
            if changed is not None:
                data = await proxy.offload(len(data), dump_body, changed)
        proxy.metrics.observe(replace(record, upstream_seconds=time.perf_counter() - started))
        return Response(data, reply.status_code, headers)

    async def events() -> AsyncIterator[bytes]:
        # The session's lock is taken for the anchor before the chunk that carries the usage
        # goes out: the client's next turn waits for it, so it is counted from the anchor.
        reader, anchored = EventReader(), False
        try:
            async for chunk in source or proxy.upstream.chunks(reply):
                size = len(chunk) + reader.buffered
                for raw, usage in await proxy.offload(
                    size, read_events, api, body, managed, reader, chunk
                ):
                    if usage is not None and not anchored:
                        anchored = await proxy.anchors.start(proxy, usage, key, managed)
                    yield raw
            yield reader.rest()
        except UpstreamError as exc:
            # Headers are gone already: the client learns of it as the API streams errors.
            log.warning("session %s: %s", managed.session_id, exc)
            yield reader.rest() + error_event(api, exc)
        finally:
            await reply.aclose()
            proxy.metrics.observe(replace(record, upstream_seconds=time.perf_counter() - started))

    return StreamingResponse(events(), reply.status_code, headers)


def read_events(
    api: Api, body: dict[str, Any], managed: Managed, reader: EventReader, chunk: bytes
) -> list[tuple[bytes, Any]]:
    """The events ``chunk`` completes, each as the bytes to pass on and the usage it reports."""
    out: list[tuple[bytes, Any]] = []
    for event in reader.feed(chunk):
        changed = api.finish_event(body, event.data, managed)
        raw = event.raw if changed is None else event.with_data(changed)
        out.append((raw, api.stream_usage(event.data)))
    return out


def error_event(api: Api, exc: UpstreamError) -> bytes:
    """An SSE ``error`` event in ``api``'s error shape (both SDKs raise it as an APIError)."""
    kind, _ = classify(exc)
    data = json.dumps(api.error(kind, f"contextwarden proxy: {exc}"))
    return f"event: error\ndata: {data}\n\n".encode()


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
        path = confined(request.scope["path"], API_PREFIX)
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


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None
