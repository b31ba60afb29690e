"""The searchable text of messages: what a fact check (a probe, a loss report) may match.

Texts, tool names, tool inputs' strings, tool results, thinking and unknown blocks' strings, joined
by a separator no text holds, so a match never spans two blocks or two messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from contextwarden.model import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
)

SEPARATOR = "\x00"
"""Joins blocks and messages in the searchable text, so no probe matches across a boundary."""


def block_texts(message: Message) -> Iterable[str]:
    """The strings of a message a probe may match: texts, tool inputs and results, thinking."""
    for block in message.content:
        if isinstance(block, TextBlock):
            yield block.text
        elif isinstance(block, ToolUseBlock):
            yield block.name
            yield from strings(block.input)
        elif isinstance(block, ToolResultBlock):
            yield block.text
        elif isinstance(block, ThinkingBlock):
            yield block.thinking
        elif isinstance(block, UnknownBlock):
            yield from strings(block.raw)


def message_text(message: Message) -> str:
    return SEPARATOR.join(block_texts(message))


def strings(value: Any) -> Iterable[str]:
    """Every string inside a JSON-like value, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, tuple | list):
        for item in value:
            yield from strings(item)
