"""The proxy's values for one request: the conversation as the client sent it (``Incoming``)
and what goes upstream for it (``Managed``), with the fixed-share warning they carry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from contextwarden.compaction.apply import CompactionReport
from contextwarden.model import Message
from contextwarden.proxy.edits import ClearToolUses

__all__ = ["FIXED_SHARE_HEADER", "FIXED_SHARE_WARNING", "Converter", "Incoming", "Managed"]

FIXED_SHARE_WARNING = 0.5
"""Share of the window the agent's fixed part (system prompt + tools) may take before the proxy
says so: past it, what compaction can free is small next to what it cannot touch."""
FIXED_SHARE_HEADER = "x-contextwarden-fixed-share"
"""Response header carrying ``Managed.fixed_share`` to the client."""

Converter = Callable[[Sequence[Any], int], list[Message]]
"""Turns wire items (the tail from index ``start`` of a request's conversation) into our
messages, through wire/ (the index makes errors name the item)."""


@dataclass(frozen=True, slots=True)
class Incoming:
    """One request's conversation as the client sent it."""

    key: str
    """The session it names (``session_key``)."""
    system: str | list[dict[str, Any]] | None
    tools: list[dict[str, Any]]
    items: Sequence[Any]
    """The conversation items as sent (wire dicts), hashed to match prefixes."""
    convert: Converter
    edits: tuple[ClearToolUses, ...] = ()
    """Context edits the client asked for (Anthropic ``context_management``)."""
    model: str | None = None
    """The model the body names: the session's count is calibrated for it (Claude models)."""


@dataclass(frozen=True, slots=True)
class Managed:
    """What to send upstream for one request, and how it came about."""

    session_id: str
    messages: tuple[Message, ...]
    version: int
    """Store version once this turn was recorded: usage is anchored only if it still holds."""
    new_items: int
    """Items of the request not seen before (0: a retry of a managed turn)."""
    tokens: int
    report: CompactionReport | None
    """What ``prepare`` did; None when the turn was replayed from the log."""
    applied_edits: tuple[Any, ...] = ()
    """The context edits applied to this turn, as the API reports them."""
    fixed_share: float | None = None
    """The share of the window the system prompt and tools take, when it is over
    ``FIXED_SHARE_WARNING`` (compaction can then free little: summaries come often)."""
    fixed_share_warned: bool = False
    """This is the session's first request found over the share in this process (logged)."""
    model: str | None = None
    """The model the session's count was calibrated for (its reload after the reply keeps it)."""
