"""The window guarantee's last word: what to tell the caller when the ladder could not make the
request fit (ContextOverflowError), or when the window is too small for the session.
"""

from __future__ import annotations

from collections.abc import Callable

from contextwarden.compaction.cap import unshrinkable
from contextwarden.errors import ContextOverflowError
from contextwarden.history import ConversationHistory
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy


def overflow_error(
    history: ConversationHistory, policy: ContextPolicy, count: Callable[[Message], int]
) -> ContextOverflowError:
    """The error for a history still over the effective window after every rung ran."""
    tokens = history.estimate_tokens()
    left = unshrinkable(history.messages, tokens, count)
    return ContextOverflowError(tokens, policy.effective_window, left)
