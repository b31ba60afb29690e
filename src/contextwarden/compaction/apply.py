"""Applying a strategy's result to a history, atomically; what the manager keeps per history and
what it reports.

The new view is checked (rules, fewer tokens) before ``_replace_view`` installs it with a
compaction boundary in the log; until then the history is untouched.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from contextwarden.compaction.base import (
    CompactionResult,
    StrategyReport,
    TokenCache,
    new_violations,
)
from contextwarden.compaction.breaker import Backoff, Breaker
from contextwarden.compaction.cuts import SUMMARY_KEY
from contextwarden.compaction.incremental import CompactableResults, Cursor
from contextwarden.compaction.loss import NOTHING_LOST, LossReport
from contextwarden.content_ids import CONTENT_ID_PREFIX, content_id
from contextwarden.errors import CompactionError
from contextwarden.events import RungEvent
from contextwarden.files import FileTracker
from contextwarden.history import ConversationHistory
from contextwarden.log import CompactionBoundary, MessageAdded
from contextwarden.model import FrozenDict, Message, TextBlock, ToolResultBlock
from contextwarden.rules import latest_thinking_preserved


@dataclass(frozen=True, slots=True)
class CompactionReport:
    """What ``prepare``/``compact`` did: the rungs that ran (applied or not) and the totals."""

    actions: tuple[StrategyReport, ...]
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    seconds: float
    over_window: bool = False
    """Even the last resort could not bring the context under the effective window."""
    skipped: str | None = None
    """Why nothing was considered at all (the recursion guard), else None."""
    warnings: tuple[str, ...] = ()
    """What the caller should know: the request is over the window (``on_overflow="flag"``), or
    the window is too small for the session (``compaction.guard``)."""
    lost: LossReport = NOTHING_LOST
    """What left the context, item by item, with the ids that get each back."""

    @property
    def applied(self) -> tuple[str, ...]:
        """Names of the rungs that changed the history, in order."""
        return tuple(a.name for a in self.actions if a.applied)

    @property
    def compacted(self) -> bool:
        return any(a.applied for a in self.actions)


DEBUG_LINE = "%s (%s): before %d tokens, %d messages / after %d tokens, %d messages"
"""The seed's log line for each rung: name, trigger, then ``event_sizes``."""


def rung_event(
    step: StrategyReport, trigger: str, seconds: float, lost: LossReport = NOTHING_LOST
) -> RungEvent:
    """The event for one rung that ran (applied or not)."""
    return RungEvent(
        step.name,
        trigger,
        step.applied,
        step.tokens_before,
        step.tokens_after,
        step.messages_before,
        step.messages_after,
        seconds,
        step.description,
        lost,
    )


def event_sizes(event: RungEvent) -> tuple[int, int, int, int]:
    """Tokens and messages before, then after, in ``DEBUG_LINE``'s order."""
    return event.tokens_before, event.messages_before, event.tokens_after, event.messages_after


@dataclass(eq=False)
class HistoryState:
    """What the manager remembers about one history between calls."""

    cache: TokenCache
    files: FileTracker
    compactables: CompactableResults
    breaker: Breaker
    """The autocompact circuit breaker (persisted in the history's metadata)."""
    backoff: Backoff
    """Autocompact's wait after a summary that would not have saved tokens (persisted too)."""
    light: Cursor = field(default_factory=Cursor)
    """How far the light rungs and the file tracker have looked."""
    lost: LossReport = NOTHING_LOST
    """What the rungs applied since the last report removed (``_report`` hands it over)."""
    microcompact_failed_at: int = -1
    """Number of compactable results when a threshold microcompact last saved too little."""
    idle_done_for: Message | None = None
    """The assistant message after which the idle microcompact already ran."""


