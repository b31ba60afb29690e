"""Hidden recall rounds in a Messages API stream, without holding the agent's first byte.

A streamed reply passes through as it comes until a ``recall`` tool_use block starts; only from
there is it held. A reply that calls recall is answered (``recalling.HiddenTurn``) and the
follow-up's stream continues the message the agent is already receiving: its ``message_start``
dropped, its block indexes after the blocks already sent, the held ``message_delta`` and
``message_stop`` of the earlier reply never sent. The agent gets one message, and the usage it
anchors on (the first ``message_start``) is the view's own.

A reply whose agent tool call was already passed when recall started cannot be asked again (the
agent has the call): its recall blocks are dropped instead and the rest goes on renumbered.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from contextwarden.errors import ContextWardenError, UpstreamError
from contextwarden.proxy.recalling import HiddenTurn, Rounds
from contextwarden.proxy.replies import read_events
from contextwarden.proxy.sse import Event, EventReader
from contextwarden.recall import RECALL_TOOL_NAME

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("contextwarden.proxy")

BLOCK_EVENTS = frozenset({"content_block_start", "content_block_delta", "content_block_stop"})
MESSAGE_END = frozenset({"message_delta", "message_stop"})
ERROR_PREVIEW = 300
"""Characters of a hidden round's error reply quoted in the error the agent gets."""


def gates(api: str, body: Mapping[str, Any]) -> bool:
    """Whether the reply to ``body`` is passed through with the gate (an Anthropic stream);
    other streams are held whole while the tool is offered (``recalling.answer``)."""
    return api == "anthropic" and body.get("stream") is True


class Gate:
    """One reply's events: what passes at once, and what is held from a recall block on."""

    def __init__(self, offset: int, first: bool) -> None:
        self.offset, self.first = offset, first
        self.events: list[Any] = []
        self.held: list[Event] = []
        self.recall_blocks: set[int] = set()
        self.passed = 0
        """Blocks of this reply the agent got."""
        self.agent_call_passed = False

    @property
    def holding(self) -> bool:
        return bool(self.recall_blocks)

    def feed(self, event: Event) -> bytes:
        """The bytes to pass for ``event`` now (none when it is held or dropped)."""
        data = event.data if isinstance(event.data, Mapping) else {}
        self.events.append(data)
        kind = data.get("type")
        if kind == "message_start":
            return event.raw if self.first else b""
        block = data.get("content_block") if kind == "content_block_start" else None
        if isinstance(block, Mapping) and block.get("type") == "tool_use":
            if block.get("name") == RECALL_TOOL_NAME:
                self.recall_blocks.add(data.get("index", -1))
            elif not self.holding:
                self.agent_call_passed = True
        if self.holding or kind in MESSAGE_END:
            self.held.append(event)
            return b""
        if kind == "content_block_start":
            self.passed += 1
        return self._shifted(event, data, 0)

    def end(self) -> bytes:
        """The held events, for a reply that calls no recall (its message_delta and stop) or
        whose recall blocks are dropped, renumbered after the blocks already sent."""
        out = bytearray()
        for event in self.held:
            data = event.data if isinstance(event.data, Mapping) else {}
            index = data.get("index")
            if data.get("type") in BLOCK_EVENTS and index in self.recall_blocks:
                continue
            dropped = sum(1 for i in self.recall_blocks if isinstance(index, int) and i < index)
            out += self._shifted(event, data, dropped)
        return bytes(out)

    def _shifted(self, event: Event, data: Mapping[str, Any], dropped: int) -> bytes:
        index = data.get("index")
        if data.get("type") not in BLOCK_EVENTS or not isinstance(index, int):
            return event.raw
        if self.offset == dropped:
            return event.raw
        return event.with_data({**data, "index": index + self.offset - dropped})


async def gated(
    turn: HiddenTurn, reply: httpx.Response, noted: Callable[[Rounds], Awaitable[None]]
) -> AsyncIterator[bytes]:
    """The agent's stream: each reply's events through a ``Gate``, hidden rounds between them;
    ``noted`` gets the rounds before the final reply's end goes out. A failure in a hidden
    round ends the stream with an UpstreamError (the app sends it as the API's error event)."""
    offset, first = 0, True
    while True:
        gate = Gate(offset, first)
        reader = EventReader()
        try:
            async for chunk in turn.proxy.upstream.chunks(reply):
                for event in reader.feed(chunk):
                    passed = gate.feed(event)
                    if passed:
                        yield passed
        finally:
            await reply.aclose()
        rest = reader.rest()
        if not gate.holding or gate.agent_call_passed:
            if turn.found.rounds:
                _counted_last(turn, gate)
                await noted(turn.found)
            yield gate.end() + rest
            return
        reply = await _follow_up(turn, gate)
        offset, first = offset + gate.passed, False


def _counted_last(turn: HiddenTurn, gate: Gate) -> None:
    """The last follow-up's usage counted (its prompt was a hidden request's)."""
    try:
        turn.finish(read_events(turn.api, gate.events))
    except ContextWardenError as exc:  # only the count is lost: the agent has the reply
        log.warning("session %s: a reply the proxy cannot read: %s", turn.session_id, exc)


async def _follow_up(turn: HiddenTurn, gate: Gate) -> httpx.Response:
    """The reply to the follow-up of a reply that called recall, or UpstreamError."""
    try:
        said = read_events(turn.api, gate.events)
        reply = await turn.step(said)
    except UpstreamError:
        raise
    except ContextWardenError as exc:
        raise _failed(turn, f"the proxy could not answer recall: {exc}") from exc
    if reply is None:  # cannot be: the gate held a recall block, so the reply calls recall
        raise _failed(turn, "a reply that called recall read back without the call")
    if reply.status_code != 200:
        text = (await turn.proxy.upstream.read(reply)).decode("utf-8", "replace")
        raise _failed(turn, f"a recall round got {reply.status_code}: {text[:ERROR_PREVIEW]}")
    return reply


def _failed(turn: HiddenTurn, message: str) -> UpstreamError:
    upstream = turn.proxy.upstream.base_url
    return UpstreamError(message, phase="recall", upstream=upstream, timed_out=False)
