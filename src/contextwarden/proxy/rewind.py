"""An agent's edit of its own history, as strategies: the view without the messages the
rewritten items of its latest turn had become, so the request's new version of them is added in
their place and the session goes on (the log keeps the old version, as it keeps everything
compaction removes); and the view with the agent's new version of its lead-in (aider's READ ONLY
files ahead of its history), in place or restored ahead of the summary that took the old one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    Proposal,
    StrategyReport,
    finish,
    unchanged,
)
from contextwarden.compaction.cuts import FIRST_BLOCKS_KEY
from contextwarden.model import FrozenDict, Message

EDIT_TRIGGER = "proxy.edit"
"""The trigger an edit is recorded with in the log and in events."""


@dataclass(frozen=True, slots=True)
class DropTail:
    """The view without its last ``count`` messages (never all of them)."""

    count: int
    name: str = "rewind"

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        before = ctx.total_before(messages)
        if not 0 < self.count < len(messages):
            return unchanged(self.name, messages, "nothing to rewind", before)
        kept = tuple(messages[: -self.count])
        after = before - sum(ctx.count(m) for m in messages[-self.count :])
        text = f"the agent rewrote its last {self.count} message(s); the new version follows"
        return finish(self.name, messages, before, Proposal(kept, after, text))


@dataclass(frozen=True, slots=True)
class ReplaceLead:
    """The view with its first ``len(lead)`` messages replaced by ``lead`` (the agent's new
    lead-in) and its last ``drop`` messages removed (the rewritten tail, as ``DropTail``).

    While the view still starts with the old lead-in (same roles, the same first message) it is
    replaced in place; once a summary took it (the view starts with the summary message, which
    keeps the first message verbatim) the new lead-in is put back ahead of the summary, which
    loses its copy of the first message. The view may grow: it is the agent's own edit, so it is
    applied with ``grow`` (every API rule still checked)."""

    lead: tuple[Message, ...]
    drop: int = 0
    name: str = "lead-in"

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        before = ctx.total_before(messages)
        rest = _after_lead(messages, self.lead)
        if rest is None or not 0 <= self.drop <= len(rest):
            return unchanged(
                self.name, messages, "the view does not start with the lead-in", before
            )
        new = (*self.lead, *rest[: len(rest) - self.drop])
        after = sum(ctx.count(m) for m in new)
        text = f"the agent rewrote its {len(self.lead)}-message lead-in; the new version is in"
        report = StrategyReport(self.name, True, before, after, len(messages), len(new), text)
        return CompactionResult(new, report)


def summarized_lead(view: Sequence[Message]) -> bool:
    """Whether a summary took the view's lead-in (its first message is the summary's)."""
    kept = view[0].meta.extra.get(FIRST_BLOCKS_KEY) if view else None
    return isinstance(kept, int) and not isinstance(kept, bool)


def _after_lead(view: Sequence[Message], lead: Sequence[Message]) -> tuple[Message, ...] | None:
    """What of ``view`` follows its lead-in, or None when it does not start with one."""
    if not lead or not view or view[0].role != lead[0].role:
        return None
    if summarized_lead(view):
        kept = int(view[0].meta.extra[FIRST_BLOCKS_KEY])
        if lead[-1].role == view[0].role or view[0].content[:kept] != lead[0].content:
            return None
        extra = FrozenDict({k: v for k, v in view[0].meta.extra.items() if k != FIRST_BLOCKS_KEY})
        meta = replace(view[0].meta, extra=extra)
        rest = Message(view[0].role, view[0].content[kept:], meta)
        return (rest, *view[1:]) if rest.content else None
    head = view[: len(lead)]
    if len(head) < len(lead) or view[0] != lead[0]:
        return None
    if [m.role for m in head] != [m.role for m in lead]:
        return None
    return tuple(view[len(lead) :])
