"""The upstream request for a managed conversation: its body rendered from the managed view
(in the worker thread that managed it, one hop for both) and posted to the upstream."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from contextwarden.model import Message
from contextwarden.proxy import recalling
from contextwarden.proxy.apis import Api
from contextwarden.proxy.values import Managed
from contextwarden.proxy.wording import dump_body

if TYPE_CHECKING:
    from starlette.requests import Request

    from contextwarden.proxy.state import Proxy
    from contextwarden.proxy.upstream import Reply

BYTES_PER_TOKEN = 4
"""About how many bytes of JSON a token is: enough to tell a large render from a small one."""


def rendered(
    proxy: Proxy, api: Api, body: dict[str, Any], work: Callable[..., Managed], *args: Any
) -> tuple[Managed, bytes]:
    """``work(*args)`` (managing the request) and the upstream body for what it returns, in
    one call, so that a worker thread does both in one hop."""
    managed = work(*args)
    return managed, render_body(proxy, api, body, managed.messages)


def prepared(
    proxy: Proxy, api: Api, body: dict[str, Any], work: Callable[..., Managed], *args: Any
) -> tuple[Managed, dict[str, Any], bytes]:
    """``rendered``, with the recall tool added to ``body`` when ``--recall`` offers it for the
    managed view (decided in the same hop, so the body is rendered once): the request as it
    goes upstream, and its bytes."""
    managed = work(*args)
    if proxy.config.recall and recalling.offer(api.name, body, managed.messages):
        body = recalling.with_tool(api.name, body)
    return managed, body, render_body(proxy, api, body, managed.messages)


def render_body(proxy: Proxy, api: Api, body: dict[str, Any], messages: Sequence[Message]) -> bytes:
    """The upstream body: ``body`` with ``messages`` as its conversation."""
    return dump_body(api.render(body, messages, cache=proxy.place_breakpoints))


async def post(proxy: Proxy, api: Api, request: Request, out: bytes) -> Reply:
    path = api.path or request.url.path  # Gemini's path names the model
    return await proxy.upstream.send("POST", path, request.headers, out, request.url.query)
