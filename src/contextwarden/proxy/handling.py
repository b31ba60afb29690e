"""One model request: parsed (apis → wire/), matched to its session and managed in one worker
thread hop with the render of its upstream body, sent (compacted once more on "prompt is too
long"), and relayed; every failure comes back as the API's error."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from contextwarden.errors import ContextWardenError, RequestRefused
from contextwarden.proxy.apis import BAD_REQUEST, SESSION_HEADER, Api
from contextwarden.proxy.matching import credential_scope, scoped
from contextwarden.proxy.metrics import RequestRecord
from contextwarden.proxy.outgoing import post, prepared, rendered
from contextwarden.proxy.passthrough import forward
from contextwarden.proxy.recall_hook import recall_rounds
from contextwarden.proxy.refusals import classify, refuse
from contextwarden.proxy.relaying import relay
from contextwarden.proxy.values import Incoming, Managed
from contextwarden.proxy.wording import parse_body, reworded

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from contextwarden.proxy.state import Proxy


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
            managed, sent, out = await proxy.run(prepared, proxy, api, body, work, incoming)
    except Exception as exc:  # every failure becomes an API error, never a crash
        kind, reason = classify(exc)
        message = reworded(api.name, exc) or f"contextwarden proxy: {exc}"
        return refuse(proxy, api, kind, message, reason, incoming.key)
    return await send(proxy, api, request, sent, incoming, managed, out, offered=sent is not body)


async def send(
    proxy: Proxy,
    api: Api,
    request: Request,
    body: dict[str, Any],
    incoming: Incoming,
    managed: Managed,
    out: bytes,
    *,
    offered: bool,
) -> Response:
    """Forward the managed request (``body`` rendered as ``out``; ``offered``: it carries the
    recall tool the proxy added); on "prompt is too long", compact once and retry."""
    started = time.perf_counter()
    source = None
    try:
        reply = await post(proxy, api, request, out)
        retried = False
        if reply.status_code == 400:
            # read whole within --timeout (and closed); relay returns it from the reply's copy
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
