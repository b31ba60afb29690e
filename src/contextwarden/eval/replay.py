"""Replay a saved session through context strategies, request by request, and measure each.

The session's messages are added one by one to a fresh strict-mode history. A request was sent
before every assistant message (that is when the agent called the model), so there the strategy's
``prepare`` runs and the context it leaves is measured and checked on its own: token count,
window, API rules, fact probes. Then the assistant message is added and the replay goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from contextwarden.compaction.cache import CachePolicy
from contextwarden.compaction.guard import WINDOW_TOO_SMALL
from contextwarden.compaction.mask import MASK_KEEP_RECENT
from contextwarden.cost.bill import Bill
from contextwarden.cost.cache import PromptCache, Usage, cache_for
from contextwarden.cost.prices import Price
from contextwarden.cost.requests import view_request
from contextwarden.errors import (
    CompactionError,
    ContextOverflowError,
    ContextWardenError,
    HistoryError,
)
from contextwarden.eval.probes import Probe, ProbeSet, default_probes, resolve, system_text
from contextwarden.eval.recall_path import follow_markers
from contextwarden.eval.requests import TranscriptClock
from contextwarden.eval.retention import RetentionTracker
from contextwarden.eval.runs import Change, Mark, ReplayResult, StrategyRun
from contextwarden.eval.strategies import STRATEGIES, STRATEGY_NAMES, Settings
from contextwarden.eval.validity import RequestValidator
from contextwarden.events import Event, RungEvent
from contextwarden.history import ConversationHistory
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy
from contextwarden.summarizers.base import Summarizer
from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.heuristic import HeuristicCounter

__all__ = ["Change", "Mark", "Observer", "Progress", "ReplayResult", "StrategyRun", "replay"]
"""The results' values live in ``eval.runs``; they are imported from here too."""

MAX_EXAMPLES = 5
"""Invalid requests and compaction errors quoted per strategy (all are counted)."""

Progress = Callable[[str, int, int], None]
"""``progress(strategy, requests_done, requests_total)``."""
Observer = Callable[[str, int, tuple[Message, ...]], None]
"""``observe(strategy, request, messages)``: the context sent at each request."""


def replay(
    session: ConversationHistory,
    strategies: Sequence[str] = STRATEGY_NAMES,
    *,
    window: int = 200_000,
    probes: Sequence[Probe] | None = None,
    mask_keep: int = MASK_KEEP_RECENT,
    counter: TokenCounter | None = None,
    summarizer: Summarizer | None = None,
    progress: Progress | None = None,
    observe: Observer | None = None,
    label: str | None = None,
    pricing: Price | None = None,
    unseen_preamble: int = 0,
    policy: ContextPolicy | None = None,
    cache: CachePolicy | None = None,
) -> ReplayResult:
    """Replay ``session`` through each named strategy (see the module docstring).

    ``probes``: facts to check; ``None`` derives the defaults (``default_probes``).
    ``observe(strategy, request, messages)`` sees the context of every request. ``label`` names
    the session in the result (default: the file it was loaded from). ``pricing``: also bill
    each strategy's requests under that model's prompt cache (``StrategyRun.bill``), with
    ``unseen_preamble`` more tokens of preamble than the history holds (a Claude Code file
    lacks the system prompt and tools: ``cost.recorded.unseen_preamble``). ``policy``: the
    managers' whole policy (its window replaces ``window``), to compare one setting's effect;
    ``cache``: what ``ladder-cache`` plans for (``None``: ``CachePolicy()``).
    """
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        known = ", ".join(STRATEGIES)
        raise ContextWardenError(f"unknown strategy {unknown[0]!r}; use one of: {known}")
    started = time.perf_counter()
    messages = session.messages
    chosen = default_probes(messages) if probes is None else probes
    probe_set = resolve(chosen, messages, system_text(session.system))
    policy = policy or ContextPolicy(context_window=window)
    runs = {}
    for name in strategies:
        clock = TranscriptClock()
        settings = Settings(
            policy,
            counter or HeuristicCounter(),
            clock,
            mask_keep,
            summarizer,
            cache or CachePolicy(),
        )
        one = _Replay(name, session, settings, clock, probe_set, pricing, unseen_preamble)
        runs[name] = one.run(progress, observe)
    loaded = session.source.path if session.source else None
    source = label or loaded or "(unsaved history)"
    turns = sum(1 for m in messages if m.role == "assistant")
    elapsed = time.perf_counter() - started
    return ReplayResult(source, turns, policy, runs, probe_set, len(messages), elapsed)


