"""One Responses API item as our blocks, and the record a message keeps of the items it was
read from so they can be written back verbatim. ``responses`` is the public face.

The record (``meta.extra["responses_items"]``) holds, per item, its envelope and the types of
the blocks it became. The envelope is the item without the text its blocks already carry
(text parts' ``text``, a string ``content``, a tool output's string ``output``), so a long tool
output is stored once, not twice; ``restore`` puts that text back from the blocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contextwarden.formats.base import DATA_URL, RAW_ARGUMENTS, image_from_url, parse_arguments
from contextwarden.model import (
    Block,
    DocumentBlock,
    FrozenDict,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    freeze,
    thaw,
)

LAYOUT_KEY = "responses_items"
"""``meta.extra`` key: ``[{"item": envelope, "kinds": [block type, ...]}, ...]``."""
CALL_TYPES = frozenset({"function_call", "custom_tool_call"})
"""Items that become tool_use blocks (``call_id`` is the tool_use id)."""
OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
"""Items that become tool_result blocks."""
CALLER_TYPES = frozenset({"mcp_approval_response", "item_reference"})
"""Caller-side items besides user messages and ``*_output`` items."""
MODEL_TYPES = frozenset(
    {"reasoning", "compaction", "mcp_list_tools", "mcp_approval_request", "additional_tools"}
)
"""Model-side item types that end in neither ``_call`` nor ``_output`` (kept as unknown blocks)."""
INPUT_PARTS = frozenset({"input_text", "input_image", "input_file", "input_audio"})
OUTPUT_PARTS = frozenset({"output_text", "refusal"})
_TEXT_PARTS = ("input_text", "output_text")
_ITEM_SUFFIXES = ("_call", "_output")

Part = TextBlock | ImageBlock | DocumentBlock | UnknownBlock


def is_item_type(kind: str) -> bool:
    """True for a Responses item type (what an unknown block holding a whole item has)."""
    known = MODEL_TYPES | CALL_TYPES | OUTPUT_TYPES | CALLER_TYPES
    return kind in known or kind == "message" or kind.endswith(_ITEM_SUFFIXES)


def item_blocks(item: Mapping[str, Any]) -> tuple[Block, ...]:
    """The blocks one item becomes (an item we do not model is one unknown block, verbatim)."""
    kind = item.get("type", "message")
    call_id = item.get("call_id")
    if kind == "message" and isinstance(item.get("role"), str):
        return _content_blocks(item.get("content"))
    if kind in CALL_TYPES and isinstance(call_id, str) and isinstance(item.get("name"), str):
        if kind == "function_call":
            arguments = item.get("arguments")
            parsed = parse_arguments(arguments) if isinstance(arguments, str) else {}
            return (ToolUseBlock(call_id, item["name"], parsed),)
        return (ToolUseBlock(call_id, item["name"], {RAW_ARGUMENTS: item.get("input", "")}),)
    output = item.get("output")
    if kind in OUTPUT_TYPES and isinstance(call_id, str):
        if isinstance(output, str):
            return (ToolResultBlock(call_id, output),)
        if isinstance(output, list):
            return (ToolResultBlock(call_id, tuple(part_block(p) for p in output)),)
    return (UnknownBlock(FrozenDict(item)),)


def _content_blocks(content: Any) -> tuple[Block, ...]:
    if isinstance(content, str):
        return (part_block({"type": "input_text", "text": content}),)
    if isinstance(content, list):
        return tuple(part_block(p) for p in content)
    return (UnknownBlock(FrozenDict({"type": "invalid_content", "value": content})),)


def part_block(part: Any) -> Part:
    """One content part; blank text (not valid as a text block) and anything else we do not
    model stays an unknown block holding the part verbatim."""
    if not isinstance(part, Mapping):
        return UnknownBlock(FrozenDict({"type": "invalid", "value": part}))
    kind, text = part.get("type"), part.get("text")
    if kind in _TEXT_PARTS and isinstance(text, str) and text.strip():
        return TextBlock(text)
    url = part.get("image_url")
    if kind == "input_image" and isinstance(url, str):
        return image_from_url(url)
    data = part.get("file_data")
    match = DATA_URL.match(data) if isinstance(data, str) else None
    if kind == "input_file" and match:
        title = part.get("filename")
        extra = FrozenDict({"title": title}) if isinstance(title, str) else FrozenDict()
        source = {"type": "base64", "media_type": match["mt"], "data": match["data"]}
        return DocumentBlock(freeze(source), extra)
    return UnknownBlock(FrozenDict(part))


def _call_id(block: Block | None) -> str | None:
    if isinstance(block, ToolUseBlock):
        return block.id
    return block.tool_use_id if isinstance(block, ToolResultBlock) else None


# ----------------------------------------------------------------------------- the record
def record(item: Mapping[str, Any], blocks: Sequence[Block]) -> dict[str, Any]:
    """The layout entry of ``item``, which became ``blocks``: its envelope and their types."""
    return {"item": _envelope(item, blocks), "kinds": [b.type for b in blocks]}


def _envelope(item: Mapping[str, Any], blocks: Sequence[Block]) -> dict[str, Any]:
    """The item without the text ``blocks`` carry (a real item always has these fields, so a
    missing one means "take it from the block")."""
    kind = item.get("type", "message")
    if kind in OUTPUT_TYPES and isinstance(item.get("output"), str):
        return {k: v for k, v in item.items() if k != "output"}
    content = item.get("content")
    if kind != "message":
        return dict(item)
    if isinstance(content, str) and isinstance(blocks[0], TextBlock):
        return {k: v for k, v in item.items() if k != "content"}
    if isinstance(content, list):
        parts = [
            {k: v for k, v in p.items() if k != "text"} if isinstance(b, TextBlock) else p
            for p, b in zip(content, blocks, strict=True)
        ]
        return {**item, "content": parts}
    return dict(item)


def restore(entry: Mapping[str, Any], blocks: Sequence[Block]) -> dict[str, Any] | None:
    """The recorded item with its text taken from ``blocks``; None when the blocks are no longer
    of the recorded types (the record does not describe them)."""
    envelope, kinds = thaw(entry.get("item")), entry.get("kinds")
    if not isinstance(envelope, dict) or [b.type for b in blocks] != thaw(kinds):
        return None
    kind = envelope.get("type", "message")
    first = blocks[0] if blocks else None
    call_id = _call_id(first)
    if call_id is not None and envelope.get("call_id") != call_id:
        return None  # another call moved here: this item's ids are not its ids
    if kind in OUTPUT_TYPES and "output" not in envelope and isinstance(first, ToolResultBlock):
        return {**envelope, "output": first.text}
    if kind == "message" and "content" not in envelope and isinstance(first, TextBlock):
        return {**envelope, "content": first.text}
    content = envelope.get("content")
    if kind == "message" and isinstance(content, list):
        parts = [
            {**p, "text": b.text} if isinstance(b, TextBlock) and "text" not in p else p
            for p, b in zip(content, blocks, strict=True)
        ]
        return {**envelope, "content": parts}
    return envelope
