"""One Responses API item as our blocks, and the record a message keeps of the items it was
read from so they can be written back verbatim. ``responses`` is the public face.

The record (``meta.extra["responses_items"]``) holds, per item, its envelope and the types of
the blocks it became. The envelope is the item without what its blocks already hold exactly
(text parts' ``text``, images' ``image_url``, files' ``file_data``, a string ``content`` or
``output``; an item kept whole in an unknown block, such as reasoning, has no envelope), so a long
tool output or an encrypted reasoning item is stored once, not twice; ``restore`` puts it back
from the blocks.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

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
from contextwarden.wire.common import DATA_URL, RAW_ARGUMENTS, image_from_url
from contextwarden.wire.openai_in import arguments_input
from contextwarden.wire.openai_out import source_url

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
            return (ToolUseBlock(call_id, item["name"], arguments_input(item.get("arguments"))),)
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
    """The layout entry of ``item``, which became ``blocks``: its envelope (none when the block
    is the item itself, kept whole) and their types."""
    kinds = [b.type for b in blocks]
    if len(blocks) == 1 and blocks[0] == UnknownBlock(FrozenDict(item)):
        return {"kinds": kinds}
    entry: dict[str, Any] = {"item": _envelope(item, blocks), "kinds": kinds}
    if item.get("type", "message") == "message":
        entry["text_crc"] = _text_crc(blocks)
    return entry


def _text_crc(blocks: Sequence[Block]) -> int:
    """A stable fingerprint of the blocks' text: a message item's record only describes blocks
    with this text (its ids must not move to other text, e.g. after merges)."""
    return zlib.crc32("\x00".join(b.text for b in blocks if isinstance(b, TextBlock)).encode())


def _envelope(item: Mapping[str, Any], blocks: Sequence[Block]) -> dict[str, Any]:
    """The item without what ``blocks`` carry (a real item always has these fields, so a
    missing one means "take it from the block")."""
    kind = item.get("type", "message")
    body, first = dict(item), blocks[0] if blocks else None
    if kind in OUTPUT_TYPES and isinstance(first, ToolResultBlock):
        output = item.get("output")
        if isinstance(output, str):
            del body["output"]
        elif isinstance(output, list) and isinstance(first.content, tuple):
            body["output"] = _strip_parts(output, first.content)
    elif kind == "message" and isinstance(item.get("content"), str):
        if isinstance(first, TextBlock):
            del body["content"]
    elif kind == "message" and isinstance(item.get("content"), list):
        body["content"] = _strip_parts(item["content"], blocks)
    return body


def _strip_parts(parts: Sequence[Any], blocks: Sequence[Block]) -> list[Any]:
    return [_strip_part(p, b) for p, b in zip(parts, blocks, strict=True)]


def _strip_part(part: Any, block: Block) -> Any:
    """The part without the text, image or file its block holds exactly."""
    field = _media_field(block)
    if field is None or not isinstance(part, Mapping):
        return part
    held = block.text if isinstance(block, TextBlock) else _url(block)
    return {k: v for k, v in part.items() if k != field} if part.get(field) == held else part


def _fill_parts(parts: Sequence[Any], blocks: Sequence[Block]) -> list[Any]:
    return [_fill_part(p, b) for p, b in zip(parts, blocks, strict=True)]


def _fill_part(part: Any, block: Block) -> Any:
    field = _media_field(block)
    if field is None or not isinstance(part, Mapping) or field in part:
        return part
    return {**part, field: block.text if isinstance(block, TextBlock) else _url(block)}


def _media_field(block: Block) -> str | None:
    """The part field a block's own value goes in (None: the part is kept as it is)."""
    if isinstance(block, TextBlock):
        return "text"
    if isinstance(block, ImageBlock):
        return "image_url"
    return "file_data" if isinstance(block, DocumentBlock) else None


def _url(block: Block) -> str | None:
    if isinstance(block, ImageBlock | DocumentBlock):
        return source_url(block.source)
    return None


def restore(entry: Mapping[str, Any], blocks: Sequence[Block]) -> dict[str, Any] | None:
    """The recorded item with what it lent its blocks taken back from them; None when the record
    does not describe these blocks (other types, another call, other text)."""
    kinds, first = tuple(entry.get("kinds") or ()), blocks[0] if blocks else None
    if tuple(b.type for b in blocks) != kinds:
        return None
    crc = entry.get("text_crc")
    if crc is not None and crc != _text_crc(blocks):
        return None
    if "item" not in entry:
        return thaw(first.raw) if isinstance(first, UnknownBlock) and len(blocks) == 1 else None
    envelope = thaw(entry["item"])
    call_id = _call_id(first)
    if not isinstance(envelope, dict) or (
        call_id is not None and envelope.get("call_id") != call_id
    ):
        return None  # not an item, or another call moved here: its ids are not this one's
    kind = envelope.get("type", "message")
    if kind in OUTPUT_TYPES and isinstance(first, ToolResultBlock):
        output = envelope.get("output")
        if output is None:
            return {**envelope, "output": first.text}
        if isinstance(output, list) and isinstance(first.content, tuple):
            if len(output) == len(first.content):
                return {**envelope, "output": _fill_parts(output, first.content)}
        return envelope
    content = envelope.get("content")
    if kind == "message" and content is None and isinstance(first, TextBlock):
        return {**envelope, "content": first.text}
    if kind == "message" and isinstance(content, list):
        return {**envelope, "content": _fill_parts(content, blocks)}
    return envelope