class _Replay:
    """One strategy over one session: the fresh history, its preparer, and what was measured."""

    def __init__(
        self,
        name: str,
        session: ConversationHistory,
        settings: Settings,
        clock: TranscriptClock,
        probes: ProbeSet,
        pricing: Price | None = None,
        unseen_preamble: int = 0,
    ) -> None:
        self.name, self.session, self.settings, self.clock = name, session, settings, clock
        self.price = pricing
        self.cache: PromptCache | None = cache_for(pricing) if pricing is not None else None
        self.usages: list[Usage] = []
        self.unseen_preamble = unseen_preamble
        self.spec = STRATEGIES[name]
        self.preparer = self.spec.build(settings)
        self.preparer.on_event(self._on_event)
        self.history = ConversationHistory(session.system, session.tools, counter=settings.counter)
        self.tracker = RetentionTracker(probes, system_text(session.system))
        self.validator = RequestValidator()
        self.tokens: list[int] = []
        self.marks: list[Mark] = []
        self.changes: list[Change] = []
        self.problems: list[str] = []
        self.over = self.invalid = self.errors = 0
        self.warned: dict[str, tuple[str, int]] = {}
        """Kind of warning → (its first text, requests it concerned)."""
        self.rung_seconds = self.prepare_seconds = 0.0

    def run(self, progress: Progress | None, observe: Observer | None) -> StrategyRun:
        messages = self.session.messages
        total = sum(1 for m in messages if m.role == "assistant")
        for index, message in enumerate(messages):
            if message.role == "assistant":
                sent = self._request()
                if observe is not None:
                    observe(self.name, len(self.tokens) - 1, sent)
                if progress is not None:
                    progress(self.name, len(self.tokens), total)
            try:
                self.history.add(message)
            except HistoryError as exc:
                raise ContextWardenError(
                    f"replay {self.name}: message {index} ({message.role}) cannot follow the "
                    f"context the strategy left: {exc}"
                ) from exc
            if message.role == "assistant":
                self._bill(sent)
            self.clock.advance(message)
        retention = self.tracker.result()
        return StrategyRun(
            self.name,
            self.spec.description,
            tuple(self.tokens),
            self.settings.policy.context_window,
            self.over,
            self.invalid,
            tuple(self.marks),
            self.rung_seconds,
            self.prepare_seconds,
            retention,
            tuple(self.problems),
            self.errors,
            Bill(self.price, tuple(self.usages)) if self.price is not None else None,
            changes=tuple(self.changes),
            warnings=tuple(
                f"{text} ({n:,} of {total:,} requests)" for text, n in self.warned.values()
            ),
            recall=follow_markers(self.history, retention.missing_at_end),
        )

    def _request(self) -> tuple[Message, ...]:
        """One request: prepare, then measure and check what would be sent."""
        turn = len(self.tokens)
        before, marked = self.history.messages, len(self.marks)
        started = time.perf_counter()
        try:
            report = self.preparer.prepare(self.history)
        except CompactionError as exc:  # atomic: the history is as it was; the request goes out
            self.errors += 1
            self._note(f"request {turn}: compaction failed: {exc}")
        except ContextOverflowError as exc:  # the request cannot fit; measured as it stands
            self._warn("overflow", f"request could not fit: {exc}")
        else:
            for warning in report.warnings:
                kind = WINDOW_TOO_SMALL if warning.startswith(WINDOW_TOO_SMALL) else "overflow"
                self._warn(kind, warning)
        self.prepare_seconds += time.perf_counter() - started
        tokens = self.history.estimate_tokens()
        sent = self.history.messages
        if len(self.marks) > marked:
            self.changes.append(Change.between(turn, self.marks[marked:], before, sent))
        violations = self.validator.check(sent)
        if violations:
            self.invalid += 1
            self._note(f"request {turn}: {violations[0]}")
        if tokens > self.settings.policy.context_window:
            self.over += 1
        self.tokens.append(tokens)
        self.tracker.check(turn, sent)
        return sent

    def _bill(self, sent: tuple[Message, ...]) -> None:
        """Price the request that sent ``sent``; its reply is the message just added."""
        if self.cache is None:
            return
        counts = [self.history.message_tokens(i) for i in range(len(sent))]
        output = self.history.message_tokens(-1)
        preamble = self.history.preamble_tokens + self.unseen_preamble
        request = view_request(self.clock.now, preamble, sent, counts, output)
        self.usages.append(self.cache.send(request))

    def _on_event(self, event: Event) -> None:
        if not isinstance(event, RungEvent):
            return
        self.rung_seconds += event.seconds
        if event.applied:
            self.marks.append(
                Mark(
                    len(self.tokens),
                    event.name,
                    event.trigger,
                    event.tokens_before,
                    event.tokens_after,
                    event.seconds,
                )
            )

    def _warn(self, kind: str, text: str) -> None:
        first, n = self.warned.get(kind, (text, 0))
        self.warned[kind] = (first, n + 1)

    def _note(self, text: str) -> None:
        if len(self.problems) < MAX_EXAMPLES:
            self.problems.append(text)
