"""Our messages out to the OpenAI Responses API: ``input`` items, function tools, and the
request. ``responses`` is the public face; its docstring states the mapping and the round trip.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from contextwarden.model import (
    JSON,
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    thaw,
)
from contextwarden.wire.anthropic import block_to_wire
from contextwarden.wire.openai_out import (
    arguments_text,
    function_spec,
    source_url,
    system_text,
)
from contextwarden.wire.responses_items import (
    CALL_TYPES,
    INPUT_PARTS,
    LAYOUT_KEY,
    OUTPUT_PARTS,
    OUTPUT_TYPES,
    is_item_type,
    item_blocks,
    part_block,
    restore,
)


def responses_request(
    system: str | Sequence[Mapping[str, Any]] | None,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] = (),
) -> dict[str, JSON]:
    """Keyword arguments for ``client.responses.create``: ``instructions`` (the system prompt,
    left out when there is none), ``input`` and ``tools`` (left out when there are none)."""
    request: dict[str, JSON] = {}
    if system is not None:
        request["instructions"] = system if isinstance(system, str) else system_text(system)
    request["input"] = messages_to_responses(messages)
    if tools:
        request["tools"] = tools_to_responses(tools)
    return request


def tools_to_responses(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, JSON]]:
    """Tool definitions as Responses tools: Anthropic and chat function tools converted,
    Responses ones and built-in tools (``{"type": "web_search"}``) as they are.

    ``strict`` is False unless the definition says otherwise: the Responses API defaults it to
    True, which rejects ordinary schemas (every property required, no additional properties).
    """
    out: list[dict[str, JSON]] = []
    for tool in tools:
        inner = tool.get("function")
        if not isinstance(inner, Mapping) and "input_schema" not in tool and "type" in tool:
            out.append(thaw(tool))
            continue
        strict = inner.get("strict") if isinstance(inner, Mapping) else None
        out.append({"type": "function", **function_spec(tool), "strict": bool(strict)})
    return out


def messages_to_responses(messages: Sequence[Message]) -> list[dict[str, JSON]]:
    """Our messages as Responses ``input`` items (see ``responses`` for the round trip)."""
    return [item for message in messages for item in message_items(message)]


def message_items(message: Message) -> list[dict[str, JSON]]:
    """The items of one message: each recorded item while the blocks still line up with the
    record (rebuilt in its envelope if a compaction changed them, rendered fresh if they are
    no longer its blocks), then the remaining blocks rendered fresh."""
    layout = message.meta.extra.get(LAYOUT_KEY) or ()
    content, position = message.content, 0
    out: list[dict[str, JSON]] = []
    for entry in layout:
        kinds = tuple(entry.get("kinds") or ())
        blocks = content[position : position + len(kinds)]
        if tuple(b.type for b in blocks) != kinds:
            break  # the record no longer lines up with the blocks
        item = restore(entry, blocks)
        if item is None:
            out.extend(blocks_to_items(blocks, message.role))
        elif "item" in entry and item_blocks(item) != blocks:  # else the block is the item
            out.append(_in_envelope(item, blocks, message.role))
        else:
            out.append(item)
        position += len(kinds)
    out.extend(blocks_to_items(content[position:], message.role))
    return out


def _in_envelope(item: Mapping[str, Any], blocks: Sequence[Block], role: Role) -> dict[str, JSON]:
    """The item rebuilt from changed blocks, keeping its own fields (id, status, role, type)
    and every part whose block did not change."""
    kind = item.get("type", "message")
    body = dict(item)
    first = blocks[0]
    if kind == "message" and isinstance(item.get("content"), list):
        body["content"] = [
            part if part_block(part) == block else _part_out(block, role)
            for part, block in zip(item["content"], blocks, strict=True)
        ]
    elif kind in CALL_TYPES and isinstance(first, ToolUseBlock):
        field = "input" if kind == "custom_tool_call" else "arguments"
        body.update({"name": first.name, "call_id": first.id, field: arguments_text(first)})
    elif kind in OUTPUT_TYPES and isinstance(first, ToolResultBlock):
        body["output"] = _output(first)
    else:
        return blocks_to_items(blocks, role)[0]
    return body


def blocks_to_items(blocks: Sequence[Block], role: Role) -> list[dict[str, JSON]]:
    """Items for blocks with no recorded item: a user turn's text and media gather into one
    message; each assistant text is its own id-less message with plain string content (the
    form the API takes from a caller)."""
    out: list[dict[str, JSON]] = []
    parts: list[dict[str, JSON]] = []

    def flush() -> None:
        if parts:
            out.append(_easy_message(role, list(parts)))
            parts.clear()

    for block in blocks:
        if isinstance(block, ThinkingBlock | RedactedThinkingBlock):
            continue  # signed for Anthropic: no place in the Responses API
        item = _block_item(block)
        if item is None:
            parts.append(_part_out(block, role))
            if role == "assistant":
                flush()
            continue
        flush()
        out.append(item)
    flush()
    return out


def _block_item(block: Block) -> dict[str, JSON] | None:
    """The item a block is on its own (tool calls and results, verbatim items); None for parts."""
    if isinstance(block, ToolUseBlock):
        return {
            "type": "function_call",
            "call_id": block.id,
            "name": block.name,
            "arguments": arguments_text(block),
        }
    if isinstance(block, ToolResultBlock):
        return {
            "type": "function_call_output",
            "call_id": block.tool_use_id,
            "output": _output(block),
        }
    if isinstance(block, UnknownBlock) and is_item_type(block.type):
        return dict(thaw(block.raw))
    return None


def _easy_message(role: Role, parts: list[dict[str, JSON]]) -> dict[str, JSON]:
    if len(parts) == 1 and parts[0].get("type") in ("input_text", "output_text"):
        return {"role": role, "content": parts[0]["text"]}
    return {"role": role, "content": parts}


def _part_out(block: Block, role: Role) -> dict[str, JSON]:
    """One content part of a ``role`` message for a block; what has no part is its JSON text."""
    allowed = OUTPUT_PARTS if role == "assistant" else INPUT_PARTS
    if isinstance(block, UnknownBlock) and block.type in allowed:
        return dict(thaw(block.raw))
    media = _media_part(block) if role == "user" else None
    if media is not None:
        return media
    text = block.text if isinstance(block, TextBlock) else _json_text(block)
    if role == "assistant":
        return {"type": "output_text", "text": text, "annotations": []}
    return {"type": "input_text", "text": text}


def _json_text(block: Block) -> str:
    return json.dumps(block_to_wire(block), ensure_ascii=False)


def _media_part(block: Block) -> dict[str, JSON] | None:
    if not isinstance(block, ImageBlock | DocumentBlock):
        return None
    url = source_url(block.source)
    if url is None:
        return None
    if isinstance(block, ImageBlock):
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    part: dict[str, JSON] = {"type": "input_file", "file_data": url}
    if isinstance(block.extra.get("title"), str):
        part["filename"] = block.extra["title"]
    return part


def _output(block: ToolResultBlock) -> JSON:
    if isinstance(block.content, str):
        return block.content
    return [_part_out(part, "user") for part in block.content]
