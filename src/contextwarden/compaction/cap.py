"""Cap, the last resort after truncation: the middle of the largest texts is cut until the
request fits.

Any text may be cut, in this order: tool results and agents' observations, then assistant text,
then summaries and injected text, and what the person typed last; within a kind, the largest
first, each just enough. A cut keeps the head and the tail around a note saying how much was cut
and how to get it back: ``history.rehydrate(id)`` with the tool_use_id of a result or the content
id of a text (the log keeps every original). Thinking is never edited, nor tool_use inputs, images
or documents: when what is left would still be over the budget nothing is cut, the report lists
it (``unshrinkable``) and the manager raises ContextOverflowError.

``Oversize`` runs before the summary: when the request is over the window and the latest turn
(which no rung drops) does not fit beside even the smallest summary (``policy.summary_floor``),
each of its texts larger than ``policy.message_result_tokens`` is cut to that size first,
whatever its kind, so the summary and the turns before it stay; a latest turn that fits beside
a summary is left whole (the summary makes the room). It is cut once to a
fixed size, not just enough, so the next requests find it as it was (a stable cached prefix).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    Proposal,
    finish,
    unchanged,
)
from contextwarden.compaction.budget import (
    MIN_PREVIEW_SAVING,
    head_of,
    tail_of,
    with_result_text,
)
from contextwarden.compaction.cuts import (
    FIRST_BLOCKS_KEY,
    SUMMARY_BLOCKS_KEY,
    SUMMARY_KEY,
    turn_starts,
)
from contextwarden.compaction.observations import observation_texts, original_id, with_text
from contextwarden.model import Block, Message, TextBlock, ToolResultBlock
from contextwarden.policy import summary_floor
from contextwarden.tokens.base import TokenCounter

CAP_NOTE = (
    "\n\n[contextwarden: cut {cut:,} of {total:,} characters from the middle of this {what} to fit "
    "the context window; history.rehydrate({id!r}) returns the original.]\n\n"
)
_NOTE_RE = re.compile(
    r"\n\n\[contextwarden: cut [\d,]+ of ([\d,]+) characters from the middle of this [^\]\n]*? to "
    r"fit the context window; history\.rehydrate\('([^'\n]*)'\) returns the original\.\]\n\n"
)
FIT_ROUNDS = 4
"""Rounds of proportional cutting of one text before it is cut to its note alone."""
FIT_MARGIN = 0.9
"""Each round aims this far under what is needed, so counts that are not linear converge."""
UNSHRINKABLE_SHOWN = 3
"""Messages named in the report when what is left cannot shrink (largest first)."""

TOOL_OUTPUT, ASSISTANT, INJECTED, TYPED = range(4)
"""The order in which kinds of text are cut: the person's own words last."""
SUMMARY = "summary"
"""What the note calls a summary's text, which ``Oversize`` never cuts (it is never that large)."""


@dataclass(frozen=True, slots=True)
class _Slot:
    """One text that may be cut: where it is, its kind (cut order) and what the note calls it."""

    index: int
    position: int
    tier: int
    what: str
    chars: int


@dataclass(frozen=True, slots=True)
class _Source:
    """What a preview is taken from: the original's head and tail sources, id and length.

    For an uncut text both sources are the text; for one this rung already cut, the parts before
    and after its note (a prefix and a suffix of the original), so cutting again keeps the id."""

    head: str
    tail: str
    id: str
    total: int
    whole: bool
    """The text was not cut yet: head and tail are the same text."""

    @property
    def available(self) -> int:
        return len(self.head) if self.whole else len(self.head) + len(self.tail)


class Cap:
    """Cuts the middle of the largest texts until the messages fit ``max_tokens`` (default: the
    policy's effective window), in the caller's figure (``context.tokens_before``)."""

    name = "cap"

    def __init__(self, max_tokens: int | None = None) -> None:
        if max_tokens is not None and max_tokens <= 0:
            raise ValueError(f"max_tokens must be > 0, got {max_tokens}")
        self.max_tokens = max_tokens

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        budget = self.max_tokens if self.max_tokens is not None else ctx.policy.effective_window
        tokens_before = ctx.total_before(messages)
        if tokens_before <= budget:
            return unchanged(self.name, messages, "within the budget", tokens_before)
        current, total = list(messages), tokens_before
        cuts: list[dict[str, object]] = []
        for slot in _slots(messages):
            if total <= budget:
                break
            total, cut = _shrink(current, slot, total, budget, ctx)
            cuts.append(cut)
        fits = total <= budget
        left = () if fits else unshrinkable(current, total, ctx.count)
        details = {"cuts": tuple(cuts), "fits": fits, "unshrinkable": left}
        if not fits:  # cutting what was said would not make the request possible
            reason = f"not applied: with every text cut it would still be {total - budget:,} over"
            return unchanged(self.name, messages, reason, tokens_before, details)
        description = f"cut the middle of {len(cuts)} text(s) to fit {budget:,} tokens"
        changed = [i for i, m in enumerate(current) if m is not messages[i]]
        proposal = Proposal(tuple(current), total, description, changed, details)
        return finish(self.name, messages, tokens_before, proposal)


