"""Property tests: over generated valid conversations, every strategy and ``prepare()`` return a
history that validates, costs no more tokens, keeps the first user message, and keeps every
tool_use/tool_result pair whole or drops both."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextwarden.compaction import (
    CompactionContext,
    MicroCompact,
    NoOp,
    ObservationMask,
    Pipeline,
    Snip,
    Strategy,
    Summarize,
    ToolResultBudget,
    Truncate,
)
from contextwarden.compaction.cache import CachePolicy
from contextwarden.compaction.cuts import first_user_blocks
from contextwarden.manager import ContextManager
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy
from contextwarden.rules import latest_thinking_preserved, validate
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.strategies import FakeSummarizer, conversations, history_of

COUNTER = HeuristicCounter()
SMALL = ContextPolicy(
    context_window=8_000,
    max_result_chars={"Bash": 3_000},
    default_max_result_chars=5_000,
    max_line_chars=500,
    keep_recent_turns=2,
)
PROPERTY_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def strategies() -> list[Strategy]:
    return [
        NoOp(),
        ToolResultBudget(),
        Snip(),
        MicroCompact(min_saving=0),
        MicroCompact(keep_recent=1, min_saving=0),
        ObservationMask(keep_recent=2),
        Truncate(),
        Truncate(1, max_tokens=1_500),
        Summarize(FakeSummarizer(), keep_tokens=800),
        Pipeline(ToolResultBudget(), Snip(), MicroCompact(min_saving=0)),
    ]


def total(messages: Sequence[Message]) -> int:
    return sum(COUNTER.count_message(m) for m in messages)


def pairs_intact(before: Sequence[Message], after: Sequence[Message]) -> list[str]:
    """Tool ids whose use and result were separated (one kept, the other dropped)."""
    answered = {r.tool_use_id for m in before for r in m.tool_results}
    uses = {u.id for m in after for u in m.tool_uses}
    results = {r.tool_use_id for m in after for r in m.tool_results}
    return sorted((uses & answered) ^ results)


def check(before: list[Message], after: Sequence[Message]) -> None:
    assert validate(after) == []
    assert total(after) <= total(before)
    first = first_user_blocks(before)
    assert after[0].content[: len(first)] == first
    assert pairs_intact(before, after) == []
    assert latest_thinking_preserved(before, after)


@PROPERTY_SETTINGS
@given(conversations(), st.sampled_from(range(10)))
def test_every_strategy_keeps_the_invariants(messages: list[Message], pick: int) -> None:
    strategy = strategies()[pick]
    snapshot = list(messages)
    result = strategy(tuple(messages), CompactionContext(COUNTER, policy=SMALL))
    assert messages == snapshot and all(a is b for a, b in zip(messages, snapshot, strict=True))
    check(messages, result.messages)
    report = result.report
    assert report.tokens_after == total(result.messages), report
    assert report.tokens_before == total(messages)
    assert report.applied == (result.messages != tuple(messages))
    assert report.messages_after == len(result.messages)


@PROPERTY_SETTINGS
@given(conversations(max_turns=8), st.booleans())
def test_prepare_keeps_the_invariants(messages: list[Message], planned: bool) -> None:
    """Today's ladder and the one planned for a prompt cache (its own cut and rival check)."""
    history = history_of(messages)
    before = history.estimate_tokens()
    cache = CachePolicy() if planned else None
    manager = ContextManager(
        SMALL, summarizer=FakeSummarizer(), clock=lambda: 1_700_000_000.0, cache=cache
    )
    report = manager.prepare(history)
    check(messages, history.messages)
    assert history.estimate_tokens() <= before
    assert report.tokens_after == history.estimate_tokens()
    if not report.over_window:
        assert history.estimate_tokens() <= SMALL.effective_window
