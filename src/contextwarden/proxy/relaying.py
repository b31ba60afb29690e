"""Relaying the upstream reply to the caller as it is, JSON or SSE, reading its usage on the way
to anchor the session's ledger (``proxy.anchors``); a stream cut mid-way ends in an error event."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from contextwarden.errors import UpstreamError
from contextwarden.proxy.apis import Api
from contextwarden.proxy.metrics import RequestRecord
from contextwarden.proxy.refusals import classify, refuse
from contextwarden.proxy.sse import EventReader
from contextwarden.proxy.upstream import Reply, response_headers
from contextwarden.proxy.values import FIXED_SHARE_HEADER, Managed
from contextwarden.proxy.wording import dump_body

if TYPE_CHECKING:
    from starlette.responses import Response

    from contextwarden.proxy.state import Proxy

log = logging.getLogger("contextwarden.proxy")


async def relay(
    proxy: Proxy,
    api: Api,
    reply: Reply,
    body: dict[str, Any],
    key: str,
    managed: Managed,
    record: RequestRecord,
    started: float,
    source: AsyncIterator[bytes] | None = None,
) -> Response:
    """Return the upstream reply as it is; read its usage on the way to anchor the ledger.
    ``source``: the stream's bytes as the recall gate passes them (``proxy.recall_stream``)."""
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


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None
