"""The cache-aware ladder's summary cut (``compaction.headroom``), its rival check at the
autocompact threshold, and the byte-stable prefix between compactions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings

from contextwarden.compaction import CompactionContext, MicroCompact, Summarize
from contextwarden.compaction.cache import CacheAware, CachePolicy, interval
from contextwarden.compaction.cuts import CutPlan, cut_candidates, plan_cut
from contextwarden.compaction.headroom import HeadroomCut, expected_lead
from contextwarden.cost import AnthropicCache
from contextwarden.cost.cache import Request
from contextwarden.cost.requests import view_request
from contextwarden.errors import CompactionError
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.model import Message, MessageMeta, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.policy import ContextPolicy
from contextwarden.rules import validate
from contextwarden.wire.anthropic import messages_to_wire
from tests.strategies import (
    FailingSummarizer,
    FakeSummarizer,
    conversations,
    history_of,
    tool_turns,
)

CACHE = CachePolicy()
TIGHT = ContextPolicy(context_window=20_000, summary_keep_tokens=4_000)
"""Autocompact at 16,700 tokens; the plain ladder keeps up to 4,000 tokens after a summary."""


def turns(count: int, words: int = 180) -> list[Message]:
    """A first request, then ``count`` exchanges of plain text (about 2 x ``words`` tokens each)."""
    out = [Message.user("Please build the parser")]
    for n in range(count):
        out.append(Message.assistant(f"a{n} " + "step " * words))
        out.append(Message.user(f"u{n} " + "more " * words))
    return out


def _plan(messages: Sequence[Message], policy: ContextPolicy) -> tuple[CutPlan, int]:
    """The summary's cut plan and the cut the plain ladder takes."""
    plan = plan_cut("summarize", messages, CompactionContext(policy=policy), "summarize")
    assert isinstance(plan, CutPlan)
    keep = policy.keep_tokens
    return plan, next((c for c in plan.cuts if plan.suffix[c] <= keep), plan.cuts[-1])


def test_the_stretch_costs_more_per_request_the_more_it_starts_with() -> None:
    costs = [
        interval(start, start, 30_000, 500, CACHE).cost for start in range(2_000, 30_000, 2_000)
    ]
    assert costs == sorted(costs) and len(set(costs)) == len(costs)
    assert interval(10_000, 10_000, 30_000, 500, CACHE).requests == 40  # the horizon
    assert interval(29_900, 29_900, 30_000, 500, CACHE).requests == 1
    assert interval(31_000, 31_000, 30_000, 500, CACHE).requests == 1


def test_little_head_room_the_cut_keeps_less_and_the_next_summary_comes_later() -> None:
    messages = turns(40)
    plan, plain = _plan(messages, TIGHT)
    chooser = HeadroomCut(CACHE, summary_tokens=200)
    cut, stretch = chooser.choose(messages, plan, plain)
    assert cut in plan.cuts and cut > plain
    assert plan.suffix[cut] >= CACHE.min_keep_ratio * TIGHT.keep_tokens  # the retention floor
    lead = expected_lead(messages, plan.context, 200)
    plain_stretch = chooser.costs(messages, plan, plain, lead)[plain]
    assert stretch.requests > plain_stretch.requests and stretch.cost < plain_stretch.cost

    summary = FakeSummarizer("what happened")
    ctx = CompactionContext(policy=TIGHT)
    cached = Summarize(summary, choose=chooser)(messages, ctx)
    ordinary = Summarize(summary)(messages, CompactionContext(policy=TIGHT))
    assert cached.report.details["cut"] == cut and ordinary.report.details["cut"] == plain
    assert validate(cached.messages) == []
    assert cached.report.tokens_after < ordinary.report.tokens_after < TIGHT.autocompact_threshold


def test_with_head_room_to_spare_the_cut_is_the_plain_one() -> None:
    """200,000 tokens and a 30,000-token summary: what the plain cut keeps costs little next to
    what every request reads anyway, so the cut keeps it."""
    messages = turns(40)
    policy = ContextPolicy(summary_keep_tokens=4_000)
    plan, plain = _plan(messages, policy)
    assert HeadroomCut(CACHE, summary_tokens=30_000)(messages, plan, plain) == plain
    assert HeadroomCut(CACHE, summary_tokens=200)(messages, plan, plain) > plain


