"""Which probes the context sent at each request still holds, tracked exactly and cheaply.

Between two requests a context only changes by messages leaving it (compaction replaced or
dropped them) and messages joining it. So at each request only probes found in a message that
left are searched again in the whole context, and only absent probes are searched in the
messages that joined; a probe is searched in the whole context once more when its turn comes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from contextwarden.eval.probes import ProbeSet
from contextwarden.model import Message
from contextwarden.searchable import SEPARATOR, message_text


@dataclass(frozen=True, slots=True)
class Retention:
    """Retention of one strategy over one session.

    ``share`` is the headline number: present / checks over every (probe, request) pair from the
    probe's first turn on; 1.0 when there was nothing to check.
    """

    probes: int
    checks: int
    present: int
    by_kind: Mapping[str, tuple[int, int]] = field(default_factory=lambda: MappingProxyType({}))
    """Kind → (present, checks)."""
    final_active: int = 0
    final_present: int = 0
    missing_at_end: tuple[str, ...] = ()
    """Probes not in the context of the last request (what the strategy forgot for good)."""
    per_turn: tuple[float, ...] = ()
    """Share of the active probes present at each request."""

    @property
    def share(self) -> float:
        return self.present / self.checks if self.checks else 1.0

    @property
    def final_share(self) -> float:
        return self.final_present / self.final_active if self.final_active else 1.0

    def kind_share(self, kind: str) -> float:
        present, checks = self.by_kind.get(kind, (0, 0))
        return present / checks if checks else 1.0


class RetentionTracker:
    """Call ``check(turn, messages)`` with the context of each request, in order."""

    def __init__(self, probes: ProbeSet, system: str = "") -> None:
        self._set = probes
        self._order = sorted(range(len(probes)), key=lambda i: probes.first_turns[i])
        self._next = 0
        self._always = (
            [p.text in system for p in probes.probes] if system else [False] * len(probes)
        )
        self._present = list(self._always)
        self._active: list[int] = []
        self._view: tuple[Message, ...] = ()
        self._texts: dict[int, str] = {}
        kinds = sorted({p.kind for p in probes.probes})
        self._kind_active = dict.fromkeys(kinds, 0)
        self._kind_present = dict.fromkeys(kinds, 0)
        self._kind_checks = dict.fromkeys(kinds, 0)
        self._kind_hits = dict.fromkeys(kinds, 0)
        self._per_turn: list[float] = []

    def check(self, turn: int, messages: Sequence[Message]) -> None:
        """Record which active probes the context ``messages`` (sent at request ``turn``) holds."""
        view = tuple(messages)
        old = {id(m) for m in self._view}
        new = {id(m) for m in view}
        left = [m for m in self._view if id(m) not in new]
        joined = [m for m in view if id(m) not in old]
        texts = {id(m): self._texts.get(id(m)) or message_text(m) for m in view}
        context: list[str] = []  # the whole context, joined only if some probe needs it

        def whole() -> str:
            if not context:
                context.append(SEPARATOR.join(texts.values()))
            return context[0]

        if left:
            gone = SEPARATOR.join(self._texts[id(m)] for m in left)
            for i in self._active:
                if self._present[i] and not self._always[i] and self._text(i) in gone:
                    self._flip(i, self._text(i) in whole())
        if joined:
            added = SEPARATOR.join(texts[id(m)] for m in joined)
            for i in self._active:
                if not self._present[i] and self._text(i) in added:
                    self._flip(i, True)
        self._activate(turn, whole)
        self._view, self._texts = view, texts
        self._tally()

    def result(self) -> Retention:
        checks = sum(self._kind_checks.values())
        present = sum(self._kind_hits.values())
        by_kind = {k: (self._kind_hits[k], self._kind_checks[k]) for k in self._kind_checks}
        missing = tuple(self._text(i) for i in self._active if not self._present[i])
        return Retention(
            probes=len(self._set),
            checks=checks,
            present=present,
            by_kind=MappingProxyType(by_kind),
            final_active=len(self._active),
            final_present=len(self._active) - len(missing),
            missing_at_end=missing,
            per_turn=tuple(self._per_turn),
        )

    # ------------------------------------------------------------------ internals
    def _text(self, i: int) -> str:
        return self._set.probes[i].text

    def _flip(self, i: int, present: bool) -> None:
        if present != self._present[i]:
            self._present[i] = present
            self._kind_present[self._set.probes[i].kind] += 1 if present else -1

    def _activate(self, turn: int, whole: Callable[[], str]) -> None:
        while self._next < len(self._order):
            i = self._order[self._next]
            if self._set.first_turns[i] > turn:
                break
            self._next += 1
            self._active.append(i)
            kind = self._set.probes[i].kind
            self._kind_active[kind] += 1
            present = self._always[i] or self._text(i) in whole()
            self._present[i] = present
            self._kind_present[kind] += int(present)

    def _tally(self) -> None:
        for kind, active in self._kind_active.items():
            self._kind_checks[kind] += active
            self._kind_hits[kind] += self._kind_present[kind]
        active = len(self._active)
        present = sum(self._kind_present.values())
        self._per_turn.append(present / active if active else 1.0)
