"""Anthropic Messages wire format: blocks and messages to and from dicts and SDK objects.

Fields we do not model are kept in each block's ``extra`` (blocks of unknown type in an
UnknownBlock), so a message read from the wire is written back the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, assert_never

from contextwarden.errors import FormatError
from contextwarden.model import (
    JSON,
    Block,
    DocumentBlock,
    FrozenDict,
    ImageBlock,
    Message,
    MessageMeta,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    freeze,
    thaw,
)
from contextwarden.wire.gemini import GEMINI_PART

_MODELLED: dict[str, tuple[str, ...]] = {
    "text": ("type", "text"),
    "tool_use": ("type", "id", "name", "input"),
    "tool_result": ("type", "tool_use_id", "content", "is_error"),
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
    "image": ("type", "source"),
    "document": ("type", "source"),
}


def as_plain(obj: Any) -> JSON:
    """A JSON value from a dict or an SDK (pydantic) object; anything else is returned as is."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_none=True)
    return obj


def block_from_wire(raw: Mapping[str, Any]) -> Block:
    """One content block from its wire dict; an unknown or malformed block becomes UnknownBlock."""
    kind = raw.get("type")
    if not isinstance(kind, str) or kind not in _MODELLED or not _well_formed(kind, raw):
        return UnknownBlock(FrozenDict(raw))
    keys = _MODELLED[kind]
    extra = FrozenDict({k: v for k, v in raw.items() if k not in keys})
    match kind:
        case "text":
            return TextBlock(raw["text"], extra)
        case "tool_use":
            return ToolUseBlock(raw["id"], raw["name"], freeze(raw.get("input") or {}), extra)
        case "tool_result":
            return ToolResultBlock(
                raw["tool_use_id"],
                _result_content(raw.get("content", "")),
                bool(raw.get("is_error", False)),
                extra,
            )
        case "thinking":
            return ThinkingBlock(raw["thinking"], raw.get("signature") or "", extra)
        case "redacted_thinking":
            return RedactedThinkingBlock(raw["data"], extra)
        case "image":
            return ImageBlock(freeze(raw["source"]), extra)
        case _:
            return DocumentBlock(freeze(raw["source"]), extra)


_REQUIRED: dict[str, dict[str, type]] = {
    "text": {"text": str},
    "tool_use": {"id": str, "name": str},
    "tool_result": {"tool_use_id": str},
    "thinking": {"thinking": str},
    "redacted_thinking": {"data": str},
    "image": {"source": Mapping},
    "document": {"source": Mapping},
}
"""Fields a block of each modelled type must have, with their types; otherwise it stays unknown."""


def _well_formed(kind: str, raw: Mapping[str, Any]) -> bool:
    if kind == "tool_use" and not isinstance(raw.get("input", {}), Mapping):
        return False
    if kind == "tool_result" and not isinstance(raw.get("content", ""), str | list):
        return False
    return all(isinstance(raw.get(k), t) for k, t in _REQUIRED[kind].items())


_NOT_RESULT_PARTS = frozenset({None, "tool_result", "tool_use", "thinking", "redacted_thinking"})
"""Block types (None: not an object) a tool_result's content cannot hold."""


def _result_content(
    content: str | list[Any],
) -> str | tuple[TextBlock | ImageBlock | DocumentBlock | UnknownBlock, ...]:
    if isinstance(content, str):
        return content
    parts: list[TextBlock | ImageBlock | DocumentBlock | UnknownBlock] = []
    for item in content:
        # Only the part types a result may hold are read as blocks: reading a nested tool_result
        # would recurse once per level of a hostile nest (the "invalid" wrapper checks depth).
        kind = item.get("type") if isinstance(item, Mapping) else None
        block = block_from_wire(item) if kind not in _NOT_RESULT_PARTS else None
        if isinstance(block, TextBlock | ImageBlock | DocumentBlock | UnknownBlock):
            parts.append(block)
        else:
            parts.append(UnknownBlock(FrozenDict({"type": "invalid", "value": item})))
    return tuple(parts)


def block_to_wire(block: Block) -> dict[str, JSON]:
    """The wire dict of a block (the inverse of ``block_from_wire``)."""
    if isinstance(block, UnknownBlock):
        return dict(thaw(block.raw))
    body: dict[str, JSON]
    match block:
        case TextBlock():
            body = {"type": "text", "text": block.text}
        case ToolUseBlock():
            body = {"type": "tool_use", "id": block.id, "name": block.name}
            body["input"] = thaw(block.input)
        case ToolResultBlock():
            body = {"type": "tool_result", "tool_use_id": block.tool_use_id}
            if isinstance(block.content, str):
                body["content"] = block.content
            else:
                body["content"] = [block_to_wire(b) for b in block.content]
            if block.is_error:
                body["is_error"] = True
        case ThinkingBlock():
            body = {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
        case RedactedThinkingBlock():
            body = {"type": "redacted_thinking", "data": block.data}
        case ImageBlock() | DocumentBlock():
            body = {"type": block.type, "source": thaw(block.source)}
        case _:
            assert_never(block)
    body.update({k: v for k, v in thaw(block.extra).items() if k != GEMINI_PART})
    return body


def message_from_wire(raw: Any, *, index: int | None = None) -> Message:
    """A Message from a wire dict or an ``anthropic`` SDK Message/MessageParam.

    Raises FormatError (with ``index``) when the role or content is not usable.
    """
    data = as_plain(raw)
    if not isinstance(data, Mapping):
        raise FormatError(f"expected a message object, got {type(raw).__name__}", index=index)
    role = data.get("role")
    if role not in ("user", "assistant"):
        raise FormatError(f"role must be 'user' or 'assistant', got {role!r}", index=index)
    content = data.get("content")
    if isinstance(content, str):
        blocks: tuple[Block, ...] = (TextBlock(content),)
    elif isinstance(content, list):
        blocks = tuple(
            block_from_wire(b) if isinstance(b, Mapping) else UnknownBlock(FrozenDict({"value": b}))
            for b in content
        )
    else:
        raise FormatError(f"content must be a string or a list, got {content!r:.60}", index=index)
    return Message(role, blocks, _meta(data))


def _meta(data: Mapping[str, Any]) -> MessageMeta:
    keep = {k: data[k] for k in ("model", "stop_reason", "usage") if data.get(k) is not None}
    msg_id = data.get("id")
    return MessageMeta(id=msg_id if isinstance(msg_id, str) else None, extra=FrozenDict(keep))


def message_to_wire(message: Message) -> dict[str, JSON]:
    return {"role": message.role, "content": [block_to_wire(b) for b in message.content]}


def messages_to_wire(messages: Sequence[Message]) -> list[dict[str, JSON]]:
    return [message_to_wire(m) for m in messages]


def system_to_wire(system: str | Sequence[Mapping[str, Any]] | None) -> JSON:
    if system is None or isinstance(system, str):
        return system
    return [dict(b) for b in system]
