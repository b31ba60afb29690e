"""Where a context's tokens go: by category, by tool, and the largest messages.

The same split Claude Code's ``/context`` shows, for any loaded session.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

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
from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.messages import count_block_with, count_preamble

CATEGORIES: tuple[str, ...] = (
    "system",
    "tools",
    "user_text",
    "assistant_text",
    "thinking",
    "tool_use",
    "tool_result",
    "other",
)
PREVIEW_CHARS = 80


@dataclass(frozen=True, slots=True)
class LargeMessage:
    index: int
    role: str
    tokens: int
    preview: str


@dataclass
class ContextBreakdown:
    """Token totals of one context, split the ways a person wants to see them."""

    total: int = 0
    by_category: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    tool_results_by_tool: dict[str, int] = field(default_factory=dict)
    tool_calls_by_tool: dict[str, int] = field(default_factory=dict)
    largest: list[LargeMessage] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "by_category": self.by_category,
            "tool_results_by_tool": self.tool_results_by_tool,
            "tool_calls_by_tool": self.tool_calls_by_tool,
            "largest_messages": [
                {"index": m.index, "role": m.role, "tokens": m.tokens, "preview": m.preview}
                for m in self.largest
            ],
        }


def category(block: Block, role: str) -> str:
    match block:
        case TextBlock():
            return "user_text" if role == "user" else "assistant_text"
        case ThinkingBlock() | RedactedThinkingBlock():
            return "thinking"
        case ToolUseBlock():
            return "tool_use"
        case ToolResultBlock():
            return "tool_result"
        case ImageBlock() | DocumentBlock() | UnknownBlock():
            return "other"
        case _:
            assert_never(block)


def breakdown(
    messages: Sequence[Message],
    counter: TokenCounter,
    *,
    system: Any = None,
    tools: Sequence[Any] = (),
    largest: int = 5,
) -> ContextBreakdown:
    """Count every block once and file it under its category (and tool name for tool results)."""
    out = ContextBreakdown()
    out.by_category["system"] = count_preamble(counter.count_text, system, None)
    out.by_category["tools"] = count_preamble(counter.count_text, None, list(tools)) if tools else 0
    names: dict[str, str] = {}
    results: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    sizes: list[LargeMessage] = []
    for index, message in enumerate(messages):
        for block in message.content:
            tokens = count_block_with(counter.count_text, block)
            out.by_category[category(block, message.role)] += tokens
            if isinstance(block, ToolUseBlock):
                names[block.id] = block.name
                calls[block.name] += 1
            elif isinstance(block, ToolResultBlock):
                results[names.get(block.tool_use_id, "(unknown tool)")] += tokens
        tokens = counter.count_message(message)
        sizes.append(LargeMessage(index, message.role, tokens, _preview(message)))
    preamble = out.by_category["system"] + out.by_category["tools"]
    out.total = sum(m.tokens for m in sizes) + preamble
    out.tool_results_by_tool = dict(results.most_common())
    out.tool_calls_by_tool = dict(calls.most_common())
    out.largest = sorted(sizes, key=lambda m: (-m.tokens, m.index))[:largest]
    return out


def _preview(message: Message) -> str:
    for block in message.content:
        if isinstance(block, TextBlock):
            text = block.text
        elif isinstance(block, ToolResultBlock):
            text = f"[result] {block.text}"
        elif isinstance(block, ToolUseBlock):
            text = f"[{block.name}] {json.dumps(thaw(block.input), ensure_ascii=False)}"
        else:
            continue
        flat = " ".join(text.split())
        return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"
    return f"[{message.content[0].type}]" if message.content else ""
