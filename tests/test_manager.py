"""ContextManager: which rungs run when, the breaker, the recursion guard, atomicity, hooks."""

from __future__ import annotations

import logging

import pytest

from contextwarden.compaction.breaker import BREAKER_KEY
from contextwarden.errors import SummarizerError
from contextwarden.events import BreakerOpened, Event, RungEvent
from contextwarden.history import ConversationHistory
from contextwarden.log import MetadataSet
from contextwarden.manager import ContextManager
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock, thaw
from contextwarden.policy import CLEARED_MARKER, ContextPolicy
from contextwarden.rules import validate
from tests.strategies import CharCounter, FailingSummarizer, FakeSummarizer, history_of, tool_turns


def sized(total: int, count: int = 40) -> ConversationHistory:
    """A plain-text chat of ``count`` messages costing exactly ``total`` tokens (CharCounter)."""
    size, extra = divmod(total, count)
    messages = [
        Message("user" if n % 2 == 0 else "assistant", (TextBlock("x" * (size + (n < extra))),))
        for n in range(count)
    ]
    history = history_of(messages, counter=CharCounter())
    assert history.estimate_tokens() == total
    return history


def snapshot(history: ConversationHistory, *, breaker: bool = True) -> tuple[object, ...]:
    """Everything observable about a history, down to the identity of each message and entry
    (``breaker=False``: except the circuit breaker's records, which a failure adds)."""
    messages, log = history.messages, history.log
    if not breaker:
        log = tuple(e for e in log if not _breaker_entry(e))
    identities = tuple(map(id, messages)), tuple(map(id, log))
    metas = tuple(m.meta for m in messages)
    return messages, log, identities, metas, history.estimate_tokens(), len(history)


def _breaker_entry(entry: object) -> bool:
    return isinstance(entry, MetadataSet) and entry.key == BREAKER_KEY


def breaker_records(history: ConversationHistory) -> list[object]:
    return [thaw(e.value) for e in history.log if isinstance(e, MetadataSet) and _breaker_entry(e)]


def test_autocompact_threshold_is_167000_with_defaults() -> None:
    assert ContextManager().policy.autocompact_threshold == 167_000
    below, at = sized(166_999, count=39), sized(167_000, count=39)
    manager = ContextManager(summarizer=FakeSummarizer())
    assert manager.prepare(below).actions == ()
    report = manager.prepare(at)
    assert report.applied == ("summarize",)
    assert report.tokens_before == 167_000 and report.tokens_after < 167_000
    assert validate(at.messages) == []
    assert at.messages[0].content[0] == sized(167_000, count=39).messages[0].content[0]


def test_is_near_limit_above_80_percent_of_the_window() -> None:
    manager = ContextManager()
    assert not manager.is_near_limit(sized(160_000))
    assert manager.is_near_limit(sized(160_001))


def test_idle_trigger_after_60_minutes_with_a_fake_clock() -> None:
    start = 1_700_000_000.0
    messages = tool_turns(6, size=2_000, start=start)
    last_assistant = messages[-2].meta.timestamp
    assert last_assistant is not None
    now = [last_assistant + 59 * 60]
    events: list[Event] = []
    manager = ContextManager(clock=lambda: now[0])
    manager.on_event(events.append)
    history = history_of(messages)
    assert manager.prepare(history).actions == ()  # 59 minutes: the cache is still warm
    now[0] = last_assistant + 60 * 60
    report = manager.prepare(history)
    assert report.applied == ("microcompact",)
    cleared = [r for m in history.messages for r in m.tool_results if r.content == CLEARED_MARKER]
    assert len(cleared) == 3  # 6 results, the latest 3 kept; far below the 20,000 minimum saving
    assert [(e.name, e.trigger) for e in events if isinstance(e, RungEvent)] == [
        ("microcompact", "idle")
    ]
    assert manager.prepare(history).actions == ()  # once per idle period, not on every call


def test_threshold_microcompact_needs_the_minimum_saving() -> None:
    policy = ContextPolicy(context_window=30_000)  # microcompact from 16,200 tokens; saving 3,000
    manager = ContextManager(policy, summarizer=FakeSummarizer())
    history = history_of(tool_turns(30, size=2_500))
    report = manager.prepare(history)
    assert report.applied == ("microcompact",)
    assert report.actions[0].details["cleared"] == 27
    few = history_of(
        [*tool_turns(4, size=500), Message.assistant("x" * 20_000)], counter=CharCounter()
    )
    assert 16_200 < few.estimate_tokens() < 25_050
    assert manager.prepare(few).applied == ()  # over the threshold, but too little to clear


