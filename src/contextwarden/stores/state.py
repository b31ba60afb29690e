"""What a store must know about a session to check an append: its version and the view's tail.

Every event is checked before it is written, against the stored view (not the writer's copy of it):
a message must keep the view valid, a boundary's view must be valid on its own. Only the last
``TAIL`` messages are needed, so checking an append costs O(batch), not O(session).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from contextwarden.errors import StoreError
from contextwarden.log import CompactionBoundary, LogEntry, MessageAdded
from contextwarden.model import Message
from contextwarden.repair import merge_messages
from contextwarden.rules import DEFAULT_RULES, Rule, clean_append, validate

TAIL = 3
"""Messages of the view kept for checks: a merged last message, the one before it (whose tool
calls it must answer) and one more, so a violation at window index 0 can be told apart from a
false alarm caused by cutting the window (the window ``ConversationHistory`` merge mode uses)."""


@dataclass(frozen=True, slots=True)
class SessionState:
    """A session at ``version``: the view's last messages and how long the view is."""

    version: int = 0
    tail: tuple[Message, ...] = ()
    view_length: int = 0
    last_boundary: int = 0
    """Sequence number (1-based) of the last CompactionBoundary; 0 when there is none."""
    token: str = ""
    """Backend-specific identity of the stored session (to notice delete + re-create)."""
    offset: int = 0
    """JSONL only: the file offset just after the last event read."""

    def advance(self, entries: Sequence[LogEntry]) -> SessionState:
        """The state after stored ``entries`` (not checked again: they were when written)."""
        state = self
        for entry in entries:
            state = state._step(entry)
        return state

    def checked(
        self, session_id: str, entries: Sequence[LogEntry], rules: Sequence[Rule] = DEFAULT_RULES
    ) -> SessionState:
        """The state after ``entries``, or StoreError naming the first event that breaks a rule."""
        state = self
        for i, entry in enumerate(entries):
            if isinstance(entry, CompactionBoundary):
                problems = [str(v) for v in validate(entry.view, rules)]
            elif isinstance(entry, MessageAdded):
                problems = state._problems_after(entry, rules)
            else:
                problems = []
            if problems:
                raise StoreError(
                    f"event {i} of the batch for session {session_id!r} "
                    f"({type(entry).__name__}) would break an API rule: {problems[0]}; "
                    "nothing was written"
                )
            state = state._step(entry)
        return state

    def _step(self, entry: LogEntry) -> SessionState:
        version = self.version + 1
        if isinstance(entry, CompactionBoundary):
            view = entry.view
            tail, length = view[-TAIL:], len(view)
            return replace(
                self, version=version, tail=tail, view_length=length, last_boundary=version
            )
        if isinstance(entry, MessageAdded):
            grows = not (entry.merge and self.tail)
            tail = self._window(entry)[-TAIL:]
            # Built directly, not by ``replace``: this runs on every append (a third faster).
            return SessionState(
                version, tail, self.view_length + grows, self.last_boundary, self.token, self.offset
            )
        return replace(self, version=version)

    def _clean(self, message: Message) -> bool:
        """``clean_append`` over the window: the ids it holds are the ones the rules would see."""
        used = {use.id for m in self.tail for use in m.tool_uses}
        return clean_append(self.tail[-1] if self.tail else None, message, used)

    def _window(self, entry: MessageAdded) -> tuple[Message, ...]:
        """The tail with ``entry`` applied (merged into the last message, or appended)."""
        if entry.merge and self.tail:
            return (*self.tail[:-1], merge_messages(self.tail[-1], entry.message))
        return (*self.tail, entry.message)

    def _problems_after(self, entry: MessageAdded, rules: Sequence[Rule]) -> list[str]:
        if rules is DEFAULT_RULES and not entry.merge and self._clean(entry.message):
            return []  # the common turn, by the shortcut a history takes on every add
        # Index 0 has no predecessor in the window: its "violations" may be false alarms unless
        # the window is the whole view. Anything the new message breaks shows at index >= 1.
        whole = len(self.tail) == self.view_length
        offset = self.view_length - len(self.tail)  # window index -> view index
        return [
            str(replace(v, index=v.index + offset))
            for v in validate(self._window(entry), rules)
            if whole or v.index > 0
        ]
