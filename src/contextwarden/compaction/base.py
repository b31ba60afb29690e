"""What every compaction strategy shares: its context, its result and report, and the guards.

A strategy is a callable ``(messages, context) -> CompactionResult`` that never mutates its input,
never returns a history that breaks a rule and never returns more tokens than it got; ``finish``
enforces the last two for every strategy, so each one only states what it would change.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from contextwarden.errors import CompactionError
from contextwarden.model import EMPTY, FrozenDict, Message, TextBlock, ToolResultBlock
from contextwarden.policy import ContextPolicy
from contextwarden.rules import latest_thinking_preserved, validate
from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.heuristic import HeuristicCounter

WOULD_NOT_SAVE = "would_not_save"
"""Report detail set (True) when ``finish`` declined a proposal only because it would not save
tokens: the strategy worked, its result was just not smaller (the manager backs off on it rather
than counting a summarizer failure)."""


class TokenCache:
    """Per-message token counts, so a strategy counts only the messages it changes.

    Keyed by message identity (the entry holds the message, so the id cannot be reused while
    cached); ``retain`` drops entries for messages no longer in the view.
    """

    __slots__ = ("_counts", "counter")

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._counts: dict[int, tuple[Message, int]] = {}

    def count(self, message: Message) -> int:
        hit = self._counts.get(id(message))
        if hit is not None:
            return hit[1]
        tokens = self.counter.count_message(message)
        self._counts[id(message)] = (message, tokens)
        return tokens

    def seed(self, message: Message, tokens: int) -> None:
        """Record a count known from elsewhere (e.g. the history's ledger)."""
        self._counts[id(message)] = (message, tokens)

    def total(self, messages: Iterable[Message]) -> int:
        return sum(self.count(m) for m in messages)

    def retain(self, messages: Iterable[Message]) -> None:
        """Forget every message not in ``messages``."""
        keep = {id(m) for m in messages}
        self._counts = {k: v for k, v in self._counts.items() if k in keep}

    def __len__(self) -> int:
        return len(self._counts)


@dataclass(frozen=True, slots=True)
class CompactionContext:
    """What a strategy may use besides the messages: counting, time, policy, where to spill."""

    counter: TokenCounter = field(default_factory=HeuristicCounter)
    clock: Callable[[], float] = time.time
    """Seconds since the epoch; injectable so tests control time."""
    policy: ContextPolicy = field(default_factory=ContextPolicy)
    cache: TokenCache | None = None
    """Per-message counts; ``None``: a fresh cache over ``counter``."""
    spill_dir: Path | None = None
    """Where ToolResultBudget writes the full text of results it cuts; ``None``: not written
    (the history's log still holds it: ``history.rehydrate(tool_use_id)``)."""
    tokens_before: int | None = None
    """The caller's count of the messages passed (the manager passes the history's estimate,
    preamble included); ``None``: counted through ``cache``."""
    start: int = 0
    """Messages before this index are known to need no tool-result budget or snip (the manager's
    incremental pass); strategies that scan for work may start here."""
    originals: Callable[[str], ToolResultBlock | TextBlock | None] | None = None
    """The tool result with a given tool_use_id, or a user message's text (an observation, a
    paste) with a given content id, as it was first added, before any rung cut or cleared it (the
    manager reads the history's log); a summary is built from these, never from markers.
    ``None``: the messages are all there is."""

    def __post_init__(self) -> None:
        if self.cache is None:
            object.__setattr__(self, "cache", TokenCache(self.counter))

    @property
    def tokens(self) -> TokenCache:
        assert self.cache is not None, "__post_init__ always sets a cache"
        return self.cache

    def count(self, message: Message) -> int:
        return self.tokens.count(message)

    def total_before(self, messages: Sequence[Message]) -> int:
        """``tokens_before`` if the caller gave it, else the count of ``messages``."""
        if self.tokens_before is not None:
            return self.tokens_before
        return self.tokens.total(messages)


@dataclass(frozen=True, slots=True)
class StrategyReport:
    """What one strategy did (or why it did nothing)."""

    name: str
    applied: bool
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    description: str
    """What changed, in words; when not applied, the reason."""
    details: FrozenDict = EMPTY

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """A strategy's output: the new messages (a new tuple) and its report."""

    messages: tuple[Message, ...]
    report: StrategyReport
    summary: str | None = None
    """The summary text, when the strategy wrote one (recorded in the compaction boundary)."""
    steps: tuple[StrategyReport, ...] = ()
    """For a pipeline: each step's report, in order."""

    @property
    def applied(self) -> bool:
        return self.report.applied


@runtime_checkable
class Strategy(Protocol):
    """One rung of the ladder: a read-only sequence in, a new sequence and a report out."""

    @property
    def name(self) -> str: ...

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult: ...


def unchanged(
    name: str,
    messages: Sequence[Message],
    reason: str,
    tokens: int,
    details: Mapping[str, Any] | None = None,
) -> CompactionResult:
    """The input, as given, with ``applied=False`` and the reason."""
    kept = messages if isinstance(messages, tuple) else tuple(messages)
    report = StrategyReport(
        name, False, tokens, tokens, len(kept), len(kept), reason, FrozenDict(details or {})
    )
    return CompactionResult(kept, report)


@dataclass(frozen=True, slots=True)
class Proposal:
    """What a strategy would return, before the guards in ``finish`` accept or refuse it."""

    messages: tuple[Message, ...]
    tokens_after: int
    description: str
    changed: Sequence[int] | None = None
    """Indices of messages whose content changed in place (same count, same roles and ids):
    only their neighbourhoods are validated. ``None``: the structure changed; validate all."""
    details: Mapping[str, Any] = field(default_factory=dict)
    summary: str | None = None


def with_edits(messages: Sequence[Message], edits: Mapping[int, Message]) -> tuple[Message, ...]:
    """``messages`` as a new tuple with ``edits`` (index → new message) applied."""
    out = list(messages)
    for i, message in edits.items():
        out[i] = message
    return tuple(out)


def finish(
    name: str, before: Sequence[Message], tokens_before: int, proposal: Proposal
) -> CompactionResult:
    """Accept ``proposal`` if it keeps every rule and saves tokens; else the input unchanged."""
    after = proposal.messages
    problems = new_violations(before, after, proposal.changed)
    details = dict(proposal.details)
    if problems:
        details["violations"] = tuple(problems[:5])
        return unchanged(
            name, before, f"not applied: it would break {problems[0]}", tokens_before, details
        )
    if not latest_thinking_preserved(before, after):
        reason = "not applied: it would change the latest assistant turn's thinking blocks"
        return unchanged(name, before, reason, tokens_before, details)
    if proposal.tokens_after >= tokens_before:
        details[WOULD_NOT_SAVE] = True
        reason = (
            f"not applied: it would not save tokens ({tokens_before} before, "
            f"{proposal.tokens_after} after)"
        )
        return unchanged(name, before, reason, tokens_before, details)
    report = StrategyReport(
        name,
        True,
        tokens_before,
        proposal.tokens_after,
        len(before),
        len(after),
        proposal.description,
        FrozenDict(details),
    )
    return CompactionResult(after, report, proposal.summary)


def new_violations(
    before: Sequence[Message], after: Sequence[Message], changed: Sequence[int] | None
) -> list[str]:
    """Rule violations ``after`` has that ``before`` had not: all of ``after``'s when ``changed``
    is None, else only around the changed indices (every rule is about a message and its
    neighbours, so an in-place edit can break none farther away)."""
    if changed is None:
        return [str(v) for v in validate(after)]
    if len(before) != len(after):
        raise ValueError("an in-place proposal must keep the number of messages")
    found: list[str] = []
    for i in changed:
        lo, hi = max(0, i - 1), min(len(after), i + 2)
        old = {(v.rule, v.index, v.message) for v in validate(before[lo:hi])}
        found.extend(
            f"[{v.rule}] message {v.index + lo}: {v.message}"
            for v in validate(after[lo:hi])
            if (v.rule, v.index, v.message) not in old
        )
    return found


class NoOp:
    """Changes nothing; the identity rung (tests and ``--strategy none`` use it)."""

    name = "noop"

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        return unchanged(self.name, messages, "no-op: nothing to do", ctx.total_before(messages))


class Pipeline:
    """Strategies run in order, each on the previous one's output; itself a strategy."""

    def __init__(self, *strategies: Strategy | Iterable[Strategy], name: str | None = None) -> None:
        # Pipeline(a, b) and Pipeline([a, b]) both read: a list is the other natural spelling.
        self.strategies = tuple(_flatten(strategies))
        self._name = name or "+".join(s.name for s in self.strategies) or "pipeline"

    @property
    def name(self) -> str:
        return self._name

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        start = ctx.total_before(messages)
        current = messages if isinstance(messages, tuple) else tuple(messages)
        tokens, steps, summary = start, [], None
        for strategy in self.strategies:
            result = strategy(current, replace(ctx, tokens_before=tokens))
            steps.append(result.report)
            current, tokens = result.messages, result.report.tokens_after
            summary = result.summary or summary
        applied = [s for s in steps if s.applied]
        description = "; ".join(f"{s.name}: {s.description}" for s in applied) or "nothing applied"
        report = StrategyReport(
            self.name, bool(applied), start, tokens, len(messages), len(current), description
        )
        return CompactionResult(current, report, summary, tuple(steps))


def _flatten(items: Iterable[Strategy | Iterable[Strategy]]) -> Iterable[Strategy]:
    """The strategies given one by one or as lists; anything else is named."""
    for item in items:
        if isinstance(item, Strategy):
            yield item
        elif isinstance(item, Iterable) and not isinstance(item, str | bytes):
            yield from _flatten(item)
        else:
            raise CompactionError(
                f"Pipeline got {type(item).__name__} {item!r:.60}; give strategies (objects "
                "with a name and a __call__(messages, context)) or a list of them"
            )
