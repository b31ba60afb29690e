"""The TokenCounter protocol: how many tokens a piece of text or a message costs."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from contextwarden.model import Message


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens. Implementations must be pure: same input, same count.

    A counter may also have a ``cache_key: str`` naming its exact counting rules (e.g.
    ``"exact/v1/o200k_base"``); stores then keep per-message counts and reuse them on load
    when the restoring history's counter has the same key. Without one, counts are never kept.
    """

    def count_text(self, text: str) -> int:
        """Tokens in a plain string."""
        ...

    def count_message(self, message: Message) -> int:
        """Tokens a message costs on the wire, every block type included."""
        ...
