"""Cache-aware compaction: a rung that edits an old message pays for it in prompt-cache writes.

Every request re-sends the prefix, read from the cache at a tenth of the input price; editing
message ``i`` makes the next request write ``messages[i:]`` again at 1.25 times the price. So
an edit pays only when the tokens it saves, read on each request until the next compaction,
cost more than that re-write. ``CacheAware`` wraps a rung (microcompact) and applies its edit
only then — or when the cache has gone cold anyway (the ladder's idle trigger, which the cache
policy sets to the cache's lifetime), or when not editing would let a summary happen instead and
the summary's stretch to the next compaction would cost more per request (``interval``; the
summary's cut itself is chosen in ``headroom``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from contextwarden.compaction.base import (
    CompactionContext,
    CompactionResult,
    Strategy,
    unchanged,
)
from contextwarden.model import Message

CACHE_TTL_SECONDS = 300.0
"""The prompt cache's lifetime (Anthropic's default 5 minutes, refreshed by every request)."""
WRITE_RATIO = 1.25
"""A cache write costs this many times base input (Anthropic, 5-minute TTL)."""
READ_RATIO = 0.1
"""A cache read costs this many times base input."""
HORIZON_REQUESTS = 40
"""At most this many coming requests are credited with a saving (the session may end)."""
GROWTH_TURNS = 10
"""The context's growth per request is averaged over this many latest turns."""
COLD_MIN_RATIO = 0.25
"""On a cold cache, old results are cleared once the context holds this share of the
microcompact threshold: clearing that would come soon anyway moves to a moment when it is free,
while a small context keeps its results (and the facts in them)."""
CUT_SLACK = 0.10
"""A summary keeps the most recent context whose expected cost per request (``headroom``) is
within this share of the cheapest safe cut's: at most 10 % more per request buys retention."""
SUMMARY_MARGIN = 2.0
"""At the autocompact threshold an edit yields to a summary only when the edit's stretch costs
more than ``1 + summary_margin`` times the summary's per request (3x): a summary drops detail an
edit keeps. Chosen on the 27 transcripts at 40,000 (docs/benchmarks.md): margins of 0.1 to 1.5
cost less but let a summary come early enough to lose facts the plain ladder keeps."""
MIN_KEEP_RATIO = 0.5
"""A summary planned for the cache still keeps at least this share of ``summary_keep_tokens``
verbatim (when a safe cut allows it): the cost model alone would keep as little as possible.
At 0.25 a summary came early or small enough to lose facts the plain ladder keeps at 20,000 and
60,000 tokens (docs/benchmarks.md); at 0.5 retention holds at every window measured."""


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """The prompt-cache prices and lifetime the ladder plans for (see the module docstring)."""

    ttl_seconds: float = CACHE_TTL_SECONDS
    write_ratio: float = WRITE_RATIO
    read_ratio: float = READ_RATIO
    horizon_requests: int = HORIZON_REQUESTS
    growth_turns: int = GROWTH_TURNS
    cold_min_ratio: float = COLD_MIN_RATIO
    cut_slack: float = CUT_SLACK
    min_keep_ratio: float = MIN_KEEP_RATIO
    summary_margin: float = SUMMARY_MARGIN

    def __post_init__(self) -> None:
        if self.ttl_seconds <= 0 or self.horizon_requests <= 0 or self.growth_turns <= 0:
            raise ValueError("CachePolicy: ttl_seconds, horizon_requests, growth_turns must be > 0")
        if not 0 <= self.read_ratio < self.write_ratio:
            raise ValueError("CachePolicy: need 0 <= read_ratio < write_ratio")
        if self.cut_slack < 0 or not 0 <= self.min_keep_ratio <= 1:
            raise ValueError("CachePolicy: need cut_slack >= 0 and 0 <= min_keep_ratio <= 1")

    @property
    def idle_minutes(self) -> float:
        """After this long without a request the cache is cold: an edit costs no extra write."""
        return self.ttl_seconds / 60

    def pays(self, saving: int, rewritten: int, requests: int) -> bool:
        """True when ``saving`` tokens read on ``requests`` coming requests cost more than
        writing ``rewritten`` tokens once instead of reading them."""
        gain = saving * self.read_ratio * min(requests, self.horizon_requests)
        return gain > rewritten * (self.write_ratio - self.read_ratio)


@dataclass(frozen=True, slots=True)
class Interval:
    """The stretch from one compaction to the next as the cost model sees it."""

    start: int
    """Tokens of the context right after the compaction (preamble included)."""
    requests: int
    """Requests until the next compaction (at least 1, at most the horizon)."""
    cost: float
    """Expected input cost per request over the stretch, in base-input tokens (the writes of
    new messages, the same whatever the cut, left out)."""


