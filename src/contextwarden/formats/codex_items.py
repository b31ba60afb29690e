"""Codex ``response_item`` payloads as message fragments: text, images, tool calls and outputs.
The loader (``codex``) groups the fragments into turns; the mapping rules are in its docstring.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.model import (
    Block,
    FrozenDict,
    Message,
    Role,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
)
from contextwarden.wire.common import image_from_url, parse_arguments

_TEXT_PARTS = {"input_text": "text", "output_text": "text", "text": "text", "refusal": "refusal"}
_PASSTHROUGH = "internal_chat_message_metadata_passthrough"
_CALL_ENVELOPE = frozenset(
    {"type", "id", "call_id", "name", "namespace", "arguments", "input", "action", _PASSTHROUGH}
)
"""What a standalone call's tool_use already holds; the rest of the item is its result."""


@dataclass
class Item:
    """One response_item as a message fragment."""

    line: int
    message: Message
    source_id: str
    timestamp: float | None
    extra: dict[str, Any] = field(default_factory=dict)
    text: str | None = None
    """For user and developer messages: their text, matched against user_message events."""


def convert(line: int, payload: Mapping[str, Any], stamp: float | None) -> list[Item]:
    """The message fragments of one response_item; empty when the type has no mapping."""
    kind = payload.get("type")
    source = _source_id(line, payload)
    if kind == "message":
        return [_message_item(line, payload, stamp, source)]
    if kind == "agent_message":
        return [_agent_message_item(line, payload, stamp, source)]
    if kind == "reasoning":
        # No valid wire block for it (see the module docstring): kept whole in the meta.
        empty = Message("assistant", ())
        return [Item(line, empty, source, stamp, {"reasoning": (dict(payload),)})]
    if not isinstance(kind, str):
        return []
    call_id = payload.get("call_id")
    if kind.endswith("_call") and not isinstance(call_id, str):
        return _standalone_call(line, payload, stamp, kind, source)
    if not isinstance(call_id, str):
        return []
    if kind.endswith("_call"):
        name = _tool_name(payload, kind)
        block: Block = ToolUseBlock(call_id, name, FrozenDict(_call_input(payload)))
        return [Item(line, Message("assistant", (block,)), source, stamp)]
    if kind.endswith("_output"):
        content, is_error = _result(payload)
        result = ToolResultBlock(call_id, content, is_error)
        return [Item(line, Message("user", (result,)), source, stamp)]
    return []


def _standalone_call(
    line: int, payload: Mapping[str, Any], stamp: float | None, kind: str, source: str
) -> list[Item]:
    """A call the model made to a hosted tool (``web_search_call``, ``image_generation_call``…):
    one item, no ``*_output`` after it, so it becomes a tool_use and, at once, its tool_result
    holding what the item recorded (status, results) — the model saw the outcome right there."""
    call_id = payload["id"] if isinstance(payload.get("id"), str) else f"{kind}-line{line}"
    use = ToolUseBlock(call_id, _tool_name(payload, kind), FrozenDict(_call_input(payload)))
    rest = {k: v for k, v in payload.items() if k not in _CALL_ENVELOPE}
    if "output" in rest or "result" in rest:
        content, is_error = _result({"output": rest.pop("output", rest.pop("result", None))})
    else:
        content, is_error = (json.dumps(rest, ensure_ascii=False) if rest else ""), False
    failed = is_error or payload.get("status") in ("failed", "incomplete")
    result = ToolResultBlock(call_id, content, failed)
    return [
        Item(line, Message("assistant", (use,)), source, stamp),
        Item(line, Message("user", (result,)), f"{source}:result", stamp),
    ]


def _source_id(line: int, payload: Mapping[str, Any]) -> str:
    for key in ("id", "call_id"):
        if isinstance(payload.get(key), str):
            return str(payload[key])
    return f"line:{line}"


def _message_item(line: int, payload: Mapping[str, Any], stamp: float | None, source: str) -> Item:
    role, content = payload.get("role"), payload.get("content")
    if role not in ("user", "assistant", "developer", "system"):
        raise FormatError(f"message role must be user, assistant or developer, got {role!r}")
    if isinstance(content, str):
        content = [{"type": "input_text", "text": content}]
    if not isinstance(content, list):
        raise FormatError(f"message content must be a list, got {type(content).__name__}")
    blocks = tuple(_part(p) for p in content)
    wire_role: Role = "assistant" if role == "assistant" else "user"
    item = Item(line, Message(wire_role, blocks), source, stamp)
    if wire_role == "user":
        item.text = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
        if role != "user":
            item.extra["codex_role"] = role
    return item


def _agent_message_item(
    line: int, payload: Mapping[str, Any], stamp: float | None, source: str
) -> Item:
    """``ResponseItem::AgentMessage`` (``codex-rs/protocol/src/models.rs``): what another agent
    of a multi-agent session sent this one, model input: where a provider cannot take the item,
    Codex sends it as a ``user`` message of its ``input_text`` (``tool_plan.rs``). So it is user
    text here (an encrypted part stays unknown), matched like any user item, so marked injected
    (the person did not type it); who wrote it to whom goes to ``extra["agent_messages"]``."""
    content = payload.get("content")
    if not isinstance(content, list):
        raise FormatError(f"agent_message content must be a list, got {type(content).__name__}")
    blocks = tuple(_part(p) for p in content)
    route = {k: payload.get(k) for k in ("author", "recipient", "id") if k in payload}
    item = Item(line, Message("user", blocks), source, stamp, {"agent_messages": (route,)})
    item.text = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
    return item


def _part(part: Any) -> Block:
    if not isinstance(part, Mapping):
        return UnknownBlock(FrozenDict({"type": "invalid", "value": part}))
    key = _TEXT_PARTS.get(str(part.get("type")))
    if key is not None and isinstance(part.get(key), str):
        return TextBlock(part[key])
    url = part.get("image_url")
    if part.get("type") == "input_image" and isinstance(url, str):
        return image_from_url(url)
    return UnknownBlock(FrozenDict(part))


def _tool_name(payload: Mapping[str, Any], kind: str) -> str:
    name = payload.get("name")
    name = name if isinstance(name, str) and name else kind.removesuffix("_call")
    namespace = payload.get("namespace")
    return f"{namespace}__{name}" if isinstance(namespace, str) and namespace else name


def _call_input(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The tool input: parsed JSON ``arguments``, or free-form ``input``/``action`` kept whole."""
    args = payload.get("arguments")
    if isinstance(args, str):
        return parse_arguments(args)
    if isinstance(args, Mapping):
        return dict(args)
    for key in ("arguments", "input", "action"):
        if key in payload:
            value = payload[key]
            return dict(value) if isinstance(value, Mapping) else {key: value}
    return {}


def _result(payload: Mapping[str, Any]) -> tuple[str | tuple[Any, ...], bool]:
    """(content, is_error) of a ``*_output`` item."""
    if "output" not in payload:  # tool_search_output and the like: everything but the envelope
        rest = {k: v for k, v in payload.items() if k not in ("type", "call_id", _PASSTHROUGH)}
        return json.dumps(rest, ensure_ascii=False), False
    output = payload["output"]
    if isinstance(output, str):
        return output, False
    if isinstance(output, list):
        return tuple(_part(p) for p in output), False
    if isinstance(output, Mapping) and isinstance(output.get("content"), str):
        return output["content"], output.get("success") is False  # older {content, success}
    return json.dumps(output, ensure_ascii=False), False
