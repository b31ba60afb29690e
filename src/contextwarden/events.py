"""What the context manager tells the outside: an event per rung run, and the hooks it calls.

Hooks are registered callables, not hard-coded steps: ``pre_compact`` may add instructions,
``post_compact`` may add blocks to the summary message, ``on_cleanup`` runs after every compaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from contextwarden.compaction.loss import NOTHING_LOST, LossReport
from contextwarden.model import Block, TextBlock

if TYPE_CHECKING:
    from contextwarden.compaction.base import CompactionResult
    from contextwarden.history import ConversationHistory


@dataclass(frozen=True, slots=True)
class RungEvent:
    """One rung ran (applied or not): what, why, and what it did to the history."""

    name: str
    trigger: str
    """Why it ran: ``budget``, ``threshold``, ``idle``, ``auto``, ``manual``, ``over_window``."""
    applied: bool
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    seconds: float
    description: str
    lost: LossReport = NOTHING_LOST
    """What this rung removed from the context (a pipeline's: on the event of its last step)."""


@dataclass(frozen=True, slots=True)
class BreakerOpened:
    """The summarizer failed ``failures`` times in a row; autocompact stops calling it."""

    failures: int
    error: str


@dataclass(frozen=True, slots=True)
class AutocompactBackedOff:
    """A summary was declined because it would not have saved tokens (``reason``, with the
    tokens before and after); autocompact is not tried again until the conversation has grown by
    ``retry_after`` tokens from ``tokens`` (``policy.retry_after_tokens``, doubled for each
    earlier decline in a row), or a manual compact. Not a failure: the breaker
    does not count it."""

    tokens: int
    retry_after: int
    reason: str


Event: TypeAlias = RungEvent | BreakerOpened | AutocompactBackedOff
EventListener: TypeAlias = Callable[[Event], None]

PreCompactHook: TypeAlias = Callable[["ConversationHistory", str], "str | None"]
"""``fn(history, trigger)`` before a summary is made; returned text joins the instructions."""

HookOutput: TypeAlias = "str | Block | Sequence[str | Block] | None"
PostCompactHook: TypeAlias = Callable[["CompactionResult"], HookOutput]
"""``fn(result)`` after a summary is made; returned text or blocks go into the summary message."""

CleanupHook: TypeAlias = Callable[["ConversationHistory"], None]
"""``fn(history)`` after every compaction that changed the history (reset caches and state)."""


class Hooks:
    """The registry of hook callables; each ``register`` method returns ``fn`` (decorator use)."""

    __slots__ = ("_cleanup", "_post", "_pre")

    def __init__(self) -> None:
        self._pre: list[PreCompactHook] = []
        self._post: list[PostCompactHook] = []
        self._cleanup: list[CleanupHook] = []

    def pre_compact(self, fn: PreCompactHook) -> PreCompactHook:
        self._pre.append(fn)
        return fn

    def post_compact(self, fn: PostCompactHook) -> PostCompactHook:
        self._post.append(fn)
        return fn

    def on_cleanup(self, fn: CleanupHook) -> CleanupHook:
        self._cleanup.append(fn)
        return fn

    def instructions(
        self, history: ConversationHistory, trigger: str, base: str | None
    ) -> str | None:
        """``base`` joined with what every pre-compact hook returned (blank lines between)."""
        parts = [base] if base and base.strip() else []
        for fn in self._pre:
            extra = fn(history, trigger)
            if extra is not None and extra.strip():
                parts.append(extra.strip())
        return "\n\n".join(parts) or None

    def post_blocks(self, result: CompactionResult) -> tuple[Block, ...]:
        """The blocks every post-compact hook returned, text turned into TextBlocks."""
        blocks: list[Block] = []
        for fn in self._post:
            blocks.extend(_as_blocks(fn(result)))
        return tuple(blocks)

    def cleanup(self, history: ConversationHistory) -> None:
        for fn in self._cleanup:
            fn(history)


def _as_blocks(output: HookOutput) -> list[Block]:
    if output is None:
        return []
    if isinstance(output, str):
        return [TextBlock(output)] if output.strip() else []
    if isinstance(output, Sequence):
        return [b for item in output for b in _as_blocks(item)]
    return [output]
