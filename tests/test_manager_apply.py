"""ContextManager's public seams: ``apply`` of one strategy, the breaker across a restart, the
summary built from what was added (not from markers), and counts handed to the ledger."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence

import pytest

from contextwarden.compaction import CompactionContext, CompactionResult, MicroCompact, Truncate
from contextwarden.compaction.base import StrategyReport
from contextwarden.compaction.breaker import BREAKER_KEY
from contextwarden.errors import CompactionError
from contextwarden.events import BreakerOpened, Event, RungEvent
from contextwarden.history import ConversationHistory
from contextwarden.log import CompactionBoundary, MetadataSet
from contextwarden.manager import ContextManager
from contextwarden.model import Message, TextBlock, ToolResultBlock
from contextwarden.policy import CLEARED_MARKER, ContextPolicy
from contextwarden.rules import validate
from tests.strategies import CharCounter, FailingSummarizer, FakeSummarizer, history_of, tool_turns
from tests.test_manager import sized, snapshot


def restarted(history: ConversationHistory) -> ConversationHistory:
    """The history as a process that resumes it from its stored log sees it."""
    return ConversationHistory.from_log(history.log, counter=history.counter)


# ------------------------------------------------------------------ apply
def test_apply_runs_one_strategy_atomically_with_event_boundary_and_cleanup() -> None:
    manager = ContextManager()
    events: list[Event] = []
    cleanups: list[int] = []
    manager.on_event(events.append)
    manager.hooks.on_cleanup(lambda h: cleanups.append(len(h)))
    history = history_of(tool_turns(30, size=1_000))
    before = history.estimate_tokens()
    report = manager.apply(history, Truncate(max_tokens=2_000), trigger="by hand")
    assert report.applied and report.name == "truncate"
    assert report.tokens_before == before and history.estimate_tokens() == report.tokens_after
    assert validate(history.messages) == [] and len(history) == report.messages_after
    boundary = history.log[-1]
    assert isinstance(boundary, CompactionBoundary)
    assert (boundary.strategy, boundary.trigger, boundary.view) == (
        "truncate",
        "by hand",
        history.messages,
    )
    (event,) = events
    assert isinstance(event, RungEvent) and (event.name, event.trigger) == ("truncate", "by hand")
    assert cleanups == [len(history)]


def test_apply_reports_a_strategy_that_changes_nothing() -> None:
    history = history_of(tool_turns(2))
    before = snapshot(history)
    report = ContextManager().apply(history, Truncate(10), trigger="t")
    assert not report.applied and "nothing to drop" in report.description
    assert snapshot(history) == before


class Broken:
    """A broken strategy: claims to apply what ``edit`` makes of the messages, and to save."""

    def __init__(self, name: str, edit: Callable[[Sequence[Message]], tuple[Message, ...]]) -> None:
        self.name, self.edit = name, edit

    def __call__(
        self, messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        after = self.edit(messages)
        report = StrategyReport(self.name, True, 10**9, 1, len(messages), len(after), "broken")
        return CompactionResult(after, report)


def rewired(messages: Sequence[Message]) -> tuple[Message, ...]:
    """Same number of messages, but one result answers a call that does not exist."""
    first = messages[2].tool_results[0]
    wrong = Message("user", (ToolResultBlock("toolu_elsewhere", first.content),))
    return (*messages[:2], wrong, *messages[3:])


def test_apply_refuses_an_invalid_view_and_leaves_the_history_as_it_was() -> None:
    history = history_of(tool_turns(4))
    before = snapshot(history)
    with pytest.raises(CompactionError, match="orphaning produced an invalid view"):
        orphaning = Broken("orphaning", lambda m: (m[0], *m[2:]))  # drops a call, keeps its result
        ContextManager().apply(history, orphaning, trigger="t")
    assert snapshot(history) == before


def test_apply_checks_in_place_edits_around_what_changed() -> None:
    history = history_of(tool_turns(4))
    before = snapshot(history)
    with pytest.raises(CompactionError, match="rewiring produced an invalid view"):
        ContextManager().apply(history, Broken("rewiring", rewired), trigger="t")
    assert snapshot(history) == before


def test_apply_runs_post_compact_hooks_for_a_summary() -> None:
    from contextwarden.compaction import Summarize

    manager = ContextManager()
    manager.hooks.post_compact(lambda result: "hook text")
    history = sized(170_000)
    report = manager.apply(history, Summarize(FakeSummarizer("s")), trigger="t")
    assert report.applied and report.details["hook_blocks"] == 1
    assert TextBlock("hook text") in history.messages[0].content


# ------------------------------------------------------------------ the breaker across a restart
def breaker_records(history: ConversationHistory) -> list[object]:
    return [e.value for e in history.log if isinstance(e, MetadataSet) and e.key == BREAKER_KEY]


def test_an_open_breaker_stays_open_in_a_history_resumed_from_its_log() -> None:
    history = sized(170_000)
    failing = ContextManager(summarizer=FailingSummarizer())
    for _ in range(3):
        failing.prepare(history)
    assert failing.breaker_open(history)
    assert history.metadata[BREAKER_KEY] == {"consecutive_failures": 3, "open": True}
    assert len(breaker_records(history)) == 3  # one record per change

    resumed = restarted(history)
    summarizer = FakeSummarizer()
    fresh = ContextManager(summarizer=summarizer)
    assert fresh.breaker_open(resumed) and fresh.consecutive_failures(resumed) == 3
    assert fresh.prepare(resumed).actions == ()  # over the threshold, but the breaker is open
    assert summarizer.calls == []

    fresh.compact(resumed)  # a manual compact resets it, and the reset is recorded too
    assert summarizer.calls and not fresh.breaker_open(resumed)
    again = restarted(resumed)
    assert not ContextManager().breaker_open(again)
    assert ContextManager().consecutive_failures(again) == 0


def test_the_failure_count_carries_over_a_restart() -> None:
    history = sized(170_000)
    failing = ContextManager(summarizer=FailingSummarizer())
    failing.prepare(history)
    failing.prepare(history)
    resumed = restarted(history)
    events: list[Event] = []
    fresh = ContextManager(summarizer=FailingSummarizer())
    fresh.on_event(events.append)
    assert fresh.consecutive_failures(resumed) == 2 and not fresh.breaker_open(resumed)
    fresh.prepare(resumed)  # the third failure in a row, across the restart
    assert fresh.breaker_open(resumed)
    assert [e.failures for e in events if isinstance(e, BreakerOpened)] == [3]


def test_a_malformed_breaker_record_is_ignored_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    history = sized(1_000)
    history.set_metadata(BREAKER_KEY, {"consecutive_failures": "three", "open": True})
    with caplog.at_level(logging.WARNING, logger="contextwarden"):
        assert not ContextManager().breaker_open(history)
    assert BREAKER_KEY in caplog.text and "starts closed" in caplog.text


# ------------------------------------------------------------------ summaries from what was added
def test_autocompact_summarizes_cleared_results_from_the_log() -> None:
    policy = ContextPolicy(context_window=30_000, summary_keep_tokens=500)
    summarizer = FakeSummarizer()
    manager = ContextManager(policy, summarizer=summarizer)
    history = history_of(tool_turns(30, size=2_700))
    assert manager.prepare(history).applied == ("microcompact",)
    assert sum(r.text == CLEARED_MARKER for m in history.messages for r in m.tool_results) == 27
    added = {r.tool_use_id: r for m in tool_turns(30, size=2_700) for r in m.tool_results}
    manager.compact(history)
    ((given, _),) = summarizer.calls
    seen = [r for m in given for r in m.tool_results]
    assert seen and all(r == added[r.tool_use_id] for r in seen)
    assert not any(CLEARED_MARKER in r.text for r in seen)


# ------------------------------------------------------------------ counts handed to the ledger
class CountingCounter(CharCounter):
    """CharCounter that remembers how often each message object was counted."""

    def __init__(self) -> None:
        self.counted: Counter[int] = Counter()

    def count_message(self, message: Message) -> int:
        self.counted[id(message)] += 1
        return super().count_message(message)


def test_the_ledger_takes_the_rungs_counts_instead_of_counting_again() -> None:
    counter = CountingCounter()
    history = history_of(tool_turns(10, size=2_000), counter=counter)
    counter.counted.clear()
    report = ContextManager().apply(history, MicroCompact(min_saving=0), trigger="t")
    assert report.applied
    changed = [m for m in history.messages if any(r.text == CLEARED_MARKER for r in m.tool_results)]
    assert len(changed) == 7
    assert all(counter.counted[id(m)] == 1 for m in changed)  # by the rung; not by the ledger
    assert history.estimate_tokens() == sum(
        CharCounter().count_message(m) for m in history.messages
    )
    assert [history.message_tokens(i) for i in range(len(history))] == [
        CharCounter().count_message(m) for m in history.messages
    ]


def test_replace_view_refuses_counts_that_do_not_match_the_view() -> None:
    history = history_of(tool_turns(2))
    before = snapshot(history)
    boundary = CompactionBoundary("x", "t", 0, 0, 0, history.messages)
    with pytest.raises(ValueError, match="2 counts for a view of 5 messages"):
        history._replace_view(boundary, [1, 2])
    assert snapshot(history) == before


def test_apply_refuses_a_growing_view_unless_it_is_the_agents_own_edit() -> None:
    manager = ContextManager()
    history = history_of(tool_turns(3, size=100))

    def longer_first_message(
        messages: Sequence[Message], context: CompactionContext | None = None
    ) -> CompactionResult:
        first = Message("user", (*messages[0].content, TextBlock("more " * 200)))
        new = (first, *messages[1:])
        before = sum(history.counter.count_message(m) for m in messages)
        after = sum(history.counter.count_message(m) for m in new)
        report = StrategyReport("edit", True, before, after, len(messages), len(new), "grew")
        return CompactionResult(new, report)

    with pytest.raises(CompactionError, match="did not reduce"):
        manager.apply(history, longer_first_message, trigger="test")
    assert "more more" not in str(history.messages[0])
    manager.apply(history, longer_first_message, trigger="test", grow=True)
    assert "more more" in str(history.messages[0])
    assert isinstance(history.log[-1], CompactionBoundary)
