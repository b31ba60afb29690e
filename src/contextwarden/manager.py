"""ContextManager: decides before each request which rungs of the ladder run, and applies them.

Light rungs (tool-result budget, snip) look only at messages new since the last call; microcompact
runs on a token threshold or after an idle hour; over the window, a text of the latest turn larger
than a message may be is cut first (``compaction.cap.Oversize``); autocompact (summary) above its
threshold, behind a circuit breaker kept in the history's metadata (a summary that would not save
tokens is no failure: autocompact backs off until the conversation has grown); truncation when
still over the window, then the last-resort cap (``compaction.cap``); then the request fits, or
ContextOverflowError (or a flag, per ``policy.on_overflow``). Every change, and ``apply`` of any
one strategy, goes through the same guarded, atomic path (``manager_runs.StrategyRunner``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from contextwarden.compaction.apply import CompactionReport, HistoryState
from contextwarden.compaction.base import (
    WOULD_NOT_SAVE,
    CompactionResult,
    Pipeline,
    Strategy,
    StrategyReport,
)
from contextwarden.compaction.budget import ToolResultBudget
from contextwarden.compaction.cache import CacheAware, CachePolicy
from contextwarden.compaction.guard import first_resort, guarded, last_resorts
from contextwarden.compaction.headroom import HeadroomCut
from contextwarden.compaction.loss import NOTHING_LOST
from contextwarden.compaction.microcompact import MicroCompact
from contextwarden.compaction.snip import Snip
from contextwarden.compaction.summarize import Summarize
from contextwarden.errors import SummarizerError
from contextwarden.events import AutocompactBackedOff, BreakerOpened
from contextwarden.files import Budget
from contextwarden.history import ConversationHistory
from contextwarden.manager_runs import StrategyRunner
from contextwarden.model import Message, TextBlock
from contextwarden.policy import ContextPolicy
from contextwarden.rules import latest_assistant_index
from contextwarden.summarizers.actions import is_observation
from contextwarden.summarizers.base import Summarizer

__all__ = ["NO_COMPACT_SOURCES", "CompactionReport", "ContextManager"]

log = logging.getLogger("contextwarden")

NO_COMPACT_SOURCES = frozenset({"compact", "session_memory"})
"""Query sources that never compact: a summarizer's own request must not trigger compaction."""


