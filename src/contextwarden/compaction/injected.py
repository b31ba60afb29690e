"""Injected context in the conversation's first message, as a summary message carries it.

An agent tool writes its own context into the first user message: Codex its AGENTS.md, skills
list and ``<environment_context>`` (about 15,000 tokens), Claude Code a slash command's expanded
prompt or CLAUDE.md in ``<system-reminder>``. Kept verbatim at the head of every summary message it
would take a large share of a small window on every request; so each such text
(``summarizers.typed.is_injected_block``) longer than ``INLINE_INJECTED_TOKENS`` is carried as a
one-line reference: what it was, its size and the content id that gets it back. What the person
typed is carried verbatim, always.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from contextwarden.compaction.cuts import FIRST_BLOCKS_KEY, first_user_blocks
from contextwarden.compaction.observations import REHYDRATE_HINT
from contextwarden.content_ids import content_id
from contextwarden.model import Block, Message, TextBlock
from contextwarden.summarizers.typed import INJECTED_REFERENCE, is_injected_block
from contextwarden.tokens.base import TokenCounter

INLINE_INJECTED_TOKENS = 200
"""An injected text this short stays verbatim: a reference costs about 50 tokens, and the short
ones are worth their place (Codex's ``<environment_context>``: the working directory, the shell)."""
LABEL_CHARS = 80
"""Longest description of what an injected text was (its element's tag, or its first line)."""

_TAG_RE = re.compile(r"\s*<([A-Za-z_][\w .:-]{0,60})>")


def carried_first_blocks(messages: Sequence[Message], counter: TokenCounter) -> tuple[Block, ...]:
    """The conversation's first message as a summary message carries it: typed text and short
    injected texts verbatim, every longer injected text as a reference (``injected_reference``).

    A message that already starts with a carried first message (``FIRST_BLOCKS_KEY``) is
    returned as it is: its references were made when it was first carried, and its meta is no
    longer the first message's own (a turn merged after it brings its own marks)."""
    blocks = first_user_blocks(messages)
    if not blocks or FIRST_BLOCKS_KEY in messages[0].meta.extra:
        return blocks
    first = messages[0]
    return tuple(
        injected_reference(block.text, tokens)
        if isinstance(block, TextBlock)
        and is_injected_block(first, block)
        and (tokens := counter.count_text(block.text)) > INLINE_INJECTED_TOKENS
        else block
        for block in blocks
    )


def injected_reference(text: str, tokens: int) -> TextBlock:
    """The one line that stands for an injected ``text`` of ``tokens`` tokens."""
    hint = REHYDRATE_HINT.format(id=content_id(text))
    return TextBlock(
        f"{INJECTED_REFERENCE}{_label(text)!r}, {tokens:,} tokens, left out of this context; "
        f"{hint}]"
    )


def _label(text: str) -> str:
    """What an injected text was: its element's tag, or its first line."""
    tag = _TAG_RE.match(text)
    if tag is not None:
        return f"<{tag.group(1)}>"
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= LABEL_CHARS else line[: LABEL_CHARS - 1] + "…"