def apply_result(
    history: ConversationHistory,
    view: tuple[Message, ...],
    result: CompactionResult,
    trigger: str,
    timestamp: float,
    *,
    cache: TokenCache,
    grow: bool = False,
) -> None:
    """Install ``result.messages`` as the history's view, or raise CompactionError untouched.

    Whatever the strategy, the new view is checked here: every rule (the whole view when
    messages were added or removed, else around each message that changed), the latest
    assistant turn's thinking, and fewer tokens. ``cache`` holds the counts the strategy made;
    the history's ledger takes them as they are. ``grow``: an agent's own edit of its history,
    exempt from the fewer-tokens check only.
    """
    new = result.messages
    name = result.report.name
    same = len(new) == len(view)
    changed = [i for i in range(len(new)) if new[i] is not view[i]] if same else None
    problems = new_violations(view, new, changed)
    if problems:
        raise CompactionError(f"{name} produced an invalid view: {problems[0]}")
    if not latest_thinking_preserved(view, new):
        raise CompactionError(f"{name} changed the latest assistant turn's thinking blocks")
    if not grow and result.report.tokens_after >= result.report.tokens_before:
        raise CompactionError(f"{name} did not reduce the token count")
    kept = {id(m) for m in new}
    boundary = CompactionBoundary(
        strategy=result.report.name,
        trigger=trigger,
        tokens_before=history.estimate_tokens(),
        tokens_after=result.report.tokens_after,
        replaced=sum(1 for m in view if id(m) not in kept),
        view=new,
        summary=result.summary,
        timestamp=timestamp,
        details=FrozenDict({"description": result.report.description, **result.report.details}),
    )
    history._replace_view(boundary, [cache.count(m) for m in new])


def seed_counts(cache: TokenCache, history: ConversationHistory, start: int) -> None:
    """Give the cache the history's counts of ``history.messages[start:]``."""
    view = history.messages
    for i in range(start, len(view)):
        cache.seed(view[i], history.message_tokens(i))


class AddedResults:
    """tool_use_id → the tool result as the history's log recorded it when it was added, and
    content id → a message's text as added (an observation, what the person typed, what the
    assistant wrote: what ``history.rehydrate`` returns) or a summary's text as its compaction
    installed it, each indexed in one pass over the log on first use.

    A summary is never added, only installed: without it here, a summary the cap cut to fit (a
    system prompt that fills most of the window) would reach the next summary as its note alone,
    and what it carried would be gone from every later one."""

    __slots__ = ("_history", "_index", "_observed")

    def __init__(self, history: ConversationHistory) -> None:
        self._history = history
        self._index: dict[str, ToolResultBlock] | None = None
        self._observed: dict[str, TextBlock] | None = None

    def __call__(self, key: str) -> ToolResultBlock | TextBlock | None:
        if key.startswith(CONTENT_ID_PREFIX):
            return self._text(key)
        return self._result(key)

    def _text(self, key: str) -> TextBlock | None:
        if self._observed is None:
            self._observed = {
                content_id(block.text): block
                for message in self._texts()
                for block in message.content
                if isinstance(block, TextBlock)
            }
        return self._observed.get(key)

    def _texts(self) -> Iterator[Message]:
        """The messages added, and the summary messages compactions installed (a view shares
        its unchanged messages with the one before: each is read once)."""
        seen: set[int] = set()
        for entry in self._history.log:
            if isinstance(entry, MessageAdded):
                yield entry.message
            elif isinstance(entry, CompactionBoundary):
                for message in entry.view:
                    if message.meta.extra.get(SUMMARY_KEY) and id(message) not in seen:
                        seen.add(id(message))
                        yield message

    def _result(self, tool_use_id: str) -> ToolResultBlock | None:
        if self._index is None:
            index: dict[str, ToolResultBlock] = {}
            for entry in self._history.log:
                if isinstance(entry, MessageAdded):
                    for block in entry.message.content:
                        if isinstance(block, ToolResultBlock):
                            index[block.tool_use_id] = block  # the latest, as rehydrate does
            self._index = index
        return self._index.get(tool_use_id)
