"""The context around each of Codex CLI's own compactions: what the model saw before a ``compacted``
record and the replacement it saw after, both as messages, so a loss report can compare them.

Exact: the span each compaction replaced (the previous replacement, then every view message since,
a message the record falls inside cut at its ``blocks_before``) and the replacement, read by the
loader's own item reading. Compared block by block on the user side (``by_block``): Codex carries
the typed user messages into the replacement as separate items, where the view merged them with
the tool outputs or injected context of their turn. Not exact: a user block's tokens count one
message overhead each; a user text that left and sits at the place of a new replacement message
(the summary, a changed initial context) is read as cut into it, as ``losses`` reads an in-place
edit, so only the tokens it had over that message count (none of the 13 real compactions
measured has one); a summary Codex encrypted may still say some of what is reported gone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from contextwarden.formats.codex import replacement_messages
from contextwarden.model import Message


@dataclass(frozen=True, slots=True)
class CompactionContext:
    """One ``compacted`` record (its metadata entry), the context before it and the one after."""

    entry: Mapping[str, Any]
    before: tuple[Message, ...]
    after: tuple[Message, ...]


def contexts(
    messages: Sequence[Message], compactions: Sequence[Mapping[str, Any]]
) -> list[CompactionContext]:
    """Each compaction that recorded a replacement history, with the context it replaced and the
    one it left. An older Codex recorded only the summary text (and an empty replacement reads
    the same in the loader): what it kept is unknown, so such a record is left out, and the next
    compaction is compared from it on, not charged again with what it removed."""
    out = []
    carried: tuple[Message, ...] = ()  # the last replacement and the part of a message after it
    start = 0
    for entry in compactions:
        end = entry["messages_before"]
        head, tail = _cut(messages, entry)
        items = entry.get("replacement_history")
        after = replacement_messages(items or ())
        if items:
            span = messages[start : end - 1] if head else messages[start:end]
            before = by_block((*carried, *span, *head))
            out.append(CompactionContext(entry, before, by_block(after)))
        carried, start = (*after, *tail), end
    return out


def sent_after_last(
    messages: Sequence[Message], compactions: Sequence[Mapping[str, Any]]
) -> tuple[Mapping[str, Any], tuple[Message, ...], tuple[Message, ...]]:
    """What Codex sent after its last compaction that recorded a replacement: that compaction's
    entry, its replacement as messages, and what followed (the part of the message the record
    fell inside that came after it, then every later message). Empty when none recorded one. An
    encrypted summary is not in the replacement messages: only OpenAI's server reads it, so its
    tokens cannot be counted."""
    last = next((c for c in reversed(compactions) if c.get("replacement_history")), None)
    if last is None:
        return {}, (), ()
    _, tail = _cut(messages, last)
    after = (*tail, *messages[last["messages_before"] :])
    return last, replacement_messages(last["replacement_history"]), after


def _cut(
    messages: Sequence[Message], entry: Mapping[str, Any]
) -> tuple[tuple[Message, ...], tuple[Message, ...]]:
    """The blocks of the message the record falls inside, before and after it; empty when the
    record falls between messages."""
    wanted = entry.get("blocks_before")
    if not isinstance(wanted, list):
        return (), ()
    message = messages[entry["messages_before"] - 1]
    blocks = list(enumerate(message.content))
    head = tuple(b for n, b in blocks if n in wanted)
    tail = tuple(b for n, b in blocks if n not in wanted)
    return (replace(message, content=head),), ((replace(message, content=tail),) if tail else ())


def by_block(messages: Sequence[Message]) -> tuple[Message, ...]:
    """Each user message as one message per block (assistant messages whole), so a typed text
    Codex carried matches its copy wherever either side merged it with other user content."""
    out: list[Message] = []
    for message in messages:
        if message.role == "user" and len(message.content) > 1:
            out.extend(replace(message, content=(block,)) for block in message.content)
        else:
            out.append(message)
    return tuple(out)
