"""Merge-mode repairs: how an imported log is made to follow the API rules without losing content.

Consecutive same-role messages are merged (as the API itself does); a tool call the log never
answered gets a marked placeholder result; a result that answers nothing becomes marked text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from contextwarden.model import (
    EMPTY,
    Block,
    FrozenDict,
    Message,
    MessageMeta,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
)

MISSING_RESULT_TEXT = "[no tool_result was recorded for this tool call]"
START_PLACEHOLDER_TEXT = (
    "[the recorded conversation starts with an assistant message; this placeholder keeps roles "
    "alternating]"
)


def merge_messages(first: Message, second: Message) -> Message:
    """One message holding both contents, ordered as the API wants.

    tool_result blocks move first in a user message; thinking blocks move first in an assistant
    message; otherwise the order is kept.
    """
    blocks = first.content + second.content
    if first.role == "user":
        blocks = _stable_first(blocks, (ToolResultBlock,))
    else:
        blocks = _stable_first(blocks, (ThinkingBlock, RedactedThinkingBlock))
    meta = MessageMeta(
        timestamp=first.meta.timestamp
        if first.meta.timestamp is not None
        else second.meta.timestamp,
        id=first.meta.id or second.meta.id,
        source_ids=first.meta.source_ids + second.meta.source_ids,
        extra=_merge_extra(first, second),
    )
    return Message(first.role, blocks, meta)


def _merge_extra(first: Message, second: Message) -> FrozenDict:
    """Facts all parts agree on, each part's own facts under ``parts``, injected texts listed.

    One part's labels must not stick to the whole: a typed instruction merged with an injected
    reminder is not "injected"; ``injected`` survives only when every part was injected, and
    ``injected_texts`` lists the injected parts' text so readers can still tell them apart.
    """
    parts = _parts(first) + _parts(second)
    if not any(parts):
        return EMPTY
    extra: dict[str, Any] = {}
    for key in dict.fromkeys(k for p in parts for k in p):
        values = [p[key] for p in parts if key in p]
        if all(isinstance(v, tuple) for v in values):
            extra[key] = tuple(item for v in values for item in v)  # lists of facts: all of them
        elif len(values) == len(parts) and all(v == values[0] for v in values):
            extra[key] = values[0]
    extra["parts"] = parts
    injected = _injected_texts(first) + _injected_texts(second)
    if injected:
        extra["injected_texts"] = injected
    if any("injected" in p for p in parts):
        extra["injected"] = all(p.get("injected") for p in parts)  # True only if nothing typed
    return FrozenDict(extra)


def _parts(message: Message) -> tuple[FrozenDict, ...]:
    extra = message.meta.extra
    parts = extra.get("parts")
    if isinstance(parts, tuple):
        return parts
    return (FrozenDict({k: v for k, v in extra.items() if k != "injected_texts"}),)


def _injected_texts(message: Message) -> tuple[str, ...]:
    extra = message.meta.extra
    listed = extra.get("injected_texts")
    if isinstance(listed, tuple):
        return listed
    if extra.get("injected") or extra.get("isMeta"):
        return tuple(b.text for b in message.content if isinstance(b, TextBlock))
    return ()


def _stable_first(blocks: tuple[Block, ...], kinds: tuple[type, ...]) -> tuple[Block, ...]:
    head = tuple(b for b in blocks if isinstance(b, kinds))
    return head + tuple(b for b in blocks if not isinstance(b, kinds))


@dataclass(frozen=True, slots=True)
class Step:
    """One addition to make: ``message``, merged into the view's last message when ``merge``."""

    message: Message
    merge: bool
    note: str | None = None


def plan_merge(view: Sequence[Message], message: Message) -> list[Step]:
    """The additions that bring ``message`` into ``view`` validly, with a note for each repair."""
    steps: list[Step] = []
    message, cleaned = _drop_blank_text(message)
    last = view[-1] if view else None
    if not message.content:
        return [Step(message, False, "skipped a message with no content")]
    if last is None and message.role == "assistant":
        placeholder = Message.user(START_PLACEHOLDER_TEXT)
        steps.append(Step(placeholder, False, "inserted a user placeholder before the first reply"))
    if message.role == "assistant":
        answer = answer_pending(view)
        if answer is not None:
            steps.append(answer)
            last = None if answer.merge else answer.message
    else:
        message, note = _orphans_to_text(view, message)
        if note:
            cleaned = f"{cleaned}; {note}" if cleaned else note
    merge = last is not None and last.role == message.role
    steps.append(Step(message, merge, cleaned))
    return steps


def answer_pending(view: Sequence[Message]) -> Step | None:
    """Placeholder results for the tool calls the view leaves unanswered, or None."""
    missing = _unanswered(view)
    if not missing:
        return None
    results = tuple(ToolResultBlock(i, MISSING_RESULT_TEXT, is_error=True) for i in missing)
    note = f"added placeholder results for unanswered tool calls {', '.join(missing)}"
    return Step(Message("user", results), view[-1].role == "user", note)


def _drop_blank_text(message: Message) -> tuple[Message, str | None]:
    kept = tuple(
        b for b in message.content if not (isinstance(b, TextBlock) and not b.text.strip())
    )
    if len(kept) == len(message.content):
        return message, None
    return replace(message, content=kept), "dropped empty text blocks"


def _answering_context(view: Sequence[Message]) -> tuple[set[str], set[str]]:
    """Tool ids the next user content may answer, and those a trailing user message answered."""
    if not view:
        return set(), set()
    if view[-1].role == "assistant":
        return {u.id for u in view[-1].tool_uses}, set()
    asked = {u.id for u in view[-2].tool_uses} if len(view) > 1 else set()
    return asked, {r.tool_use_id for r in view[-1].tool_results}


def _unanswered(view: Sequence[Message]) -> list[str]:
    asked, answered = _answering_context(view)
    if not asked:
        return []
    order = [u.id for u in (view[-1] if view[-1].role == "assistant" else view[-2]).tool_uses]
    return [i for i in dict.fromkeys(order) if i not in answered]


def _orphans_to_text(view: Sequence[Message], message: Message) -> tuple[Message, str | None]:
    asked, answered = _answering_context(view)
    blocks: list[Block] = []
    orphans: list[str] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            if block.tool_use_id in asked and block.tool_use_id not in answered:
                answered.add(block.tool_use_id)
                blocks.append(block)
                continue
            orphans.append(block.tool_use_id)
            label = "error " if block.is_error else ""
            body = block.text or "(no text)"
            blocks.append(TextBlock(f"[tool_result {label}for {block.tool_use_id}]\n{body}"))
        else:
            blocks.append(block)
    if not orphans:
        return message, None
    note = f"kept unmatched tool results {', '.join(orphans)} as text"
    # The text that replaces an orphan must not sit before the results that remain.
    return replace(message, content=_stable_first(tuple(blocks), (ToolResultBlock,))), note
