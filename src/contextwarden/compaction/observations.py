"""Observations of text-action agents: tool output the loaders found in plain user text.

SWE-agent, mini-swe-agent v1 and OpenHands (for observations that answer no tool call) write the
environment's output as a user message; the loaders mark it ``meta.extra["injected"]`` with an
``injected_kind``. Every rung treats such a message's text like a tool result (budget, clear,
mask, cap), never like something the person typed. What a rung cuts or clears names the content
id of the original (``history.rehydrate(id)`` returns it), since there is no tool_use_id. Which
messages are observations, and the action each answers, is read in one place
(``summarizers.actions``), for the rungs and the summary alike.
"""

from __future__ import annotations

import re
from dataclasses import replace

from contextwarden.compaction.cuts import FIRST_BLOCKS_KEY, SUMMARY_BLOCKS_KEY
from contextwarden.content_ids import CONTENT_ID_HEX, CONTENT_ID_PREFIX, content_id
from contextwarden.model import Block, FrozenDict, Message, TextBlock
from contextwarden.summarizers.actions import is_observation

REHYDRATE_HINT = "history.rehydrate({id!r}) returns the original"
"""How a cut or cleared observation names its original (the id is a content id)."""

_NAMED_ID = re.compile(
    r"history\.rehydrate\('(" + re.escape(CONTENT_ID_PREFIX) + f"[0-9a-f]{{{CONTENT_ID_HEX}}})'\\)"
)


def observation_texts(message: Message) -> list[tuple[int, TextBlock]]:
    """(position, block) of each text of an observation message; [] for any other message.

    When a summary or truncation merged the conversation's first message (and a summary) in front
    of an observation, the merged message carries the observation's marks: only the blocks after
    ours are the observation, and only the texts the loader listed as injected."""
    if not is_observation(message):
        return []
    extra = message.meta.extra
    ours = [extra.get(k) for k in (FIRST_BLOCKS_KEY, SUMMARY_BLOCKS_KEY)]
    start = max((n for n in ours if isinstance(n, int) and not isinstance(n, bool)), default=0)
    listed = extra.get("injected_texts")
    return [
        (i, b)
        for i, b in enumerate(message.content)
        if i >= start
        and isinstance(b, TextBlock)
        and (not isinstance(listed, tuple) or b.text in listed)
    ]


def named_id(text: str) -> str | None:
    """The content id a marker in ``text`` names (an earlier rung cut or cleared it), if any."""
    found = _NAMED_ID.search(text)
    return found.group(1) if found else None


def original_id(text: str) -> str:
    """The content id of the text ``text`` was cut from: the one its marker names, when an earlier
    rung cut it, else its own (so a second cut still points at the first original)."""
    return named_id(text) or content_id(text)


def with_text(message: Message, position: int, text: str) -> Message:
    """``message`` with the text block at ``position`` replaced by ``text``; a loader's list of
    injected texts follows the change, so the new text is still read as injected."""
    old = message.content[position]
    assert isinstance(old, TextBlock), "only text blocks are replaced"
    blocks: list[Block] = list(message.content)
    blocks[position] = replace(old, text=text)
    meta = message.meta
    listed = meta.extra.get("injected_texts")
    if isinstance(listed, tuple) and old.text in listed:
        texts = tuple(text if t == old.text else t for t in listed)
        meta = replace(meta, extra=FrozenDict({**meta.extra, "injected_texts": texts}))
    return replace(message, content=tuple(blocks), meta=meta)
