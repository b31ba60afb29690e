"""Incremental bookkeeping over a growing view, so a check before each request costs O(new).

A ``Cursor`` remembers how much of a view was processed and notices when the view was replaced
underneath it; ``CompactableResults`` keeps microcompact's possible saving as a running sum.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from contextwarden.compaction.microcompact import is_cleared, output_slots
from contextwarden.compaction.tools import ToolMatcher
from contextwarden.model import Message, TextBlock, ToolResultBlock


class Cursor:
    """The processed prefix ``view[:upto]``, checked by the identity of its last two messages.

    ``start(view)`` is where processing must resume: ``upto`` when the prefix is intact,
    ``upto - 1`` when only the last processed message changed (merge mode merges continuation
    records into it), 0 when the view was replaced.
    """

    __slots__ = ("_last", "_second", "upto")

    def __init__(self) -> None:
        self.upto = 0
        self._last: Message | None = None
        self._second: Message | None = None

    def start(self, view: Sequence[Message]) -> int:
        upto = self.upto
        if upto == 0 or upto > len(view):
            return 0
        if view[upto - 1] is self._last:
            return upto
        return upto - 1 if upto >= 2 and view[upto - 2] is self._second else 0

    def done(self, view: Sequence[Message]) -> None:
        """Everything in ``view`` is processed."""
        self.upto = len(view)
        self._last = view[-1] if view else None
        self._second = view[-2] if len(view) > 1 else None

    def reset(self) -> None:
        self.upto, self._last, self._second = 0, None, None


class CompactableResults:
    """Where the compactable tool results (and observations) are, and the tokens of all but the
    latest ``keep``.

    Results are found as messages arrive; a result is counted once, when it falls out of the
    ``keep`` latest, so asking for the possible saving is O(new results).
    """

    __slots__ = ("_counted", "_entries", "_matcher", "_tokens", "cursor")

    def __init__(self, matcher: ToolMatcher) -> None:
        self._matcher = matcher
        self.cursor = Cursor()
        self._entries: list[tuple[int, int]] = []
        self._counted = 0
        self._tokens = 0

    def __len__(self) -> int:
        return len(self._entries)

    def update(self, view: Sequence[Message]) -> None:
        start = self.cursor.start(view)
        if start == 0:
            self.reset()
        while self._entries and self._entries[-1][0] >= start:
            self._entries.pop()
        if self._counted > len(self._entries):
            self._counted, self._tokens = 0, 0
        for i in range(start, len(view)):
            self._entries.extend((i, pos) for pos in output_slots(view, i, self._matcher.matches))
        self.cursor.done(view)

    def old_tokens(
        self,
        view: Sequence[Message],
        keep: int,
        message_tokens: Callable[[int], int],
        marker: str,
    ) -> int:
        """Tokens held by compactable results older than the latest ``keep`` (not yet cleared).

        Nothing is re-counted: a result's tokens are its share, by characters, of the count the
        history's ledger already holds for its message (``message_tokens(index)``).
        """
        limit = len(self._entries) - keep
        if self._counted > limit:
            self._counted, self._tokens = 0, 0
        while self._counted < limit:
            i, pos = self._entries[self._counted]
            block = view[i].content[pos]
            if isinstance(block, ToolResultBlock | TextBlock) and not is_cleared(block, marker):
                self._tokens += _share(view[i], len(block.text), message_tokens(i))
            self._counted += 1
        return self._tokens

    def reset(self) -> None:
        self.cursor.reset()
        self._entries.clear()
        self._counted, self._tokens = 0, 0


def _share(message: Message, chars: int, tokens: int) -> int:
    """The part of ``tokens`` (the whole message's) that ``chars`` of its text make up."""
    total = sum(len(b.text) for b in message.content if isinstance(b, ToolResultBlock | TextBlock))
    return tokens if total <= chars else tokens * chars // total