def interval(
    start: int, rewritten: int, threshold: int, growth: int, cache: CachePolicy
) -> Interval:
    """The stretch after a compaction that leaves ``start`` tokens, ``rewritten`` of them new
    to the cache: ``n = (threshold - start) / growth`` requests (1 to ``horizon_requests``), each
    reading the context as it grows; cost per request = (``rewritten`` x ``write_ratio`` +
    ``read_ratio`` x the reads) / ``n`` (``compaction.headroom`` explains the choice it drives)."""
    room = max(0, threshold - start) // max(1, growth)
    n = max(1, min(room, cache.horizon_requests))
    reads = n * start + growth * n * (n - 1) // 2
    cost = (rewritten * cache.write_ratio + cache.read_ratio * reads) / n
    return Interval(start, n, cost)


def first_changed(before: Sequence[Message], after: Sequence[Message]) -> int | None:
    """Index of the first message ``after`` does not share with ``before`` (by identity)."""
    for i, (old, new) in enumerate(zip(before, after, strict=False)):
        if old is not new:
            return i
    return None if len(before) == len(after) else min(len(before), len(after))


def growth_per_request(messages: Sequence[Message], context: CompactionContext, turns: int) -> int:
    """Tokens the context grew by per request, over the latest ``turns`` assistant turns."""
    seen, tokens = 0, 0
    for message in reversed(messages):
        tokens += context.count(message)
        if message.role == "assistant":
            seen += 1
            if seen == turns:
                break
    return max(1, tokens // max(1, seen))


def requests_until_cold(messages: Sequence[Message], ttl_seconds: float) -> int | None:
    """How many requests in a row the conversation sends before a pause longer than the cache's
    lifetime (the mean run so far); ``None`` without timestamps. Beyond that a saving is not
    worth crediting: at the pause the cache is cold and the edit is free."""
    stamps = [m.meta.timestamp for m in messages if m.role == "assistant"]
    known = [t for t in stamps if t is not None]
    if len(known) < 2:
        return None
    pauses = sum(1 for a, b in pairwise(known) if b - a >= ttl_seconds)
    return max(1, len(known) // (pauses + 1))


Rival = Callable[[Sequence[Message], CompactionContext], "Interval | None"]
"""The stretch the rung that would run instead (a summary) leads to, or ``None``."""


class CacheAware:
    """``inner``'s edit, applied only when it pays for the cache re-write it causes.

    From the autocompact threshold on, the edit is applied unless ``rival`` (what a summary made
    instead would lead to, ``headroom.HeadroomCut.stretch``) costs less per request than the
    stretch after the edit; without a rival it is applied regardless (a summary would re-write
    everything). ``cold``: the cache has expired, so the edit costs no extra write; it is applied
    once the context holds ``cold_min_ratio`` of the microcompact threshold.
    """

    def __init__(
        self, inner: Strategy, cache: CachePolicy, *, cold: bool = False, rival: Rival | None = None
    ) -> None:
        self.inner, self.cache, self.cold, self.rival = inner, cache, cold, rival
        self.name = inner.name

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        ctx = context or CompactionContext()
        policy = ctx.policy
        if self.cold and ctx.total_before(messages) < (
            self.cache.cold_min_ratio * policy.microcompact_threshold
        ):
            reason = "not applied: the cache is cold but the context is still small"
            return unchanged(self.name, messages, reason, ctx.total_before(messages))
        result = self.inner(messages, ctx)
        report = result.report
        first = first_changed(messages, result.messages)
        if self.cold or not result.applied or first is None:
            return result
        rewritten = sum(ctx.count(m) for m in result.messages[first:])
        growth = growth_per_request(messages, ctx, self.cache.growth_turns)
        if report.tokens_before >= policy.autocompact_threshold:
            return self._against_rival(messages, ctx, result, rewritten, growth)
        requests = max(0, policy.autocompact_threshold - report.tokens_after) // growth
        run = requests_until_cold(messages, self.cache.ttl_seconds)
        requests = requests if run is None else min(requests, run)
        if self.cache.pays(report.saved, rewritten, requests):
            return result
        reason = (
            f"not applied: saving {report.saved:,} tokens on about {requests} requests does not "
            f"pay for re-writing {rewritten:,} cached tokens"
        )
        details = {**report.details, "rewritten": rewritten, "requests": requests}
        return unchanged(self.name, messages, reason, report.tokens_before, details)

    def _against_rival(
        self,
        messages: Sequence[Message],
        ctx: CompactionContext,
        result: CompactionResult,
        rewritten: int,
        growth: int,
    ) -> CompactionResult:
        """At the autocompact threshold: the edit, unless the summary's stretch costs less."""
        rival = self.rival(messages, ctx) if self.rival is not None else None
        report = result.report
        threshold = ctx.policy.autocompact_threshold
        own = interval(report.tokens_after, rewritten, threshold, growth, self.cache)
        if rival is None or own.cost <= rival.cost * (1 + self.cache.summary_margin):
            return result
        reason = (
            f"not applied: a summary leads to {rival.requests} requests at {rival.cost:,.0f} "
            f"input-token equivalents each, this edit to {own.requests} at {own.cost:,.0f}"
        )
        details = {**report.details, "rewritten": rewritten, "requests": own.requests}
        return unchanged(self.name, messages, reason, report.tokens_before, details)
