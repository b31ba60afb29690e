"""Where ``cache_control`` breakpoints pay in an Anthropic request, and putting them there.

A request reads the longest cached prefix that ends within 20 blocks before one of its
breakpoints, and writes the prefix up to each breakpoint. So: one on the tools and one on the
system prompt (stable for the whole session; a compaction leaves them cached), one on the last
message of the previous request (the prefix the next request can read even when the latest turn
added more than 20 blocks), and one on the last message (what the next request reads). At most 4.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from contextwarden.model import Message
from contextwarden.rules import latest_assistant_index

CacheTTL = Literal["5m", "1h"]
MAX_BREAKPOINTS = 4
"""The API rejects a request with more ``cache_control`` markers than this."""
UNMARKABLE = frozenset({"thinking", "redacted_thinking"})
"""Block types that cannot carry ``cache_control`` themselves."""


def cache_points(messages: Sequence[Message]) -> tuple[int, ...]:
    """Indexes of the messages that get a breakpoint: the previous request's last message (the
    one before the latest assistant message) and the last message, in order, without repeats."""
    if not messages:
        return ()
    last = len(messages) - 1
    latest = latest_assistant_index(messages)
    previous = latest - 1 if latest is not None and latest > 0 else None
    return tuple(sorted({i for i in (previous, last) if i is not None}))


def cache_control(ttl: CacheTTL) -> dict[str, str]:
    """The marker for ``ttl`` (the 5-minute one is the API's default and carries no ``ttl``)."""
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}


def add_breakpoints(
    kwargs: dict[str, Any], messages: Sequence[Message], ttl: CacheTTL = "5m"
) -> dict[str, Any]:
    """``kwargs`` (``system``/``messages``/``tools`` in wire form, from ``messages``) with
    breakpoints on the tools, the system prompt and ``cache_points(messages)``; markers already
    in the request are kept and count toward the limit of 4, which is never exceeded (the last
    message first, then the system prompt, the tools, the previous request's end)."""
    out = dict(kwargs)
    budget = MAX_BREAKPOINTS - count_markers(out)
    marker = cache_control(ttl)
    wire = [dict(m) for m in out.get("messages", [])]
    points = cache_points(messages)
    order: list[tuple[str, int]] = [("message", points[-1])] if points else []
    order += [("system", 0), ("tools", 0)]
    order += [("message", i) for i in points[:-1]]
    for place, index in order:
        if budget <= 0:
            break
        if place == "message":
            budget -= _mark_message(wire, index, marker)
        elif place == "system":
            budget -= _mark_system(out, marker)
        else:
            budget -= _mark_last(out, "tools", marker)
    if "messages" in out:
        out["messages"] = wire
    return out


def count_markers(kwargs: Mapping[str, Any]) -> int:
    """``cache_control`` markers a request (``system``/``messages``/``tools``) carries."""
    blocks: list[Any] = list(kwargs.get("tools") or [])
    system = kwargs.get("system")
    if isinstance(system, list):
        blocks += system
    for message in kwargs.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            blocks += content
    return sum(1 for b in blocks if isinstance(b, dict) and "cache_control" in b)


def _mark_message(wire: list[dict[str, Any]], index: int, marker: dict[str, str]) -> int:
    """Mark the last markable block of ``wire[index]``; 1 if a marker was added."""
    content = list(wire[index].get("content") or [])
    for pos in range(len(content) - 1, -1, -1):
        block = content[pos]
        if isinstance(block, dict) and block.get("type") not in UNMARKABLE:
            if "cache_control" in block:
                return 0
            content[pos] = {**block, "cache_control": marker}
            wire[index] = {**wire[index], "content": content}
            return 1
    return 0


def _mark_system(kwargs: dict[str, Any], marker: dict[str, str]) -> int:
    system = kwargs.get("system")
    if isinstance(system, str) and system:
        kwargs["system"] = [{"type": "text", "text": system, "cache_control": marker}]
        return 1
    return _mark_last(kwargs, "system", marker)


def _mark_last(kwargs: dict[str, Any], key: str, marker: dict[str, str]) -> int:
    """Mark the last dict of the list ``kwargs[key]``; 1 if a marker was added."""
    items = kwargs.get(key)
    if not isinstance(items, list) or not items or not isinstance(items[-1], dict):
        return 0
    if "cache_control" in items[-1]:
        return 0
    kwargs[key] = [*items[:-1], {**items[-1], "cache_control": marker}]
    return 1
