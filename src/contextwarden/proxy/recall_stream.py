"""Hidden recall rounds in a streamed reply, without holding the agent's first byte.

A Messages or chat completions stream passes through as it comes until a ``recall`` tool call
starts; only from there is it held (and the reply's end: ``message_delta``/``message_stop``, or
the finish, usage and ``[DONE]`` chunks). A reply that calls recall is answered
(``recalling.HiddenTurn``) and the follow-up's stream continues the message the agent is already
receiving: a Messages follow-up's ``message_start`` dropped and its block indexes after the
blocks already sent, the earlier reply's held end never sent. The agent gets one message; a
Messages stream anchors the ledger on its first ``message_start``, the view's own usage.

A reply whose agent tool call was already passed when recall started cannot be asked again (the
agent has the call): its recall calls are dropped instead and the rest goes on renumbered.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from contextwarden.errors import ContextWardenError, UpstreamError
from contextwarden.proxy.recall_reply import restated_event
from contextwarden.proxy.recalling import HiddenTurn, Rounds
from contextwarden.proxy.replies import read_events
from contextwarden.proxy.sse import Event, EventReader
from contextwarden.recall import RECALL_TOOL_NAME

if TYPE_CHECKING:
    from contextwarden.proxy.upstream import Reply

log = logging.getLogger("contextwarden.proxy")

BLOCK_EVENTS = frozenset({"content_block_start", "content_block_delta", "content_block_stop"})
MESSAGE_END = frozenset({"message_delta", "message_stop"})
ERROR_PREVIEW = 300
"""Characters of a hidden round's error reply quoted in the error the agent gets."""


def gates(api: str, body: Mapping[str, Any]) -> bool:
    """Whether the reply to ``body`` is passed through a gate (a Messages or chat completions
    stream); a Responses or Gemini stream is held whole while the tool is offered
    (``recalling.answer``): Responses events number themselves and carry the whole response,
    too much to splice, and no gate splices Gemini's chunks (each a whole response)."""
    return api in GATES and body.get("stream") is True


class Gate(ABC):
    """One reply's events: what passes at once, and what is held from a recall call on."""

    api: ClassVar[str]

    def __init__(self, offset: int, first: bool) -> None:
        self.offset, self.first = offset, first
        self.events: list[Any] = []
        """The data of every event, for the whole reply (``replies.read_events``)."""
        self.held: list[Event] = []
        self.recall_blocks: set[int] = set()
        """Indexes of the recall calls (blocks, or chat tool calls) in this reply."""
        self.passed = 0
        """Blocks of this reply the agent got (the next reply's are numbered after them)."""
        self.agent_call_passed = False

    @property
    def holding(self) -> bool:
        return bool(self.recall_blocks)

    @abstractmethod
    def feed(self, event: Event) -> bytes:
        """The bytes to pass for ``event`` now (none when it is held or dropped)."""

    def end(self, first: Mapping[str, Any] | None) -> bytes:
        """The held events of a reply that calls no recall, or whose recall calls are dropped;
        after hidden rounds (``first``: the first reply's usage) with the agent's usage."""
        out = bytearray()
        for event in self.held:
            changed = restated_event(self.api, event.data, first)
            out += self._ended(event) if changed is None else event.with_data(changed)
        return bytes(out)

    @abstractmethod
    def _ended(self, event: Event) -> bytes:
        """A held event as it goes out at the end."""

    def _seen_call(self, name: Any, index: Any) -> None:
        if name == RECALL_TOOL_NAME:
            self.recall_blocks.add(index if isinstance(index, int) else -1)
        elif name and not self.holding:
            self.agent_call_passed = True


class MessagesGate(Gate):
    """A Messages API stream: blocks pass until a recall tool_use block starts; the message's
    end (``message_delta``, ``message_stop``) is held to the end of the reply."""

    api = "anthropic"

    def feed(self, event: Event) -> bytes:
        """The bytes to pass for ``event`` now (none when it is held or dropped)."""
        data = event.data if isinstance(event.data, Mapping) else {}
        self.events.append(data)
        kind = data.get("type")
        if kind == "message_start":
            return event.raw if self.first else b""
        block = data.get("content_block") if kind == "content_block_start" else None
        if isinstance(block, Mapping) and block.get("type") == "tool_use":
            self._seen_call(block.get("name"), data.get("index"))
        if self.holding or kind in MESSAGE_END:
            self.held.append(event)
            return b""
        if kind == "content_block_start":
            self.passed += 1
        return self._shifted(event, data, 0)

    def _ended(self, event: Event) -> bytes:
        """Its message_delta and stop; dropped recall blocks leave the rest renumbered."""
        data = event.data if isinstance(event.data, Mapping) else {}
        index = data.get("index")
        if data.get("type") in BLOCK_EVENTS and index in self.recall_blocks:
            return b""
        dropped = sum(1 for i in self.recall_blocks if isinstance(index, int) and i < index)
        return self._shifted(event, data, dropped)

    def _shifted(self, event: Event, data: Mapping[str, Any], dropped: int) -> bytes:
        index = data.get("index")
        if data.get("type") not in BLOCK_EVENTS or not isinstance(index, int):
            return event.raw
        if self.offset == dropped:
            return event.raw
        return event.with_data({**data, "index": index + self.offset - dropped})


