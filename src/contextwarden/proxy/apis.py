"""The model APIs the proxy speaks, one descriptor each: where a request keeps its conversation,
how the managed conversation goes back into it (both through wire/), where a reply reports
usage, and the API's own error shape. ``proxy.handling`` is written once over these."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from contextwarden.errors import FormatError
from contextwarden.model import Message
from contextwarden.proxy import edits
from contextwarden.proxy.matching import session_key, stable
from contextwarden.proxy.values import Incoming, Managed
from contextwarden.tokens.calibration import measured_calibration
from contextwarden.wire.anthropic import block_to_wire, message_from_wire
from contextwarden.wire.anthropic_cache import MAX_BREAKPOINTS, add_breakpoints, count_markers

SESSION_HEADER = "x-contextwarden-session"
CACHE_CONTROL = "cache_control"
CACHEABLE = frozenset({"text", "image", "document", "tool_use", "tool_result"})
"""Block types that may carry a breakpoint (thinking blocks may not)."""


@dataclass(frozen=True, slots=True)
class ErrorKind:
    """A failure of the proxy itself, as each API would name it."""

    status: int
    anthropic: str
    openai: str


BAD_REQUEST = ErrorKind(400, "invalid_request_error", "invalid_request_error")
DOES_NOT_FIT = ErrorKind(400, "invalid_request_error", "context_length_exceeded")
STORE_DOWN = ErrorKind(503, "api_error", "server_error")
INTERNAL = ErrorKind(500, "api_error", "server_error")
UPSTREAM_DOWN = ErrorKind(502, "api_error", "server_error")


class Api(Protocol):
    """What the app needs to know about one API endpoint."""

    name: str
    path: str

    def managed(self, body: Mapping[str, Any]) -> bool:
        """Whether the request carries its whole conversation (else it is forwarded as is)."""
        ...

    def conversation(self, body: Mapping[str, Any], header: str | None) -> Incoming: ...

    def render(
        self, body: Mapping[str, Any], messages: Sequence[Message], *, cache: bool = False
    ) -> dict[str, Any]:
        """``body`` with the managed ``messages`` in place of the client's; ``cache``: place
        prompt-cache breakpoints when the client placed none (APIs that cache by themselves
        ignore it)."""
        ...

    def usage(self, reply: Any) -> Any:
        """The usage of a whole JSON reply."""
        ...

    def stream_usage(self, event: Any) -> Any:
        """The usage one streamed event carries, else None."""
        ...

    def finish(self, body: Mapping[str, Any], reply: Any, managed: Managed) -> Any:
        """The JSON reply with what the proxy adds to it (applied edits), None: unchanged."""
        ...

    def finish_event(self, body: Mapping[str, Any], event: Any, managed: Managed) -> Any:
        """A streamed event's data with what the proxy adds to it, None: unchanged."""
        ...

    def error(self, kind: ErrorKind, message: str) -> dict[str, Any]: ...

    def too_long(self, status: int, text: str) -> bool:
        """Whether an upstream error says the prompt exceeds the model's window."""
        ...


def model_of(body: Mapping[str, Any]) -> str | None:
    """The model a request names when its session's count is calibrated for it: a Claude family
    with a measured prior. Else None, and the count rests on each reply's usage alone: the
    proxy anchors before the reply joins the view, so its ledger never learns a session's own
    ratio, and an unseen family's deliberately high prior (``UNSEEN_CLAUDE``, 1.7 plus margin)
    would halve the window for the whole session."""
    model = body.get("model")
    return model if isinstance(model, str) and measured_calibration(model) else None


def streaming(body: Mapping[str, Any]) -> bool:
    return body.get("stream") is True


def _items(body: Mapping[str, Any], key: str) -> list[Any]:
    items = body.get(key)
    if not isinstance(items, list):
        raise FormatError(f"request body needs a {key!r} list, got {type(items).__name__}")
    if not items:
        raise FormatError(f"{key!r} is empty: there is no conversation to send")
    return items


