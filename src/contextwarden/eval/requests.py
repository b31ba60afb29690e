"""A recorded session's requests, one by one, as its agent sent them, on a clock that follows the
transcript: what replays, the window benchmark and the window tests walk through."""

from __future__ import annotations

from collections.abc import Iterator

from contextwarden.history import ConversationHistory
from contextwarden.model import Message


class TranscriptClock:
    """A replay's "now": the latest timestamp seen in the transcript (so "idle" and "the cache
    has gone cold" mean what they meant when the session ran). Pass it as a manager's clock."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, message: Message) -> None:
        stamp = message.meta.timestamp
        if stamp is not None and stamp > self.now:
            self.now = stamp


def request_points(
    source: ConversationHistory, clock: TranscriptClock
) -> Iterator[ConversationHistory]:
    """Rebuild ``source`` message by message into a new history (same system prompt and tools)
    and yield it at every request its agent sent: before each assistant message that answers a
    user message, and once more after the last message when that is a user message (the
    request the agent was about to send). ``clock`` is advanced to each message's time first."""
    history = ConversationHistory(source.system, source.tools)
    for message in [*source.messages, None]:
        if message is not None:
            clock.advance(message)
        request = message is None or message.role == "assistant"
        if request and len(history) > 0 and history.messages[-1].role == "user":
            yield history
        if message is not None:
            history.add(message)