def test_a_chooser_must_return_a_safe_cut() -> None:
    messages = turns(10)
    rung = Summarize(FakeSummarizer("s"), keep_tokens=500, choose=lambda m, p, c: c - 1 + 100)
    with pytest.raises(CompactionError, match="not one of the safe cuts"):
        rung(messages, CompactionContext(policy=TIGHT))


@settings(max_examples=60, deadline=None)
@given(conversations(max_turns=8))
def test_the_chosen_cut_is_safe_and_never_keeps_more_than_the_plain_one(
    messages: list[Message],
) -> None:
    policy = ContextPolicy(context_window=3_000, summary_keep_tokens=600)
    summary = FakeSummarizer("s")
    cached = Summarize(summary, choose=HeadroomCut(CACHE))(
        messages, CompactionContext(policy=policy)
    )
    ordinary = Summarize(summary)(messages, CompactionContext(policy=policy))
    assert cached.applied == ordinary.applied
    if not cached.applied:
        return
    details = cached.report.details
    assert details["cut"] in cut_candidates(messages)
    assert details["cut"] >= details["plain_cut"] == ordinary.report.details["cut"]
    assert validate(cached.messages) == []
    assert cached.report.tokens_after <= ordinary.report.tokens_after


def _after_summary(manager: ContextManager, messages: Sequence[Message]) -> ConversationHistory:
    history = history_of(messages)
    assert "summarize" in manager.prepare(history).applied
    return history


def test_the_plain_ladder_keeps_its_cut_and_the_cache_aware_one_keeps_less() -> None:
    messages = turns(50)
    plain = _after_summary(ContextManager(TIGHT, summarizer=FakeSummarizer("s")), messages)
    direct = Summarize(FakeSummarizer("s"))(messages, CompactionContext(policy=TIGHT))
    assert plain.messages[1:] == direct.messages[1:]  # the same kept tail as the rung alone
    cached = _after_summary(
        ContextManager(TIGHT, summarizer=FakeSummarizer("s"), cache=CACHE), messages
    )
    assert len(cached.messages) < len(plain.messages)
    assert cached.estimate_tokens() < plain.estimate_tokens()


def _near_threshold() -> list[Message]:
    """Tool turns whose context is past the autocompact threshold of TIGHT but inside its
    effective window (so only the ladder's own rungs run, not the last resort), mostly old
    results."""
    messages = tool_turns(20, size=3_500)  # v9 heuristic: 21 of 4,000 now pass the window
    total = CompactionContext(policy=TIGHT).total_before(messages)
    assert TIGHT.autocompact_threshold <= total <= TIGHT.effective_window
    return messages


def test_at_the_threshold_an_edit_yields_to_a_summary_that_costs_less_per_request() -> None:
    messages = _near_threshold()
    ctx = CompactionContext(policy=TIGHT)
    inner = MicroCompact(keep_recent=16, min_saving=0)
    assert CacheAware(inner, CACHE)(messages, ctx).applied  # no rival: applied regardless
    rival = HeadroomCut(CACHE, summary_tokens=200).stretch
    result = CacheAware(inner, CACHE, rival=rival)(messages, CompactionContext(policy=TIGHT))
    assert not result.applied and "a summary leads to" in result.report.description
    # an edit that leaves far more room than a summary would is still applied
    wide = CacheAware(MicroCompact(keep_recent=1, min_saving=0), CACHE, rival=lambda m, c: None)
    assert wide(messages, CompactionContext(policy=TIGHT)).applied


def test_a_manager_planning_for_the_cache_summarizes_instead_of_clearing_near_the_threshold() -> (
    None
):
    policy = ContextPolicy(context_window=20_000, keep_recent_tool_results=16)
    cached = ContextManager(policy, summarizer=FakeSummarizer("s"), cache=CACHE)
    plain = ContextManager(policy, summarizer=FakeSummarizer("s"))
    assert cached.prepare(history_of(_near_threshold())).applied == ("summarize",)
    assert plain.prepare(history_of(_near_threshold())).applied[0] == "microcompact"