def test_breaker_opens_on_the_third_failure_and_stops_calling_the_summarizer() -> None:
    summarizer = FailingSummarizer()
    manager = ContextManager(summarizer=summarizer)
    events: list[Event] = []
    manager.on_event(events.append)
    history = sized(170_000)
    for _ in range(2):
        manager.prepare(history)
    assert not manager.breaker_open(history) and summarizer.calls == 2
    manager.prepare(history)
    assert manager.breaker_open(history) and summarizer.calls == 3
    assert [e for e in events if isinstance(e, BreakerOpened)] == [
        BreakerOpened(3, "test failure 3")
    ]
    failures = [e for e in events if isinstance(e, RungEvent)]
    assert [(e.name, e.applied, e.description) for e in failures] == [
        ("summarize", False, f"summarizer failed: test failure {n}") for n in (1, 2, 3)
    ]
    report = manager.prepare(history)  # a 4th time: autocompact is not attempted
    assert summarizer.calls == 3 and report.actions == ()
    assert manager.consecutive_failures(history) == 3


def test_open_breaker_falls_back_to_truncation_over_the_window() -> None:
    manager = ContextManager(summarizer=FailingSummarizer())
    history = sized(170_000, count=60)
    for _ in range(3):
        manager.prepare(history)
    history.add(Message.user("y" * 15_000))  # now 185,000: over the 180,000 effective window
    report = manager.prepare(history)
    assert report.applied == ("truncate",) and not report.over_window
    assert history.estimate_tokens() <= 180_000 and validate(history.messages) == []


def test_success_and_manual_compact_reset_the_breaker() -> None:
    class FlakySummarizer(FakeSummarizer):
        def __init__(self) -> None:
            super().__init__("recovered")
            self.failures_left = 3

        def summarize(self, messages, *, instructions=None):  # type: ignore[no-untyped-def]
            if self.failures_left:
                self.failures_left -= 1
                raise SummarizerError("flaky")
            return super().summarize(messages, instructions=instructions)

    manager = ContextManager(summarizer=FlakySummarizer())
    history = sized(170_000)
    for _ in range(3):
        manager.prepare(history)
    assert manager.breaker_open(history)
    report = manager.compact(history, instructions="keep the API design decisions")
    assert report.applied[-1] == "summarize"
    assert not manager.breaker_open(history) and manager.consecutive_failures(history) == 0


@pytest.mark.parametrize("source", ["compact", "session_memory"])
def test_recursion_guard_never_compacts(source: str) -> None:
    summarizer = FakeSummarizer()
    history = sized(190_000)
    before = snapshot(history)
    report = ContextManager(summarizer=summarizer).prepare(history, query_source=source)
    assert report.actions == () and report.skipped is not None and source in report.skipped
    assert snapshot(history) == before and summarizer.calls == []


def test_failing_summarizer_leaves_the_history_byte_identical() -> None:
    history = sized(170_000)
    before = snapshot(history)
    manager = ContextManager(summarizer=FailingSummarizer())
    report = manager.prepare(history)
    assert report.actions[0].description == "summarizer failed: test failure 1"
    assert snapshot(history, breaker=False) == before
    with pytest.raises(SummarizerError):
        manager.compact(history)
    assert snapshot(history, breaker=False) == before
    # The only entries added: the breaker's count (compact() reset it, then counted a failure).
    assert breaker_records(history) == [
        {"consecutive_failures": 1, "open": False},
        {"consecutive_failures": 0, "open": False},
        {"consecutive_failures": 1, "open": False},
    ]


def test_failing_post_compact_hook_leaves_the_history_unchanged() -> None:
    history = sized(170_000)
    before = snapshot(history, breaker=False)
    manager = ContextManager(summarizer=FakeSummarizer())

    @manager.hooks.post_compact
    def broken(result: object) -> str:
        raise RuntimeError("hook bug")

    with pytest.raises(RuntimeError, match="hook bug"):
        manager.prepare(history)
    assert snapshot(history, breaker=False) == before  # only the breaker's count was added
    assert manager.consecutive_failures(history) == 1


def test_compaction_drops_the_stale_usage_anchor() -> None:
    history = sized(100_000)
    manager = ContextManager(summarizer=FakeSummarizer())
    manager.record_usage(history, {"input_tokens": 150_000, "cache_read_input_tokens": 20_000})
    assert history.estimate_tokens() == 170_000  # the anchored, real figure
    report = manager.prepare(history)
    assert report.applied == ("summarize",) and report.tokens_before == 170_000
    recount = sum(CharCounter().count_message(m) for m in history.messages)
    assert history.estimate_tokens() == recount < 100_000


