"""What a compaction removed from the context, exactly: every message, tool result and text that
left or shrank (with the ids that get each back), and every fact no longer anywhere in the context.

``losses(before, after)`` compares two views; the facts are the ones a summary promises to keep
(``summarizers.facts``: what the person typed, files touched, errors, decisions), counted as lost
only when the view before held them verbatim and the view after holds them nowhere. Each item has
its tokens, so "what did you forget?" has an exact answer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from contextwarden.content_ids import content_id
from contextwarden.log import CompactionBoundary, LogEntry, MessageAdded, derive_view
from contextwarden.model import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.searchable import SEPARATOR, message_text
from contextwarden.summarizers.facts import extract_facts
from contextwarden.tokens.base import TokenCounter

LossKind = Literal[
    "message", "tool_result", "text", "tool_input", "user_text", "file", "error", "decision"
]
CONTENT_KINDS: tuple[LossKind, ...] = ("message", "tool_result", "text", "tool_input")
"""Kinds whose tokens left the context; the fact kinds name what those tokens held."""
FACT_KINDS: tuple[LossKind, ...] = ("user_text", "file", "error", "decision")
EXCERPT_CHARS = 120
"""How much of a lost text an item quotes (the ``refs`` get the whole of it back)."""
CLIPPED = "…"


@dataclass(frozen=True, slots=True)
class LostItem:
    """One thing that left the context: what it was, its tokens, where it was, how to get it back.

    ``refs`` are the ids ``history.rehydrate`` (and the ``recall`` tool) take: the tool_use_id of a
    tool result, the ``sha256-…`` content id of a text. ``index`` is the message's index in the
    view before the compaction."""

    kind: LossKind
    what: str
    tokens: int
    index: int | None = None
    refs: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "what": self.what,
            "tokens": self.tokens,
            "index": self.index,
            "refs": list(self.refs),
        }


@dataclass(frozen=True, slots=True)
class LossReport:
    """Everything one compaction (or several, merged) took out of the context."""

    items: tuple[LostItem, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.items)

    def of(self, *kinds: LossKind) -> tuple[LostItem, ...]:
        return tuple(item for item in self.items if item.kind in kinds)

    @property
    def tokens(self) -> int:
        """Tokens that left the context (messages, results, texts and inputs removed or cut)."""
        return sum(item.tokens for item in self.of(*CONTENT_KINDS))

    @property
    def refs(self) -> tuple[str, ...]:
        """Every id that gets something back, in order, each once."""
        return tuple(dict.fromkeys(ref for item in self.items for ref in item.refs))

    def merged(self, other: LossReport) -> LossReport:
        return LossReport(self.items + other.items)

    def lines(self) -> list[str]:
        """One line per item: kind, tokens, what, and the ids to recall it by."""
        out = []
        for item in self.items:
            refs = f" (recall: {', '.join(item.refs)})" if item.refs else ""
            out.append(f"{item.kind}, {item.tokens:,} tokens: {item.what}{refs}")
        return out

    def as_json(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "items": [item.as_json() for item in self.items]}


NOTHING_LOST = LossReport()


def losses(
    before: Sequence[Message], after: Sequence[Message], counter: TokenCounter
) -> LossReport:
    """What ``after`` no longer holds of ``before``: content items, then the facts gone too."""
    kept = {id(m) for m in after}
    olds = {id(m) for m in before}
    # Equal copies (a store round trip) match too, one for one: identical texts repeat in agents'
    # sessions (the same format error twice), and one of them may be cleared while the other stays.
    copies = Counter(m for m in after if id(m) not in olds)
    new = _by_signature(copies)
    items: list[LostItem] = []
    for index, message in enumerate(before):
        if id(message) in kept:
            continue
        if copies[message] > 0:
            copies[message] -= 1
            continue
        edited = _edited(message, index, after, new, copies)
        if edited is not None:
            items.extend(_edits(message, edited, index, counter))
        else:
            items.append(_removed(message, index, counter))
    if not items:
        return NOTHING_LOST
    first = min(item.index for item in items if item.index is not None)
    return LossReport((*items, *_lost_facts(before, after, counter, first)))


def log_losses(
    entries: Sequence[LogEntry], counter: TokenCounter
) -> list[tuple[CompactionBoundary, LossReport]]:
    """Each compaction recorded in a log, with what it removed from the view it replaced."""
    found = []
    since: list[LogEntry] = []  # the last boundary and every message added after it
    for entry in entries:
        if isinstance(entry, CompactionBoundary):
            found.append((entry, losses(derive_view(since), entry.view, counter)))
            since = [entry]
        elif isinstance(entry, MessageAdded):
            since.append(entry)
    return found


# ------------------------------------------------------------------------------ content
Signature = tuple[str, tuple[str, ...], tuple[str, ...]]


def _signature(message: Message) -> Signature:
    """A message's identity across an in-place edit: its role and its tool ids."""
    return (
        message.role,
        tuple(u.id for u in message.tool_uses),
        tuple(r.tool_use_id for r in message.tool_results),
    )


def _by_signature(messages: Iterable[Message]) -> dict[Signature, Message]:
    return {_signature(m): m for m in messages}


