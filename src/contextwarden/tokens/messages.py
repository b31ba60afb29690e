"""What each content block, message and preamble costs, written once for every counter.

A counter supplies ``count_text``; these functions add what the wire adds around the text.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias, assert_never

from contextwarden.model import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    thaw,
)

CountText: TypeAlias = Callable[[str], int]

MESSAGE_OVERHEAD: Final = 4
"""Per message: role and turn markers. OpenAI documents 3 per chat message; one more for margin."""

BLOCK_OVERHEAD: Final = 2
"""Per content block: the block's type framing (a guess; usage anchors correct it)."""

IMAGE_TOKENS: Final = 1_600
"""Per image. Anthropic bills ≈ width * height / 750 and scales images down to about 1.15
megapixels, so ≈ 1,600 is the most one image costs; we do not decode images to measure them."""

PDF_PAGE_TOKENS: Final = 3_000
"""Per PDF page. Anthropic: each page costs 1,500-3,000 text tokens plus the page as an image;
3,000 is the upper end of the text figure (a text-heavy page rendered in full costs more)."""

PDF_BYTES_PER_PAGE: Final = 50_000
"""When the page objects cannot be seen (compressed object streams): assume one page per 50 kB."""

UNSIZED_DOCUMENT_TOKENS: Final = 10_000
"""A document we cannot measure (URL or file id): a few pages' worth until a usage anchor."""

REDACTED_THINKING_CHARS_PER_TOKEN: Final = 4
"""Redacted thinking is encrypted base64 (≈ 4/3 of the plaintext bytes) of text at ≈ 4 bytes a
token, i.e. ≈ 5.3 characters a token; 4 keeps the estimate on the high side."""

TOOLS_PREAMBLE_TOKENS: Final = 346
"""Once, when any tools are defined: the system prompt Anthropic adds for tool use (346 tokens
for current models with ``tool_choice`` auto, per its pricing page)."""

TOOL_DEFINITION_OVERHEAD: Final = 4
"""Per tool definition, around its JSON."""

_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def _compact_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)``, with the
    C encoder made once: ``dumps`` and ``JSONEncoder.encode`` build one per call, which costs
    more than encoding a tool call's input (this runs for every tool call added).

    No circular check: ``compact_json`` thaws the value first, and a thawed value is a new tree
    (thawing a cycle would never end). Without json's C encoder, the public one does the work.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str).encode
    encode = make(None, str, json.encoder.encode_basestring, None, ":", ",", False, False, True)
    return lambda value: "".join(encode(value, 0))


_compact = _compact_encoder()


def compact_json(value: Any) -> str:
    """JSON without spaces (frozen values thawed): the cheapest faithful rendering of data."""
    return _compact(thaw(value))


def count_message_with(count_text: CountText, message: Message) -> int:
    """Tokens a message costs: its blocks plus the per-message overhead."""
    total = MESSAGE_OVERHEAD
    # A loop with the text block inline, not sum() over a generator: this runs on every add,
    # and most blocks are text (blocks are final dataclasses, so the exact type is the test).
    for block in message.content:
        if type(block) is TextBlock:
            total += BLOCK_OVERHEAD + count_text(block.text)
        else:
            total += count_block_with(count_text, block)
    return total


def count_block_with(count_text: CountText, block: Block) -> int:
    """Tokens one content block costs, its per-block overhead included."""
    match block:
        case TextBlock():
            return BLOCK_OVERHEAD + count_text(block.text)
        case ThinkingBlock():
            # The signature is opaque verification data, not text the model reads: not counted.
            return BLOCK_OVERHEAD + count_text(block.thinking)
        case RedactedThinkingBlock():
            return BLOCK_OVERHEAD + math.ceil(len(block.data) / REDACTED_THINKING_CHARS_PER_TOKEN)
        case ToolUseBlock():
            return (
                BLOCK_OVERHEAD
                + count_text(block.id)
                + count_text(block.name)
                + count_text(compact_json(block.input))
            )
        case ToolResultBlock():
            if isinstance(block.content, str):
                body = count_text(block.content)
            else:
                body = sum(count_block_with(count_text, part) for part in block.content)
            return BLOCK_OVERHEAD + count_text(block.tool_use_id) + body
        case ImageBlock():
            return BLOCK_OVERHEAD + IMAGE_TOKENS
        case DocumentBlock():
            return BLOCK_OVERHEAD + _count_document(count_text, block)
        case UnknownBlock():
            return BLOCK_OVERHEAD + count_text(compact_json(block.raw))
        case _:
            assert_never(block)


def count_preamble(
    count_text: CountText,
    system: str | Sequence[Any] | None,
    tools: Sequence[Mapping[str, Any]] | None,
) -> int:
    """Tokens of the system prompt (a string or a list of text blocks) and the tool definitions."""
    total = 0
    if isinstance(system, str) and system:
        total += MESSAGE_OVERHEAD + count_text(system)
    elif system and not isinstance(system, str):
        total += MESSAGE_OVERHEAD + sum(_count_system_part(count_text, p) for p in system)
    if tools:
        total += TOOLS_PREAMBLE_TOKENS + sum(
            TOOL_DEFINITION_OVERHEAD + count_text(compact_json(tool)) for tool in tools
        )
    return total


def _count_system_part(count_text: CountText, part: Any) -> int:
    if isinstance(part, TextBlock):
        return BLOCK_OVERHEAD + count_text(part.text)
    if isinstance(part, Mapping) and isinstance(part.get("text"), str):
        return BLOCK_OVERHEAD + count_text(part["text"])
    if isinstance(part, str):
        return BLOCK_OVERHEAD + count_text(part)
    return BLOCK_OVERHEAD + count_text(compact_json(part))


def _count_document(count_text: CountText, block: DocumentBlock) -> int:
    source = block.source
    kind = source.get("type")
    labels = sum(
        count_text(v)
        for k, v in block.extra.items()
        if k in ("title", "context") and isinstance(v, str)
    )
    data = source.get("data")
    if kind == "text" and isinstance(data, str):
        return labels + count_text(data)
    if kind == "base64" and isinstance(data, str):
        return labels + PDF_PAGE_TOKENS * _pdf_pages(data)
    if kind == "content":
        parts = source.get("content")
        if isinstance(parts, str):
            return labels + count_text(parts)
        if isinstance(parts, Sequence):
            return labels + sum(_count_content_part(count_text, p) for p in parts)
    return labels + UNSIZED_DOCUMENT_TOKENS


def _count_content_part(count_text: CountText, part: Any) -> int:
    if isinstance(part, Mapping) and part.get("type") == "image":
        return BLOCK_OVERHEAD + IMAGE_TOKENS
    return _count_system_part(count_text, part)


def _pdf_pages(data: str) -> int:
    """Page objects in a base64 PDF; falls back to size when pages hide in compressed streams."""
    try:
        raw = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        raw = b""
    pages = len(_PDF_PAGE.findall(raw))
    if pages:
        return pages
    size = len(raw) or len(data) * 3 // 4
    return max(1, math.ceil(size / PDF_BYTES_PER_PAGE))