# ----------------------------------------------------------------------------- Anthropic
class AnthropicMessages:
    """``POST /v1/messages``: ``system`` + ``messages`` + ``tools`` in, usage in the reply and
    in the stream's ``message_start`` event. ``role: "system"`` messages inside ``messages``
    stay where they are (counted with the system prompt, never managed or dropped); a request
    that asks for the API's own compaction is forwarded unmanaged (never managed twice)."""

    name = "anthropic"
    path = "/v1/messages"

    def managed(self, body: Mapping[str, Any]) -> bool:
        return not server_compaction(body)

    def conversation(self, body: Mapping[str, Any], header: str | None) -> Incoming:
        items, interjected = split_system(_items(body, "messages"))
        if not items:
            raise FormatError("'messages' holds no user or assistant message")
        tools = body.get("tools") or []
        if not isinstance(tools, list):
            raise FormatError(f"'tools' must be a list, got {type(tools).__name__}")
        system = body.get("system")
        key = session_key(header, system, _first_user(items), bool(tools))
        ours, _ = edits.parse(body)
        counted = stable(_with_interjected(system, [m for _, m in interjected]))
        return Incoming(key, counted, tools, items, _anthropic_messages, ours, model_of(body))

    def render(
        self, body: Mapping[str, Any], messages: Sequence[Message], *, cache: bool = False
    ) -> dict[str, Any]:
        items, interjected = split_system(_items(body, "messages"))
        wanted = sum(1 for m in items if _marked(m))
        out = dict(body)
        out["messages"] = _with_breakpoints(messages, wanted)
        if cache and count_markers(body) == 0:
            out = add_breakpoints(out, messages)
        out["messages"] = interject(out["messages"], interjected)
        _, rest = edits.parse(body)
        out.pop(edits.FIELD, None)
        if rest is not None:
            out[edits.FIELD] = rest
        return out

    def finish(self, body: Mapping[str, Any], reply: Any, managed: Managed) -> Any:
        if edits.FIELD not in body or not isinstance(reply, Mapping):
            return None
        return {**reply, edits.FIELD: _applied(reply, managed)}

    def finish_event(self, body: Mapping[str, Any], event: Any, managed: Managed) -> Any:
        if edits.FIELD not in body or not isinstance(event, Mapping):
            return None
        if event.get("type") != "message_delta":
            return None
        return {**event, edits.FIELD: _applied(event, managed)}

    def usage(self, reply: Any) -> Any:
        return reply.get("usage") if isinstance(reply, Mapping) else None

    def stream_usage(self, event: Any) -> Any:
        if isinstance(event, Mapping) and event.get("type") == "message_start":
            message = event.get("message")
            return message.get("usage") if isinstance(message, Mapping) else None
        return None

    def error(self, kind: ErrorKind, message: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": kind.anthropic, "message": message}}

    def too_long(self, status: int, text: str) -> bool:
        return status == 400 and "prompt is too long" in text


COMPACTION_BLOCK = "compaction"
"""The block the API's server-side compaction leaves in the conversation."""


def server_compaction(body: Mapping[str, Any]) -> bool:
    """Whether the request uses the API's own compaction: a ``compact_*`` context edit, or a
    ``compaction`` block the API left in an earlier reply."""
    field = body.get(edits.FIELD)
    asked = field.get("edits") if isinstance(field, Mapping) else None
    if isinstance(asked, list) and any(
        isinstance(e, Mapping) and str(e.get("type", "")).startswith("compact") for e in asked
    ):
        return True
    messages = body.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, Mapping)
        and isinstance(m.get("content"), list)
        and any(isinstance(b, Mapping) and b.get("type") == COMPACTION_BLOCK for b in m["content"])
        for m in messages
    )


def split_system(items: Sequence[Any]) -> tuple[list[Any], list[tuple[int, Any]]]:
    """(the user/assistant messages, each ``role: "system"`` message with the number of
    conversation messages that follow it)."""
    conversation: list[Any] = []
    positions: list[tuple[int, Any]] = []
    for item in items:
        if isinstance(item, Mapping) and item.get("role") == "system":
            positions.append((len(conversation), item))
        else:
            conversation.append(item)
    return conversation, [(len(conversation) - at, item) for at, item in positions]


def interject(wire: list[dict[str, Any]], interjected: Sequence[tuple[int, Any]]) -> list[Any]:
    """``wire`` with each system message back the same number of messages from the end (at the
    front when compaction took the messages it came after); ``interjected`` is in request order,
    so its positions never decrease."""
    if not interjected:
        return wire
    out: list[Any] = []
    pending = list(interjected)
    for i in range(len(wire) + 1):
        while pending and len(wire) - pending[0][0] <= i:
            out.append(pending.pop(0)[1])
        if i < len(wire):
            out.append(wire[i])
    return out


def _with_interjected(system: Any, interjected: Sequence[Any]) -> Any:
    """The system prompt and the system messages as one list of blocks (for counting)."""
    if not interjected:
        return system
    blocks: list[Any] = [{"type": "text", "text": system}] if isinstance(system, str) else []
    if isinstance(system, list):
        blocks += system
    for message in interjected:
        content = message.get("content")
        blocks += [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    return blocks


def _applied(reply: Mapping[str, Any], managed: Managed) -> dict[str, Any]:
    """The reply's ``context_management`` with the proxy's edits before the upstream's own."""
    theirs = reply.get(edits.FIELD)
    upstream = theirs.get("applied_edits", []) if isinstance(theirs, Mapping) else []
    return {"applied_edits": [*managed.applied_edits, *upstream]}


def _first_user(items: Sequence[Any]) -> Any:
    return next((m for m in items if isinstance(m, Mapping) and m.get("role") == "user"), None)


def _anthropic_messages(items: Sequence[Any], start: int) -> list[Message]:
    return [message_from_wire(item, index=start + i) for i, item in enumerate(items)]


def _marked(item: Any) -> bool:
    """Whether a wire message carries a cache breakpoint on one of its blocks."""
    content = item.get("content") if isinstance(item, Mapping) else None
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and CACHE_CONTROL in b for b in content
    )


def _with_breakpoints(messages: Sequence[Message], wanted: int) -> list[dict[str, Any]]:
    """The managed messages on the wire with the client's message cache breakpoints moved to
    the last ``wanted`` messages: breakpoints stored with older turns would otherwise pile up
    past the API's limit of four, and the client meant them for the conversation's tail."""
    out: list[dict[str, Any]] = []
    first_marked = len(messages) - min(wanted, MAX_BREAKPOINTS)
    for i, message in enumerate(messages):
        blocks = [block_to_wire(b) for b in message.content]
        for block in blocks:
            block.pop(CACHE_CONTROL, None)
        cacheable = [b for b in blocks if b.get("type") in CACHEABLE and b.get("text") != ""]
        if i >= first_marked and cacheable:
            cacheable[-1][CACHE_CONTROL] = {"type": "ephemeral"}
        out.append({"role": message.role, "content": blocks})
    return out


ANTHROPIC = AnthropicMessages()