def _edited(
    message: Message,
    index: int,
    after: Sequence[Message],
    new: dict[Signature, Message],
    copies: Counter[Message],
) -> Message | None:
    """The message of ``after`` that ``message`` became by an in-place edit, if any: the one
    with its tool ids, or for a message without any (an agent's observation), the one at its
    place when the edit kept every place."""
    signature = _signature(message)
    if signature != (message.role, (), ()):
        return new.get(signature)
    if index < len(after) and after[index].role == message.role and copies[after[index]] > 0:
        return after[index]
    return None


def _refs(message: Message) -> tuple[str, ...]:
    refs = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            refs.append(block.tool_use_id)
        elif isinstance(block, TextBlock) and block.text:
            refs.append(content_id(block.text))
    return tuple(refs)


def _removed(message: Message, index: int, counter: TokenCounter) -> LostItem:
    text = message_text(message).replace(SEPARATOR, " ")
    return LostItem(
        "message",
        f"{message.role}: {_excerpt(text)}",
        counter.count_message(message),
        index,
        _refs(message),
    )


def _edits(old: Message, new: Message, index: int, counter: TokenCounter) -> list[LostItem]:
    """The blocks of ``old`` that ``new`` cut, cleared or dropped."""
    if len(old.content) != len(new.content):
        return [_removed(old, index, counter)]
    items = []
    for before, after in zip(old.content, new.content, strict=True):
        if before == after:
            continue
        saved = max(0, _tokens(counter, old, before) - _tokens(counter, old, after))
        if isinstance(before, ToolResultBlock):
            what = f"result of {before.tool_use_id}: {_excerpt(before.text)}"
            items.append(LostItem("tool_result", what, saved, index, (before.tool_use_id,)))
        elif isinstance(before, TextBlock):
            refs = (content_id(before.text),)
            items.append(LostItem("text", _excerpt(before.text), saved, index, refs))
        elif isinstance(before, ToolUseBlock):
            items.append(LostItem("tool_input", f"input of {before.name}", saved, index))
        else:
            items.append(LostItem("message", f"{before.type} block", saved, index))
    return items


def _tokens(counter: TokenCounter, message: Message, block: Block) -> int:
    return counter.count_message(replace(message, content=(block,)))


_WORD = re.compile(r"\S+")


def _excerpt(text: str) -> str:
    """``text``'s words joined by single spaces, clipped to ``EXCERPT_CHARS``: only the words
    the excerpt shows are split off (``\\S``, as ``str.split``, is what ``str.isspace`` is not),
    where a removed result's excerpt split all of its output each time."""
    shown: list[str] = []
    size = -1
    for word in _WORD.finditer(text):
        shown.append(word.group())
        size += 1 + len(shown[-1])
        if size > EXCERPT_CHARS:
            break
    flat = " ".join(shown)
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + CLIPPED


# ------------------------------------------------------------------------------ facts
def _lost_facts(
    before: Sequence[Message], after: Sequence[Message], counter: TokenCounter, first: int
) -> list[LostItem]:
    """The facts ``before`` held verbatim that ``after`` holds nowhere.

    Only messages from ``first`` (the first one changed) on can have taken a fact away; the
    facts are read from one message earlier, where the calls of the first results are."""
    start = max(0, first - 1)
    had = SEPARATOR.join(message_text(m) for m in before[start:])
    has = SEPARATOR.join(message_text(m) for m in after)
    facts = extract_facts(before[start:])
    candidates: list[tuple[LossKind, str, int | None]] = [
        *(("user_text", m.text, start + m.index) for m in facts.user_messages),
        *(("file", f.path, _shift(start, f.first_index)) for f in facts.files),
        *(("error", e.excerpt.removesuffix(CLIPPED), start + e.index) for e in facts.errors),
        *(("decision", text, start + index) for index, text in facts.decisions),
    ]
    texts = _Texts(before)
    kept = set(after)
    items = []
    seen: set[str] = set()
    for kind, text, index in candidates:
        if not text.strip() or text in seen:
            continue
        at = texts.holder(index, text)
        if at is not None and at >= start:  # the view before holds it: is it still held?
            if before[at] in kept or text in has:
                continue
        elif text not in had or text in has:
            continue
        elif at is None:
            at = index if index is not None and index < len(before) else None
        seen.add(text)
        refs = _refs(before[at]) if at is not None else ()
        # A path is a name to act on (read it again): clipped, it names nothing.
        what = text if kind == "file" else _excerpt(text)
        items.append(LostItem(kind, what, counter.count_text(text), at, refs))
    return items


class _Texts:
    """The searchable text of each message of a view, made once. A fact is looked for in its
    own message first, where the whole view's text was searched for each fact (minutes for a
    session of many facts): what that message holds the view holds, and so does a view that
    kept the message unchanged."""

    def __init__(self, before: Sequence[Message]) -> None:
        self._before = before
        self._texts: dict[int, str] = {}

    def holder(self, index: int | None, text: str) -> int | None:
        """The message that holds a fact's ``text``: the fact's own (``index``), or the one
        before it (a call read from an assistant's text, as a SpecStory export writes a Cursor
        turn, has its answer read into the next message: ``summarizers/textcalls``), so its
        refs recall it; None when neither does."""
        if index is None:
            return None
        for at in (index, index - 1):
            if 0 <= at < len(self._before) and text in self._text(at):
                return at
        return None

    def _text(self, at: int) -> str:
        if at not in self._texts:
            self._texts[at] = message_text(self._before[at])
        return self._texts[at]


def _shift(start: int, index: int | None) -> int | None:
    return None if index is None else start + index
