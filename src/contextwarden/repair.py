"""Merge-mode repairs: how an imported log is made to follow the API rules without losing content.

Consecutive same-role messages are merged (as the API itself does); a tool call the log never
answered gets a marked placeholder result; a result that answers nothing becomes marked text; a
repeated tool_use id is renamed (and so are the results answering it); a tool block the API would
refuse (an id that is a number, a result with no ``tool_use_id``) is mended or kept as text.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Container, Mapping, Sequence
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
    ToolUseBlock,
    UnknownBlock,
    thaw,
)
from contextwarden.rules import malformed_tool_block
from contextwarden.wire.anthropic import block_from_wire

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


Renames = dict[str, tuple[str, ...]]
"""A repeated tool_use id → the ids its calls now have, in order, for the results answering them
(the first may be the id itself, when only a later call in the same message repeats it)."""


def mend_tools(
    message: Message, used: Container[str], renames: Mapping[str, tuple[str, ...]]
) -> tuple[Message, Renames, str | None]:
    """``message`` with malformed tool blocks mended and, for an assistant message, tool_use ids
    already ``used`` in the view renamed; a user message's results follow pending ``renames``.

    Returns the message, the renames still pending after it, and a note of what was repaired.
    """
    message, mended = mend_tool_blocks(message)
    renamed: str | None = None
    if message.role == "assistant":
        message, own, renamed = rename_repeated_uses(message, used)
        pending = {**renames, **own}
    else:
        message, pending = rename_answers(message, renames)
    notes = [n for n in (mended, renamed) if n]
    return message, pending, "; ".join(notes) if notes else None


MALFORMED_TEXT = "[a malformed {kind} block, kept as text: {problem}]\n{raw}"
MISSING_ID = "toolu_missing_id"
"""Id given to a tool_use that has none usable (made unique like any repeated id)."""


def mend_tool_blocks(message: Message) -> tuple[Message, str | None]:
    """``message`` with each malformed tool_use/tool_result mended: a number id becomes its
    string, a missing tool_use id gets ``MISSING_ID``; what cannot be mended (a result answering
    no id, a call without a name) becomes marked text, so nothing is lost or sent malformed."""
    blocks: list[Block] = []
    notes: list[str] = []
    for position, block in enumerate(message.content):
        problem = malformed_tool_block(block)
        if problem is None or not isinstance(block, UnknownBlock):
            blocks.append(block)
            continue
        mended = _mended(block)
        blocks.append(mended)
        done = "mended" if not isinstance(mended, TextBlock) else "kept as text"
        notes.append(f"block {position} {done} ({problem})")
    if not notes:
        return message, None
    content = _stable_first(tuple(blocks), (ToolResultBlock,))
    return replace(message, content=content), "malformed tool blocks: " + "; ".join(notes)


def _mended(block: UnknownBlock) -> Block:
    raw: dict[str, Any] = thaw(block.raw)
    key = "id" if block.type == "tool_use" else "tool_use_id"
    value = raw.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        raw[key] = f"{value:g}" if isinstance(value, float) else str(value)
    elif block.type == "tool_use" and not isinstance(value, str):
        raw[key] = MISSING_ID
    fixed = block_from_wire(raw)
    if malformed_tool_block(fixed) is None and not isinstance(fixed, UnknownBlock):
        return fixed
    text = json.dumps(thaw(block.raw), ensure_ascii=False, default=str)
    problem = malformed_tool_block(block) or "malformed"
    return TextBlock(MALFORMED_TEXT.format(kind=block.type, problem=problem, raw=text))


def rename_repeated_uses(
    message: Message, used: Container[str]
) -> tuple[Message, Renames, str | None]:
    """An assistant ``message`` whose tool_use ids already in ``used`` (or repeated within it)
    are renamed ``<id>_<n>``; the renames, for the answering results, and a note."""
    taken: set[str] = set()
    given: dict[str, list[str]] = {}  # every id of the message, in order, by its original id
    blocks: list[Block] = []
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            original = block.id
            if original in used or original in taken:
                free = (f"{original}_{n}" for n in itertools.count(2))
                block = replace(block, id=next(i for i in free if i not in used and i not in taken))
            taken.add(block.id)
            given.setdefault(original, []).append(block.id)
        blocks.append(block)
    renames = {old: tuple(new) for old, new in given.items() if new != [old]}
    if not renames:
        return message, {}, None
    listed = ", ".join(f"{old} -> {n}" for old, new in renames.items() for n in new if n != old)
    note = f"renamed repeated tool_use ids {listed}"
    return replace(message, content=tuple(blocks)), renames, note


def rename_answers(
    message: Message, renames: Mapping[str, tuple[str, ...]]
) -> tuple[Message, Renames]:
    """A user ``message`` whose tool_results answer renamed calls under their new ids, each
    result taking the next id of its call's; the renames still pending after it."""
    pending = dict(renames)
    if not any(r.tool_use_id in pending for r in message.tool_results):
        return message, pending
    content: list[Block] = []
    for block in message.content:
        queue = pending.get(block.tool_use_id) if isinstance(block, ToolResultBlock) else None
        if isinstance(block, ToolResultBlock) and queue:
            if len(queue) > 1:  # the last id stays: a further result for it is a duplicate
                pending[block.tool_use_id] = queue[1:]
            block = replace(block, tool_use_id=queue[0])
        content.append(block)
    return replace(message, content=tuple(content)), pending