class Oversize:
    """Cuts each text of the latest turn larger than ``max_block_tokens`` (default: the policy's
    ``message_result_tokens``) to that size, when the messages are over ``max_tokens`` (default:
    the effective window) in the caller's figure and the latest turn does not fit beside the
    smallest summary (``summary_floor``).

    A pasted log or a terminal dump larger than the window would otherwise be kept whole by every
    rung (the latest turn is never dropped) while the cap cut the summary and the turns before it
    to make room; this cuts the one text instead, head and tail kept, as ``Cap`` does."""

    name = "oversize"

    def __init__(self, max_tokens: int | None = None, max_block_tokens: int | None = None) -> None:
        for name, value in (("max_tokens", max_tokens), ("max_block_tokens", max_block_tokens)):
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be > 0, got {value}")
        self.max_tokens = max_tokens
        self.max_block_tokens = max_block_tokens

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        policy = ctx.policy
        budget = self.max_tokens if self.max_tokens is not None else policy.effective_window
        size = self.max_block_tokens or policy.message_result_tokens
        tokens_before = ctx.total_before(messages)
        if tokens_before <= budget:
            return unchanged(self.name, messages, "within the budget", tokens_before)
        outside = tokens_before - sum(ctx.count(m) for m in messages)
        if outside + size > budget:  # no cut makes room: the system prompt and tools fill it
            reason = f"not applied: {outside:,} tokens outside the messages leave no room"
            return unchanged(self.name, messages, reason, tokens_before)
        starts = turn_starts(messages)
        latest = starts[-1] if starts else 0
        turn = sum(ctx.count(m) for m in messages[latest:])
        if outside + turn + summary_floor(policy.context_window) <= budget:
            # a summary of what came before makes room: the latest turn stays whole
            reason = "the latest turn fits beside a summary"
            return unchanged(self.name, messages, reason, tokens_before)
        current, total = list(messages), tokens_before
        cuts: list[dict[str, object]] = []
        for slot in _slots(messages):
            block = messages[slot.index].content[slot.position]
            over = ctx.counter.count_text(_text(block)) - size
            if slot.index >= latest and slot.what != SUMMARY and over > 0:
                total, cut = _shrink(current, slot, total, total - over, ctx)
                cuts.append(cut)
        if not cuts:
            return unchanged(self.name, messages, "no text of the latest turn is that large", total)
        description = f"cut the middle of {len(cuts)} text(s) larger than {size:,} tokens"
        changed = [i for i, m in enumerate(current) if m is not messages[i]]
        details = {"cuts": tuple(cuts), "fits": total <= budget}
        proposal = Proposal(tuple(current), total, description, changed, details)
        return finish(self.name, messages, tokens_before, proposal)


def _shrink(
    current: list[Message],
    slot: _Slot,
    total: int,
    budget: int,
    ctx: CompactionContext,
) -> tuple[int, dict[str, object]]:
    """Cut one text just enough (or to its note alone); the new total and what was cut."""
    message = current[slot.index]
    source = _source(message.content[slot.position])
    keep, tokens = source.available, ctx.count(message)
    text = _text(message.content[slot.position])
    for attempt in range(FIT_ROUNDS + 1):
        share = ctx.counter.count_text(text) or 1
        ratio = max(0.0, 1 - (total - budget) / share) * FIT_MARGIN
        keep = 0 if attempt == FIT_ROUNDS else min(keep - 1, int(keep * ratio))
        text = _preview(source, max(0, keep), slot.what)
        message = _with_text(current[slot.index], slot.position, text)
        new_tokens = ctx.count(message)
        total, tokens = total + new_tokens - tokens, new_tokens
        if total <= budget or keep <= 0:
            break
    current[slot.index] = message
    cut = {
        "message": slot.index,
        "block": slot.position,
        "kind": slot.what,
        "id": source.id,
        "original_chars": source.total,
        "kept_chars": max(0, keep),
    }
    return total, cut


def _slots(messages: Sequence[Message]) -> list[_Slot]:
    """Every text worth cutting, in cut order: kind, then the largest first."""
    found: list[_Slot] = []
    for i, message in enumerate(messages):
        observed = {position for position, _ in observation_texts(message)}
        for position, block in enumerate(message.content):
            kind = _kind(message, position, block, position in observed)
            if kind is None:
                continue
            chars = len(_text(block))
            if chars > len(CAP_NOTE) + MIN_PREVIEW_SAVING:
                found.append(_Slot(i, position, kind[0], kind[1], chars))
    return sorted(found, key=lambda s: (s.tier, -s.chars))


