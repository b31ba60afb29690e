"""Where a request's last items start in the view it was managed into: the marks a turn
record keeps so that an edit of those items next time is recognised.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.model import Message
from contextwarden.proxy.matching import EDIT_DEPTH, Mark
from contextwarden.proxy.values import Incoming


def tail_marks(
    view: Sequence[Message], request: Incoming, digests: Sequence[str]
) -> tuple[Mark, ...]:
    """Where the request's last items start in ``view``, for an edit of them next time: a mark
    for each of the last ``EDIT_DEPTH`` positions whose items became the view's tail (the
    same messages, their content perhaps shortened by compaction)."""
    marks: list[Mark] = []
    count = len(request.items)
    for at in range(count - 1, max(count - EDIT_DEPTH, 0) - 1, -1):
        try:
            tail = request.convert(request.items[at:], at)
        except FormatError:
            continue  # a tail that cannot stand alone (a tool output without its call)
        if 0 < len(tail) < len(view) and _shapes(view[-len(tail) :]) == _shapes(tail):
            marks.append(Mark(at, digests[at], len(tail)))
    return tuple(marks)


def _shapes(messages: Sequence[Message]) -> list[tuple[Any, ...]]:
    """What compaction keeps of the latest messages when it shortens their content: roles,
    block types and tool ids (so the view's tail is known to be what these items became)."""
    return [
        (
            m.role,
            tuple(b.type for b in m.content),
            tuple(u.id for u in m.tool_uses),
            tuple(r.tool_use_id for r in m.tool_results),
        )
        for m in messages
    ]
