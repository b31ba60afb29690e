"""Autocompact's back-off: a summary that would not save tokens is no summarizer failure.

A summary is declined when it would not make the context smaller (``compaction.base.finish``):
the part before the cut is smaller than the summary, as when a system prompt takes most of the
window (blind set 20's StarCar session: 32,800 of 40,000 tokens). Claude Code's own breaker
counts only failed compaction calls; here the breaker counts summarizer errors as before, and a
declined summary makes autocompact wait until the conversation has grown by
``policy.retry_after_tokens`` (or first goes over the window, before truncation drops anything).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from contextwarden.compaction.breaker import BACKOFF_KEY, BREAKER_KEY, Backoff
from contextwarden.errors import SummarizerError
from contextwarden.events import AutocompactBackedOff, BreakerOpened, Event
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy
from contextwarden.rules import validate
from contextwarden.stores import SqliteStore
from contextwarden.summarizers.base import Summary
from tests.strategies import CharCounter, FakeSummarizer
from tests.test_manager import sized

POLICY = ContextPolicy(retry_after_tokens=4_000)
"""200,000-token window: autocompact at 167,000, the effective window 180,000."""


class BloatedSummarizer:
    """Summaries larger than anything they replace (a verbatim quote of a huge first prompt);
    ``script``: per call, ``"fail"`` raises as a real summarizer's error does."""

    def __init__(self, *script: str) -> None:
        self.script = list(script)
        self.calls = 0

    def summarize(self, messages: Sequence[Message], *, instructions: str | None = None) -> Summary:
        self.calls += 1
        if self.script and self.script.pop(0) == "fail":
            raise SummarizerError(f"test failure {self.calls}")
        return Summary("s" * 200_000)