def _kind(message: Message, position: int, block: Block, observed: bool) -> tuple[int, str] | None:
    """(cut order, what the note calls it) of a block, None for what is never cut."""
    if isinstance(block, ToolResultBlock):
        return TOOL_OUTPUT, "tool result"
    if not isinstance(block, TextBlock):
        return None  # thinking, tool_use, images, documents, unknown blocks
    if message.role == "assistant":
        return ASSISTANT, "assistant message"
    if observed:
        return TOOL_OUTPUT, "observation"
    extra = message.meta.extra
    first, end = extra.get(FIRST_BLOCKS_KEY, 0), extra.get(SUMMARY_BLOCKS_KEY, 0)
    if isinstance(first, int) and position < first:
        return TYPED, "user message"  # the conversation's first message, carried in front
    if extra.get(SUMMARY_KEY) and isinstance(end, int) and position < end:
        return INJECTED, SUMMARY
    listed = extra.get("injected_texts")
    injected = block.text in listed if isinstance(listed, tuple) else extra.get("injected")
    if injected or extra.get("isMeta"):
        return INJECTED, "injected text"
    return TYPED, "user message"


def _text(block: Block) -> str:
    if isinstance(block, TextBlock | ToolResultBlock):
        return block.text
    return ""


def _source(block: Block) -> _Source:
    text = _text(block)
    found = _NOTE_RE.search(text)
    if found is not None:
        total = int(found.group(1).replace(",", ""))
        return _Source(text[: found.start()], text[found.end() :], found.group(2), total, False)
    if isinstance(block, ToolResultBlock):
        return _Source(text, text, block.tool_use_id, len(text), True)
    return _Source(text, text, original_id(text), len(text), True)


def _preview(source: _Source, keep: int, what: str) -> str:
    """``keep`` characters of the original around the note: the first half from the head."""
    keep = min(keep, source.available)
    head = head_of(source.head, min(len(source.head), keep // 2))
    tail = tail_of(source.tail, min(len(source.tail), keep - len(head)))
    cut = source.total - len(head) - len(tail)
    return head + CAP_NOTE.format(cut=cut, total=source.total, what=what, id=source.id) + tail


def cut_text(text: str, max_tokens: int, counter: TokenCounter, what: str) -> str:
    """``text`` cut in the middle to about ``max_tokens`` (head and tail around the note that
    names its id, as this rung cuts); ``text`` itself when it fits or was cut already."""
    tokens = counter.count_text(text)
    if tokens <= max_tokens or _NOTE_RE.search(text) is not None:
        return text
    source = _source(TextBlock(text))
    return _preview(source, int(len(text) * max_tokens / tokens * FIT_MARGIN), what)


def uncut(text: str, originals: Callable[[str], ToolResultBlock | TextBlock | None]) -> str | None:
    """The original text this rung cut ``text`` from (its head, the note and its tail), looked up
    in ``originals`` by the id the note names; None for any other text, such as a summary that
    only quotes a note."""
    found = _NOTE_RE.search(text)
    original = originals(found.group(2)) if found is not None else None
    if found is None or not isinstance(original, TextBlock):
        return None
    whole, head, tail = original.text, text[: found.start()], text[found.end() :]
    same = len(whole) == int(found.group(1).replace(",", ""))
    return whole if same and whole.startswith(head) and whole.endswith(tail) else None


def _with_text(message: Message, position: int, text: str) -> Message:
    """``message`` with the text of block ``position`` (a text or a tool result) replaced."""
    if isinstance(message.content[position], TextBlock):
        return with_text(message, position, text)
    return with_result_text(message, position, text)


def unshrinkable(
    messages: Sequence[Message], total: int, count: Callable[[Message], int]
) -> tuple[str, ...]:
    """What is left that no rung may cut, largest first, in words: the largest messages with the
    kinds of block they hold, and the part of ``total`` outside the messages (system prompt, tool
    definitions)."""
    counts = [count(m) for m in messages]
    order = sorted(range(len(messages)), key=lambda i: -counts[i])[:UNSHRINKABLE_SHOWN]
    found = []
    for i in order:
        kinds = sorted({b.type for b in messages[i].content})
        found.append(
            f"message {i} ({messages[i].role}, {counts[i]:,} tokens: {', '.join(kinds) or 'empty'})"
        )
    outside = total - sum(counts)
    if outside > 0:
        found.append(f"system prompt and tool definitions ({outside:,} tokens)")
    return tuple(found)
