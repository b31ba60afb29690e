"""A request's new items checked against the API rules before anything is written: the
proxy refuses what the upstream would refuse, naming the item.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextwarden.errors import HistoryError, ToolPairingError
from contextwarden.model import Message
from contextwarden.proxy.values import Incoming
from contextwarden.rules import DEFAULT_RULES, RoleAlternation, validate

REQUEST_RULES = tuple(r for r in DEFAULT_RULES if not isinstance(r, RoleAlternation))
"""The rules a request's new items are checked against before anything is written (the APIs
merge consecutive same-role messages, and so does the proxy's history)."""

CONTEXT_MESSAGES = 2
"""Messages of the view new items are checked after (a result needs the call before it)."""


def checked(view: Sequence[Message], request: Incoming, seen: int) -> list[Message]:
    """The request's items from ``seen`` on as messages, once they are known to follow ``view``
    without breaking an API rule the upstream would refuse them for (HistoryError naming the
    item otherwise; FormatError when an item cannot be read)."""
    new = request.convert(request.items[seen:], seen)
    check_new(view, new, seen)
    return new


def check_new(view: Sequence[Message], new: Sequence[Message], seen: int) -> None:
    """Raise HistoryError when ``new`` (from the request's item ``seen`` on) appended to
    ``view`` breaks an API rule; its ``index`` is the item's."""
    context = list(view[-CONTEXT_MESSAGES:])
    problems = [
        p
        for p in validate([*context, *new], REQUEST_RULES)
        if p.index >= len(context) or (p.index == len(context) - 1 and p.tool_use_id)
    ]  # the view's own messages were checked when they came; its last call is answered now
    if not problems:
        return
    first = problems[0]
    index = max(seen + first.index - len(context), 0)
    kind = ToolPairingError if first.rule == "tool_pairing" else HistoryError
    raise kind(
        f"message {index}: {first.message}",
        index=index,
        tool_use_id=first.tool_use_id,
        rule=first.rule,
    )