def test_events_and_debug_log_lines(caplog: pytest.LogCaptureFixture) -> None:
    events: list[Event] = []
    manager = ContextManager(summarizer=FakeSummarizer())
    manager.on_event(events.append)
    history = sized(170_000)
    with caplog.at_level(logging.DEBUG, logger="contextwarden"):
        manager.prepare(history)
    (event,) = events
    assert isinstance(event, RungEvent)
    assert (event.name, event.trigger, event.applied) == ("summarize", "auto", True)
    assert (event.tokens_before, event.messages_before) == (170_000, 40)
    assert event.tokens_after == history.estimate_tokens() and event.seconds >= 0
    line = (
        f"summarize (auto): before 170000 tokens, 40 messages / after {event.tokens_after} "
        f"tokens, {event.messages_after} messages"
    )
    assert line in caplog.text


def test_hooks_add_instructions_and_blocks_and_cleanup_runs() -> None:
    summarizer = FakeSummarizer("the summary")
    manager = ContextManager(summarizer=summarizer)
    cleanups: list[int] = []
    manager.hooks.pre_compact(lambda history, trigger: f"focus on tests ({trigger})")
    manager.hooks.post_compact(lambda result: ["post hook text", TextBlock("second block")])
    manager.hooks.on_cleanup(lambda history: cleanups.append(len(history)))
    history = sized(170_000)
    manager.compact(history, instructions="keep the API design decisions")
    assert summarizer.calls[0][1] == "keep the API design decisions\n\nfocus on tests (manual)"
    texts = [b.text for b in history.messages[0].content if isinstance(b, TextBlock)]
    assert "post hook text" in texts and "second block" in texts
    assert cleanups == [len(history)]


def test_new_results_are_budgeted_incrementally() -> None:
    manager = ContextManager()
    history = history_of(tool_turns(3, size=100))
    assert manager.prepare(history).actions == ()
    history.add(Message.assistant([ToolUseBlock("toolu_big", "Bash", {"command": "make"})]))
    history.add(Message("user", (ToolResultBlock("toolu_big", "log line\n" * 20_000),)))
    report = manager.prepare(history)
    assert report.applied == ("tool_result_budget",)
    assert len(history.messages[-1].tool_results[0].text) <= 30_000
    assert manager.prepare(history).actions == ()


def test_merge_mode_continuation_merged_into_the_last_message_is_checked() -> None:
    history = ConversationHistory(mode="merge")
    history.add(Message.user("go"))
    uses = [ToolUseBlock(f"t{n}", "Bash", {"command": "make"}) for n in range(2)]
    history.add(Message.assistant(uses))
    history.add(Message("user", (ToolResultBlock("t0", "ok"),)))
    manager = ContextManager()
    assert manager.prepare(history).actions == ()
    history.add(Message("user", (ToolResultBlock("t1", "x\n" * 40_000),)))  # merged into the last
    assert len(history) == 3
    report = manager.prepare(history)
    assert report.applied == ("tool_result_budget",)
    assert len(history.messages[-1].tool_results[1].text) <= 30_000


def test_nothing_to_do_reports_no_actions_and_no_changes() -> None:
    history = history_of(tool_turns(3))
    before = snapshot(history)
    report = ContextManager().prepare(history)
    assert report.actions == () and not report.compacted and not report.over_window
    assert snapshot(history) == before
    assert report.messages_before == report.messages_after == len(history)


def test_any_exception_inside_a_compaction_counts_toward_the_breaker() -> None:
    """An exception that is not a SummarizerError (here a post-compact hook's bug; before, a NUL
    byte in a re-attached path) still propagates, but the breaker counts it, so a failure that
    repeats on every request stops being attempted after three."""
    summarizer = FakeSummarizer()
    manager = ContextManager(summarizer=summarizer)
    history = sized(170_000)

    @manager.hooks.post_compact
    def broken(result: object) -> str:
        raise ValueError("embedded null byte")

    for n in (1, 2, 3):
        with pytest.raises(ValueError, match="embedded null byte"):
            manager.prepare(history)
        assert manager.consecutive_failures(history) == n
    assert manager.breaker_open(history)
    report = manager.prepare(history)  # the breaker is open: autocompact is not attempted
    assert "summarize" not in [a.name for a in report.actions]
