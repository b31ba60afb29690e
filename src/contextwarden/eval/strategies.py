"""The strategies ``replay`` compares, as data: each builds something with ContextManager's
``prepare(history) -> CompactionReport`` and ``on_event`` shape.

``ladder`` is the ContextManager itself (today's behaviour), ``ladder-cache`` the same planned
for a prompt cache (``compaction.cache``); ``truncate``, ``mask`` and ``none`` are one rung each,
applied by ``ContextManager.apply`` (atomically, with its events) when their trigger holds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from contextwarden.compaction.base import NoOp, Strategy, StrategyReport
from contextwarden.compaction.cache import CachePolicy
from contextwarden.compaction.mask import MASK_KEEP_RECENT, ObservationMask
from contextwarden.compaction.truncate import Truncate
from contextwarden.events import EventListener
from contextwarden.history import ConversationHistory
from contextwarden.manager import CompactionReport, ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.summarizers.base import Summarizer
from contextwarden.tokens.base import TokenCounter


class Preparer(Protocol):
    """What ``replay`` drives: ContextManager's face (``prepare`` before each request)."""

    def prepare(self, history: ConversationHistory) -> CompactionReport: ...

    def on_event(self, fn: EventListener) -> EventListener: ...


@dataclass(frozen=True, slots=True)
class Settings:
    """What every strategy is built from."""

    policy: ContextPolicy
    counter: TokenCounter
    clock: Callable[[], float]
    mask_keep: int = MASK_KEEP_RECENT
    """``mask`` keeps this many of the latest tool results in full."""
    summarizer: Summarizer | None = None
    """``ladder``'s summarizer; ``None``: the offline StructuredSummarizer."""
    cache: CachePolicy = field(default_factory=CachePolicy)
    """What ``ladder-cache`` plans for (its defaults unless a comparison sets one)."""


Due = Callable[[int, ContextPolicy], bool]


def _always(tokens: int, policy: ContextPolicy) -> bool:
    return True


def _never(tokens: int, policy: ContextPolicy) -> bool:
    return False


def _over_threshold(tokens: int, policy: ContextPolicy) -> bool:
    return tokens >= policy.autocompact_threshold


class SingleRung:
    """One strategy, applied through a ContextManager whenever ``due(tokens, policy)`` holds."""

    def __init__(self, manager: ContextManager, strategy: Strategy, trigger: str, due: Due) -> None:
        self.manager = manager
        self.strategy = strategy
        self.trigger = trigger
        self.due = due

    def on_event(self, fn: EventListener) -> EventListener:
        return self.manager.on_event(fn)

    def prepare(self, history: ConversationHistory) -> CompactionReport:
        started = time.perf_counter()
        before, count = history.estimate_tokens(), len(history)
        actions: tuple[StrategyReport, ...] = ()
        if self.due(before, self.manager.policy):
            actions = (self.manager.apply(history, self.strategy, trigger=self.trigger),)
        after = history.estimate_tokens()
        seconds = time.perf_counter() - started
        over = after > self.manager.policy.effective_window
        return CompactionReport(actions, before, after, count, len(history), seconds, over)


@dataclass(frozen=True, slots=True)
class StrategySpec:
    name: str
    description: str
    build: Callable[[Settings], Preparer]


def _manager(settings: Settings) -> ContextManager:
    return ContextManager(settings.policy, settings.summarizer, clock=settings.clock)


def _rung(
    make: Callable[[Settings], Strategy], trigger: str, due: Due
) -> Callable[[Settings], Preparer]:
    def build(settings: Settings) -> Preparer:
        return SingleRung(_manager(settings), make(settings), trigger, due)

    return build


STRATEGIES: dict[str, StrategySpec] = {
    spec.name: spec
    for spec in (
        StrategySpec(
            "ladder",
            "the full ladder: budget, snip, microcompact, summary (offline), truncation",
            _manager,
        ),
        StrategySpec(
            "ladder-cache",
            "the ladder planned for a 5-minute prompt cache: old tool results are cleared when "
            "the cache has gone cold, or when the saving pays for the cache re-write",
            lambda s: ContextManager(s.policy, s.summarizer, clock=s.clock, cache=s.cache),
        ),
        StrategySpec(
            "truncate",
            "at the autocompact threshold keep the first user message and the latest turns, "
            "down to the tokens the ladder keeps verbatim after a summary",
            _rung(
                lambda s: Truncate(s.policy.keep_recent_turns, max_tokens=s.policy.keep_tokens),
                "auto",
                _over_threshold,
            ),
        ),
        StrategySpec(
            "mask",
            "before every request replace all but the latest M tool results with a placeholder",
            _rung(lambda s: ObservationMask(keep_recent=s.mask_keep), "always", _always),
        ),
        StrategySpec(
            "none", "no management: every message is sent", _rung(lambda s: NoOp(), "never", _never)
        ),
    )
}
STRATEGY_NAMES: tuple[str, ...] = tuple(STRATEGIES)