class ChatGate(Gate):
    """A chat completions stream: chunks pass until one carries a recall tool call; the chunk
    with the finish reason, the usage chunk and ``[DONE]`` are held to the end of the reply.
    Tool calls passed are the agent's own, so a later reply's need no renumbering."""

    api = "openai-chat"

    def feed(self, event: Event) -> bytes:
        data = event.data
        self.events.append(data)
        choices = data.get("choices") if isinstance(data, Mapping) else None
        if not choices:  # the usage chunk, "[DONE]"
            self.held.append(event)
            return b""
        was_holding = self.holding
        for choice in choices:
            for call in (choice.get("delta") or {}).get("tool_calls") or []:
                self._seen_call((call.get("function") or {}).get("name"), call.get("index"))
        if self.holding and not was_holding:
            return self._split(event, data, choices)
        if self.holding or any(choice.get("finish_reason") for choice in choices):
            self.held.append(event)
            return b""
        return event.raw

    def _split(self, event: Event, data: Mapping[str, Any], choices: list[Any]) -> bytes:
        """The chunk a recall call starts in: text it carries passes, as text before the call
        in chunks of its own would (and as a whole reply shows it); its calls are held."""
        if not any((choice.get("delta") or {}).get("content") for choice in choices):
            self.held.append(event)
            return b""
        said, calls = [], []
        for choice in choices:
            delta = choice.get("delta") or {}
            text = {k: v for k, v in delta.items() if k != "tool_calls"}
            said.append({**choice, "delta": text, "finish_reason": None})
            calls.append({**choice, "delta": {k: v for k, v in delta.items() if k != "content"}})
        held = {**data, "choices": calls}
        self.held.append(Event(event.with_data(held), event.name, held))
        return event.with_data({**data, "choices": said})

    def _ended(self, event: Event) -> bytes:
        """A held chunk; dropped recall calls leave the other calls renumbered."""
        data = event.data
        if not self.recall_blocks or not isinstance(data, Mapping) or not data.get("choices"):
            return event.raw
        choices = []
        for choice in data["choices"]:
            delta = dict(choice.get("delta") or {})
            if "tool_calls" in delta:
                delta["tool_calls"] = [
                    {**call, "index": call["index"] - self._dropped_before(call["index"])}
                    for call in delta["tool_calls"]
                    if call.get("index") not in self.recall_blocks
                ]
            choices.append({**choice, "delta": delta})
        return event.with_data({**data, "choices": choices})

    def _dropped_before(self, index: int) -> int:
        return sum(1 for i in self.recall_blocks if i < index)


GATES: dict[str, type[Gate]] = {"anthropic": MessagesGate, "openai-chat": ChatGate}


async def gated(
    turn: HiddenTurn, reply: Reply, noted: Callable[[Rounds], Awaitable[None]]
) -> AsyncIterator[bytes]:
    """The agent's stream: each reply's events through a ``Gate``, hidden rounds between them;
    ``noted`` gets the rounds before the final reply's end goes out. A failure in a hidden
    round ends the stream with an UpstreamError (the app sends it as the API's error event)."""
    offset, first = 0, True
    while True:
        gate = GATES[turn.api](offset, first)
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
            yield gate.end(turn.found.first_reported if turn.found.rounds else None) + rest
            return
        reply = await _follow_up(turn, gate)
        offset, first = offset + gate.passed, False


def _counted_last(turn: HiddenTurn, gate: Gate) -> None:
    """The last follow-up's usage counted (its prompt was a hidden request's)."""
    try:
        turn.finish(read_events(turn.api, gate.events))
    except ContextWardenError as exc:  # only the count is lost: the agent has the reply
        log.warning("session %s: a reply the proxy cannot read: %s", turn.session_id, exc)


async def _follow_up(turn: HiddenTurn, gate: Gate) -> Reply:
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