class ContextManager(StrategyRunner):
    """Keeps one or more histories valid and inside the window (see the module docstring).

    ``summarizer=None`` uses the offline ``StructuredSummarizer`` sized for the policy's window;
    ``workspace`` is the root inside which recently used files are re-read after a summary
    (``None``: none are); ``spill_dir`` receives the full text of tool results the budget cuts.
    ``cache``: plan for a prompt cache (``compaction.cache``): microcompact when the cache has
    gone cold (its TTL instead of ``policy.idle_minutes``) and, on the token threshold, only when
    the edit pays for the cache re-write it causes.
    """

    def __init__(
        self,
        policy: ContextPolicy | None = None,
        summarizer: Summarizer | None = None,
        workspace: str | Path | None = None,
        clock: Callable[[], float] = time.time,
        spill_dir: str | Path | None = None,
        cache: CachePolicy | None = None,
    ) -> None:
        super().__init__(policy or ContextPolicy(), clock, spill_dir)
        self.cache = cache
        self._summarizer = summarizer
        self.workspace = Path(workspace) if workspace is not None else None
        self._budget, self._snip = ToolResultBudget(), Snip()
        self._light = Pipeline(self._budget, self._snip, name="budget+snip")

    # ------------------------------------------------------------------ public API
    @property
    def summarizer(self) -> Summarizer:
        """The summarizer autocompact uses (created on first use when none was given)."""
        if self._summarizer is None:
            from contextwarden.summarizers.structured import StructuredSummarizer

            self._summarizer = StructuredSummarizer.for_window(self.policy.context_window)
        return self._summarizer

    def prepare(
        self, history: ConversationHistory, *, query_source: str = "main"
    ) -> CompactionReport:
        """Call before every model request: run the rungs whose triggers hold.

        Afterwards the request fits the effective window by the history's count, or
        ContextOverflowError is raised (``policy.on_overflow="flag"``: the report says so instead),
        naming what could not shrink. Rungs that applied stay applied either way."""
        started = time.perf_counter()
        before, count = history.estimate_tokens(), len(history)
        if query_source in NO_COMPACT_SOURCES:
            reason = f"recursion guard: query_source {query_source!r} never compacts"
            return CompactionReport((), before, before, count, count, 0.0, skipped=reason)
        state = self._state(history)
        actions: list[StrategyReport] = []
        self._light_rungs(history, state, actions)
        self._microcompact(history, state, actions)
        if history.estimate_tokens() > self.policy.effective_window:
            oversize = first_resort(history, self.policy)
            actions.append(self._run(oversize, history, state, "over_window").report)
        if history.estimate_tokens() >= self.policy.autocompact_threshold and self._may_summarize(
            history, state
        ):
            self._autocompact(history, state, actions, "auto", None)
        if history.estimate_tokens() > self.policy.effective_window:
            for strategy in last_resorts(history, self.policy):
                if history.estimate_tokens() <= self.policy.effective_window:
                    break
                actions.append(self._run(strategy, history, state, "over_window").report)
        report = self._report(history, actions, before, count, started)
        return guarded(report, history, self.policy, state.cache.count)

    def compact(
        self, history: ConversationHistory, instructions: str | None = None
    ) -> CompactionReport:
        """Manual ``/compact``: summarize now, with optional focus ``instructions``.

        Resets the circuit breaker and autocompact's back-off. A summarizer failure raises
        SummarizerError (the history is unchanged); when there is nothing to summarize the report
        says why.
        """
        started = time.perf_counter()
        before, count = history.estimate_tokens(), len(history)
        state = self._state(history)
        state.breaker.reset(history)
        state.backoff.reset(history)
        actions: list[StrategyReport] = []
        self._light_rungs(history, state, actions)
        self._autocompact(history, state, actions, "manual", instructions, reraise=True)
        return self._report(history, actions, before, count, started)

    def is_near_limit(self, history: ConversationHistory) -> bool:
        """True above ``warning_ratio`` of the window (the seed's ``isNearLimit``)."""
        return history.estimate_tokens() > self.policy.warning_threshold

    def record_usage(self, history: ConversationHistory, usage: Any) -> int:
        """Anchor the history's token count on a real API response's usage."""
        return history.record_usage(usage)

    def breaker_open(self, history: ConversationHistory) -> bool:
        """Whether autocompact stopped calling the summarizer for ``history``."""
        return self._state(history).breaker.open

    def consecutive_failures(self, history: ConversationHistory) -> int:
        return self._state(history).breaker.failures

    def backing_off(self, history: ConversationHistory) -> bool:
        """Whether autocompact waits for ``history`` to grow after a summary that would not
        have saved tokens (``policy.retry_after_tokens``)."""
        return self._backing_off(history, self._state(history))

    def recent_files(self, history: ConversationHistory) -> list[str]:
        """Files the history's tool calls touched, most recent first."""
        return self._state(history).files.recent()

    # ------------------------------------------------------------------ rungs
    def _light_rungs(
        self, history: ConversationHistory, state: HistoryState, actions: list[StrategyReport]
    ) -> None:
        view = history.messages
        start = state.light.start(view)
        if start >= len(view):
            return
        if start == 0:
            state.files.clear()
        new = view[start:]
        for message in new:
            state.files.observe(message)
        if any(m.role == "user" and (m.tool_results or is_observation(m)) for m in new):
            # A cheap look first: most new results need neither rung (a first, full pass skips
            # it, since the rungs' own scan is as cheap and the look would double it).
            ctx = self._context(history, state, start)
            if start == 0 or any(
                self._budget.wants(m, ctx) or self._snip.wants(m, ctx) for m in new
            ):
                result = self._run(self._light, history, state, "budget", start=start, quiet=True)
                actions.extend(step for step in result.steps if step.applied)
        state.light.done(history.messages)

    def _microcompact(
        self, history: ConversationHistory, state: HistoryState, actions: list[StrategyReport]
    ) -> None:
        policy, view = self.policy, history.messages
        trigger: str | None = None
        if history.estimate_tokens() >= policy.microcompact_threshold:
            state.compactables.update(view)
            saving = state.compactables.old_tokens(
                view, policy.keep_recent_tool_results, history.message_tokens, policy.cleared_marker
            )
            retry = len(state.compactables) != state.microcompact_failed_at
            if saving >= policy.min_saving and retry:
                trigger = "threshold"
        if trigger is None:
            idle = self._idle_assistant(view)
            if idle is not None and idle is not state.idle_done_for:
                state.idle_done_for = idle
                trigger = "idle"
        if trigger is None:
            return
        # Idle: the prompt cache has expired, so any saving is worth a cache re-write.
        strategy: Strategy = MicroCompact(min_saving=0) if trigger == "idle" else MicroCompact()
        if self.cache is not None:
            # Declining an edit for a summary only makes sense when a summary can run.
            cut = self._cut() if self._may_summarize(history, state) else None
            rival = cut.stretch if cut is not None else None
            strategy = CacheAware(strategy, self.cache, cold=trigger == "idle", rival=rival)
        result = self._run(strategy, history, state, trigger)
        actions.append(result.report)
        if trigger == "threshold" and not result.applied:
            state.microcompact_failed_at = len(state.compactables)

    def _idle_assistant(self, view: Sequence[Message]) -> Message | None:
        """The latest assistant message, if the conversation has been idle since it long enough."""
        index = latest_assistant_index(view)
        last = view[index] if index is not None else None
        if last is None or last.meta.timestamp is None:
            return None
        idle = self.clock() - last.meta.timestamp
        minutes = self.cache.idle_minutes if self.cache is not None else self.policy.idle_minutes
        return last if idle >= minutes * 60 else None

    def _autocompact(
        self,
        history: ConversationHistory,
        state: HistoryState,
        actions: list[StrategyReport],
        trigger: str,
        instructions: str | None,
        *,
        reraise: bool = False,
    ) -> None:
        started = time.perf_counter()
        wanted = self.hooks.instructions(history, trigger, instructions)
        strategy = Summarize(
            self.summarizer, instructions=wanted, attach=self._attacher(state), choose=self._cut()
        )
        try:
            result = self._run(strategy, history, state, trigger)
        except Exception as exc:  # any failure counts toward the breaker, then goes on up
            tokens, count = history.estimate_tokens(), len(history)
            reason = f"summarizer failed: {exc}"
            failed = StrategyReport(strategy.name, False, tokens, tokens, count, count, reason)
            actions.append(failed)
            elapsed = time.perf_counter() - started
            self._announce(
                CompactionResult(history.messages, failed),
                trigger,
                elapsed,
                NOTHING_LOST,
                quiet=False,
            )
            self._failed(history, state, str(exc))
            if reraise or not isinstance(exc, SummarizerError):
                raise
            return
        actions.append(result.report)
        if result.applied:
            state.breaker.reset(history)
            state.backoff.reset(history)
        elif result.report.details.get(WOULD_NOT_SAVE):
            self._back_off(history, state, result.report.description)
        elif result.report.details.get("summarizer_called"):
            self._failed(history, state, result.report.description)

    def _may_summarize(self, history: ConversationHistory, state: HistoryState) -> bool:
        """The breaker is closed and autocompact is not backing off."""
        return not state.breaker.open and not self._backing_off(history, state)

    def _backing_off(self, history: ConversationHistory, state: HistoryState) -> bool:
        policy, tokens = self.policy, history.estimate_tokens()
        return state.backoff.waiting(tokens, policy.retry_after, policy.effective_window)

    def _cut(self) -> HeadroomCut | None:
        """With a cache policy, the summary's cut leaves head-room (``compaction.headroom``)."""
        if self.cache is None:
            return None
        from contextwarden.summarizers.structured import StructuredSummarizer

        summarizer = self.summarizer
        if isinstance(summarizer, StructuredSummarizer):  # its summaries fill its budget at most
            return HeadroomCut(self.cache, summarizer.budget)
        return HeadroomCut(self.cache)

    def _failed(self, history: ConversationHistory, state: HistoryState, error: str) -> None:
        breaker = state.breaker
        if breaker.failed(history, self.policy.max_consecutive_failures):
            log.warning(
                "autocompact circuit breaker open after %d failures: %s", breaker.failures, error
            )
            self._emit(BreakerOpened(breaker.failures, error))

    def _back_off(self, history: ConversationHistory, state: HistoryState, reason: str) -> None:
        """The summarizer worked but its summary would not save tokens (a preamble or a kept
        tail that takes most of the window): no failure, but asking again on the next request
        would only decline the same summary, so wait for the conversation to grow."""
        policy, tokens = self.policy, history.estimate_tokens()
        state.backoff.declined(history, tokens)
        retry_after = state.backoff.wait(policy.retry_after, policy.effective_window)
        log.info("autocompact backs off for %d tokens of growth: %s", retry_after, reason)
        self._emit(AutocompactBackedOff(tokens, retry_after, reason))

    def _attacher(self, state: HistoryState) -> Callable[[Sequence[Message]], Sequence[TextBlock]]:
        policy = self.policy
        total = policy.reattach_tokens
        budget = Budget(policy.max_files, min(policy.max_tokens_per_file, total), total)

        def attach(tail: Sequence[Message]) -> Sequence[TextBlock]:
            exclude = state.files.paths_in(tail)
            return state.files.reattach(
                self.workspace, state.cache.counter, budget, exclude=exclude
            )

        return attach
