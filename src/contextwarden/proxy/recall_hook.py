"""The recall hook of a model request (``--recall``): the model's recall calls answered by
``proxy.recalling``, or its stream handed to ``proxy.recall_stream``'s gate, before the relay."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from contextwarden.model import Message
from contextwarden.proxy import recall_stream, recalling
from contextwarden.proxy.apis import Api
from contextwarden.proxy.outgoing import BYTES_PER_TOKEN, post, render_body
from contextwarden.proxy.values import Incoming, Managed

if TYPE_CHECKING:
    from starlette.requests import Request

    from contextwarden.proxy.state import Proxy
    from contextwarden.proxy.upstream import Reply


async def recall_rounds(
    proxy: Proxy,
    api: Api,
    request: Request,
    body: dict[str, Any],
    incoming: Incoming,
    managed: Managed,
    reply: Reply,
) -> tuple[Reply, AsyncIterator[bytes] | None]:
    """The model's recall calls answered (``proxy.recalling``): the reply the agent gets, and
    the stream the recall gate passes on instead of it (``proxy.recall_stream``), if any."""

    async def follow_up(messages: Sequence[Message]) -> Reply:
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
