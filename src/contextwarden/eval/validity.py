"""The replay's own API-rule check of every request, made cheap by checking only what changed.

Every rule relates a message to its neighbours (alternation, pairing) or to itself (placement,
thinking order), so when a view that passed every rule keeps its first ``k`` messages (same
objects), only the messages from ``k - 2`` on need checking: the one at ``k - 2`` anchors the
window, and what it alone shows there is known from the previous check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from contextwarden.model import Message
from contextwarden.rules import DEFAULT_RULES, Rule, Violation, validate

ANCHOR = 2
"""Unchanged messages included before the first changed one."""
ANCHOR_ARTIFACTS = frozenset({"role_alternation", "tool_pairing", "block_placement"})
"""Rules whose violations at the anchor come from cutting the window there, not from the view."""


class RequestValidator:
    """``check(view)``: the violations ``validate(view)`` gives, for views checked in order."""

    def __init__(self, rules: Sequence[Rule] = DEFAULT_RULES) -> None:
        self.rules = tuple(rules)
        self._last: tuple[Message, ...] = ()
        self._last_valid = False

    def check(self, view: Sequence[Message]) -> list[Violation]:
        current = tuple(view)
        start = self._unchanged_prefix(current) - ANCHOR
        if not self._last_valid or start <= 0:
            found = validate(current, self.rules)
        else:
            found = [
                replace(v, index=v.index + start)
                for v in validate(current[start:], self.rules)
                if v.index > 0 or v.rule not in ANCHOR_ARTIFACTS
            ]
        self._last, self._last_valid = current, not found
        return found

    def _unchanged_prefix(self, current: tuple[Message, ...]) -> int:
        last = self._last
        limit = min(len(last), len(current))
        for i in range(limit):
            if last[i] is not current[i]:
                return i
        return limit