def grow(history: ConversationHistory, tokens: int) -> None:
    """One more exchange of ``tokens`` (CharCounter: a character is a token)."""
    history.add(Message.user("u" * (tokens // 2)))
    history.add(Message.assistant("a" * (tokens - tokens // 2)))


def test_a_summary_that_never_saves_is_retried_after_a_wait_that_doubles_each_time() -> None:
    summarizer = BloatedSummarizer()
    manager = ContextManager(ContextPolicy(retry_after_tokens=2_000), summarizer=summarizer)
    events: list[Event] = []
    manager.on_event(events.append)
    history = sized(170_000, count=60)
    calls = []
    for _ in range(9):  # 170,000 → 178,000 in steps of 1,000: under the effective window
        report = manager.prepare(history)
        calls.append(summarizer.calls)
        assert not report.over_window
        grow(history, 1_000)
    assert calls == [1, 1, 2, 2, 2, 2, 3, 3, 3]  # at 170,000, 172,000 and 176,000
    assert manager.backing_off(history) and not manager.breaker_open(history)
    assert manager.consecutive_failures(history) == 0 and BREAKER_KEY not in history.metadata
    assert not any(isinstance(e, BreakerOpened) for e in events)
    backoffs = [e for e in events if isinstance(e, AutocompactBackedOff)]
    assert [(e.tokens, e.retry_after) for e in backoffs] == [
        (170_000, 2_000),
        (172_000, 4_000),
        (176_000, 8_000),
    ]
    assert "would not save tokens" in backoffs[0].reason


def test_the_doubled_wait_never_exceeds_the_window() -> None:
    backoff = Backoff(declined_at=0, declines=40)
    assert backoff.wait(2_000, 180_000) == 180_000
    assert Backoff(declined_at=0, declines=1).wait(2_000, 180_000) == 2_000


def test_over_the_window_a_summary_is_tried_once_before_truncation_then_the_window_holds() -> None:
    """Truncation drops what a summary keeps, so the first request over the window after a
    decline under it tries the summary again; declined there too, truncation keeps every
    request inside the window, and the summarizer waits for growth again (truncation keeping
    every turn that fits, so the context stays over the autocompact threshold)."""
    summarizer = BloatedSummarizer()
    policy = ContextPolicy(retry_after_tokens=4_000, keep_recent_turns=100)
    manager = ContextManager(policy, summarizer=summarizer)
    history = sized(178_000, count=60)
    manager.prepare(history)
    assert summarizer.calls == 1
    grow(history, 3_000)  # 181,000: over the 180,000 effective window, 3,000 of growth
    report = manager.prepare(history)
    assert summarizer.calls == 2 and report.applied == ("truncate",) and not report.over_window
    calls = []
    for _ in range(8):  # growth counts what truncation removed: 1,000 a request
        grow(history, 1_000)
        manager.prepare(history)
        calls.append(summarizer.calls)
        assert history.estimate_tokens() <= 180_000 and validate(history.messages) == []
    # the second decline in a row waits twice as long: 8,000 tokens of growth
    assert calls == [2] * 7 + [3] and not manager.breaker_open(history)


def test_summarizer_errors_still_open_the_breaker_after_three_and_a_decline_is_not_one() -> None:
    """Fail, decline, fail: two failures (the baseline counted three and opened the breaker);
    the third error opens it, and autocompact stops calling the summarizer."""
    summarizer = BloatedSummarizer("fail", "ok", "fail", "fail")
    manager = ContextManager(POLICY, summarizer=summarizer)
    events: list[Event] = []
    manager.on_event(events.append)
    history = sized(170_000, count=60)
    manager.prepare(history)  # error 1
    manager.prepare(history)  # declined: backs off, not counted
    assert manager.consecutive_failures(history) == 1 and manager.backing_off(history)
    grow(history, 4_000)
    manager.prepare(history)  # error 2
    assert manager.consecutive_failures(history) == 2 and not manager.breaker_open(history)
    manager.prepare(history)  # error 3: a failure does not start a back-off
    assert manager.breaker_open(history) and summarizer.calls == 4
    assert [e for e in events if isinstance(e, BreakerOpened)] == [
        BreakerOpened(3, "test failure 4")
    ]
    grow(history, 8_000)
    manager.prepare(history)
    assert summarizer.calls == 4


def test_an_applied_summary_or_a_manual_compact_ends_the_back_off() -> None:
    bloated = BloatedSummarizer()
    history = sized(170_000, count=60)
    ContextManager(POLICY, summarizer=bloated).prepare(history)
    assert history.metadata[BACKOFF_KEY] == {"declined_at": 170_000, "removed": 0, "declines": 1}
    honest = FakeSummarizer()
    manager = ContextManager(POLICY, summarizer=honest)
    assert manager.backing_off(history)
    manager.compact(history)  # by hand: whatever the back-off
    assert honest.calls and not manager.backing_off(history)
    assert history.metadata[BACKOFF_KEY] is None


def test_the_back_off_survives_a_sqlite_store_round_trip(tmp_path: Path) -> None:
    path, counter = tmp_path / "s.sqlite3", CharCounter()
    store = SqliteStore(path)
    history = store.open("s1", counter=counter)
    for message in sized(170_000, count=60).messages:
        history.add(message)
    ContextManager(POLICY, summarizer=BloatedSummarizer()).prepare(history)
    grow(history, 3_000)
    store.close()

    store = SqliteStore(path)
    resumed = store.open("s1", counter=counter)
    summarizer = BloatedSummarizer()
    fresh = ContextManager(POLICY, summarizer=summarizer)
    assert fresh.backing_off(resumed) and resumed.estimate_tokens() == 173_000
    fresh.prepare(resumed)
    assert summarizer.calls == 0  # 3,000 of the 4,000 tokens of growth, across the restart
    grow(resumed, 1_000)
    fresh.prepare(resumed)
    assert summarizer.calls == 1 and not fresh.breaker_open(resumed)
    store.close()


def test_a_malformed_back_off_record_is_ignored() -> None:
    history = sized(170_000, count=60)
    history.set_metadata(BACKOFF_KEY, {"declined_at": "soon"})
    summarizer = FakeSummarizer()
    manager = ContextManager(POLICY, summarizer=summarizer)
    assert not manager.backing_off(history)
    assert manager.prepare(history).applied == ("summarize",)
