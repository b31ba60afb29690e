"""Running one strategy on a history, atomically, for ``ContextManager``: the strategies'
context, the guarded apply, each history's state, and the event and log line of every rung run.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable
from pathlib import Path

from contextwarden.compaction.apply import (
    DEBUG_LINE,
    AddedResults,
    CompactionReport,
    HistoryState,
    apply_result,
    event_sizes,
    rung_event,
    seed_counts,
)
from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    Strategy,
    StrategyReport,
    TokenCache,
)
from contextwarden.compaction.breaker import Backoff, Breaker
from contextwarden.compaction.incremental import CompactableResults
from contextwarden.compaction.loss import NOTHING_LOST, LossReport, losses
from contextwarden.compaction.summarize import add_to_summary
from contextwarden.compaction.tools import ToolMatcher
from contextwarden.events import Event, EventListener, Hooks
from contextwarden.files import FileTracker
from contextwarden.history import ConversationHistory
from contextwarden.policy import ContextPolicy

__all__ = ["StrategyRunner"]

log = logging.getLogger("contextwarden")


class StrategyRunner:
    """What ``ContextManager`` builds its ladder on: ``apply`` (one strategy, now), ``on_event``,
    and each history's state the rungs share (token cache, files touched, breaker and back-off,
    what was lost). It decides nothing: which rungs run, and when, is the manager's."""

    def __init__(
        self, policy: ContextPolicy, clock: Callable[[], float], spill_dir: str | Path | None
    ) -> None:
        self.policy = policy
        self.clock = clock
        self.spill_dir = Path(spill_dir) if spill_dir is not None else None
        self.hooks = Hooks()
        self._listeners: list[EventListener] = []
        self._states: weakref.WeakKeyDictionary[ConversationHistory, HistoryState] = (
            weakref.WeakKeyDictionary()
        )
        self._compactable = ToolMatcher(policy.compactable_tools)
        self.hooks.on_cleanup(self._reset_after_compaction)

    def on_event(self, fn: EventListener) -> EventListener:
        """Call ``fn`` with every event (a rung ran, the breaker opened); returns ``fn``."""
        self._listeners.append(fn)
        return fn

    def apply(
        self, history: ConversationHistory, strategy: Strategy, *, trigger: str, grow: bool = False
    ) -> StrategyReport:
        """Run one ``strategy`` on ``history`` now, atomically, as the ladder runs its rungs.

        The new view must keep every API rule (around each changed message; all of it when
        messages were added or removed) and the latest thinking, and hold fewer tokens, or
        CompactionError is raised and the history is exactly as it was; an exception from the
        strategy itself (e.g. SummarizerError) leaves it untouched too. When applied: a compaction
        boundary in the log, post-compact hooks for a summary, cleanup hooks, and an event with
        ``trigger``. The circuit breaker and autocompact's back-off are not consulted, and
        nothing is counted toward them, except that what the strategy removes counts as growth
        while autocompact backs off.

        ``grow``: the strategy installs the agent's own rewrite of its history (the proxy's
        lead-in edits), which may hold more tokens; every rule is still checked.
        """
        state = self._state(history)
        return self._run(strategy, history, state, trigger, grow=grow).report

    def _run(
        self,
        strategy: Strategy,
        history: ConversationHistory,
        state: HistoryState,
        trigger: str,
        *,
        start: int = 0,
        quiet: bool = False,
        grow: bool = False,
    ) -> CompactionResult:
        """Run ``strategy`` on the view and apply its result atomically; emit its event."""
        started = time.perf_counter()
        view = history.messages
        ctx = self._context(history, state, start)
        result = strategy(view, ctx)
        if result.applied and result.summary is not None:
            result = add_to_summary(result, view, self.hooks.post_blocks(result), ctx)
        lost = NOTHING_LOST
        if result.applied:
            tokens = history.estimate_tokens()
            apply_result(history, view, result, trigger, self.clock(), cache=ctx.tokens, grow=grow)
            state.backoff.shrank(history, tokens - history.estimate_tokens())
            lost = losses(view, history.messages, history.counter)
            state.lost = state.lost.merged(lost)
            self.hooks.cleanup(history)
        self._announce(result, trigger, time.perf_counter() - started, lost, quiet=quiet)
        return result

    def _context(
        self, history: ConversationHistory, state: HistoryState, start: int
    ) -> CompactionContext:
        """The strategies' context, its cache holding the history's counts of ``view[start:]``."""
        seed_counts(state.cache, history, start)
        return CompactionContext(
            history.counter,
            self.clock,
            self.policy,
            state.cache,
            self.spill_dir,
            tokens_before=history.counted_tokens(),
            start=start,
            originals=AddedResults(history),
        )

    def _reset_after_compaction(self, history: ConversationHistory) -> None:
        """The built-in cleanup hook: per-history caches describe a view that is gone."""
        state = self._state(history)
        view = history.messages
        state.cache.retain(view)
        state.compactables.reset()
        state.microcompact_failed_at = -1
        state.light.done(view)  # every message of the new view was already budget-checked

    def _announce(
        self,
        result: CompactionResult,
        trigger: str,
        seconds: float,
        lost: LossReport,
        *,
        quiet: bool,
    ) -> None:
        """Log each rung's DEBUG line and emit its event; ``quiet``: only rungs that applied.
        What the result removed goes with the event of its last step that applied."""
        steps = result.steps or (result.report,)
        last = max((i for i, step in enumerate(steps) if step.applied), default=-1)
        for i, step in enumerate(steps):
            if quiet and not step.applied:
                continue
            event = rung_event(step, trigger, seconds, lost if i == last else NOTHING_LOST)
            log.debug(DEBUG_LINE, step.name, trigger, *event_sizes(event))
            self._emit(event)

    def _emit(self, event: Event) -> None:
        for fn in self._listeners:
            fn(event)

    def _state(self, history: ConversationHistory) -> HistoryState:
        state = self._states.get(history)
        if state is None:
            state = HistoryState(
                TokenCache(history.counter),
                FileTracker(),
                CompactableResults(self._compactable),
                Breaker.load(history),
                Backoff.load(history),
            )
            self._states[history] = state
        return state

    def _report(
        self,
        history: ConversationHistory,
        actions: list[StrategyReport],
        before: int,
        count: int,
        started: float,
    ) -> CompactionReport:
        after = history.estimate_tokens()
        state = self._state(history)
        lost, state.lost = state.lost, NOTHING_LOST
        over = after > self.policy.effective_window
        return CompactionReport(
            tuple(actions),
            before,
            after,
            count,
            len(history),
            time.perf_counter() - started,
            over,
            lost=lost,
        )