def test_an_edit_within_the_summary_margin_is_applied() -> None:
    """Clearing all but 8 results leaves a stretch dearer per request than a summary's, but by
    less than the default margin (3x); with no margin the summary wins."""
    messages = _near_threshold()
    rival = HeadroomCut(CACHE, summary_tokens=200).stretch
    inner = MicroCompact(keep_recent=8, min_saving=0)
    ctx = CompactionContext(policy=TIGHT)
    assert CacheAware(inner, CACHE, rival=rival)(messages, ctx).applied
    strict = CachePolicy(summary_margin=0.0)
    result = CacheAware(inner, strict, rival=rival)(messages, CompactionContext(policy=TIGHT))
    assert not result.applied


def test_with_the_breaker_open_the_edit_is_not_declined_for_a_summary() -> None:
    """A summary cannot run once the breaker is open: the clearing must not wait for one."""
    policy = ContextPolicy(
        context_window=20_000, keep_recent_tool_results=16, max_consecutive_failures=1
    )
    manager = ContextManager(policy, summarizer=FailingSummarizer(), cache=CACHE)
    history = history_of(_near_threshold())
    assert manager.prepare(history).applied == ()  # declined for a summary, which failed
    assert manager.breaker_open(history)
    _add(history, tool_turns(23, size=4_000)[-2:])
    assert manager.prepare(history).applied == ("microcompact",)


# ---------------------------------------------------------------------- byte-stable prefix
def _read_turn(n: int, path: str, stamp: float) -> list[Message]:
    use = ToolUseBlock(f"toolu_{n}", "Read", {"file_path": path})
    meta = MessageMeta(timestamp=stamp)
    body = f"contents {n}\n" + "line of code\n" * 120
    return [
        Message("assistant", (TextBlock(f"reading {path}"), use), meta),
        Message("user", (ToolResultBlock(f"toolu_{n}", body),), meta),
    ]


def test_between_compactions_the_summary_and_kept_messages_are_sent_byte_for_byte(
    tmp_path: Path,
) -> None:
    """After a summary (with a re-read file) the prefix is the same objects and the same wire
    bytes on every request until the next compaction, even when the file changes on disk and
    time passes; the cost model bills it as a cache read."""
    (tmp_path / "a.py").write_text("print('a')\n", encoding="utf-8")
    start = 1_700_000_000.0
    now = [start]
    policy = ContextPolicy(context_window=12_000, summary_keep_tokens=1_500)
    manager = ContextManager(
        policy, FakeSummarizer("s"), workspace=tmp_path, clock=lambda: now[0], cache=CACHE
    )
    history = history_of([Message.user("work on a.py")])
    n = 0
    while "summarize" not in manager.prepare(history).applied:
        _add(history, _read_turn(n, "a.py" if n == 0 else f"c{n}.py", start + 30 * n))
        now[0], n = start + 30 * n, n + 1
    assert any(
        "Contents of a.py" in b.text
        for b in history.messages[0].content
        if isinstance(b, TextBlock)
    )
    cache = AnthropicCache(min_cacheable_tokens=1)
    sent = _send(cache, history, now[0])
    for step in range(4):
        (tmp_path / "a.py").write_text(f"print('changed {step}')\n", encoding="utf-8")
        _add(history, _read_turn(n, "b.py", now[0] + 30))
        now[0], n = now[0] + 30, n + 1
        assert manager.prepare(history).applied == ()
        view = history.messages
        assert all(a is b for a, b in zip(sent, view, strict=False))
        assert json.dumps(messages_to_wire(view[: len(sent)])) == json.dumps(messages_to_wire(sent))
        usage = cache.send(_request(history, now[0]))
        assert usage.cache_read >= sum(history.message_tokens(i) for i in range(len(sent)))
        sent = view


def _request(history: ConversationHistory, now: float) -> Request:
    counts = [history.message_tokens(i) for i in range(len(history.messages))]
    return view_request(now, 0, history.messages, counts)


def _send(cache: AnthropicCache, history: ConversationHistory, now: float) -> tuple[Message, ...]:
    cache.send(_request(history, now))
    return history.messages


def _add(history: ConversationHistory, messages: Sequence[Message]) -> None:
    for message in messages:
        history.add(message)
