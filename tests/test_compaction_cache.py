"""Cache-aware compaction: an edit of old messages is applied only when it pays for the cache
re-write it causes, or when the cache has gone cold anyway."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings

from contextwarden.compaction import CompactionContext, MicroCompact
from contextwarden.compaction.cache import CacheAware, CachePolicy, first_changed
from contextwarden.cost import AnthropicCache, default_prices
from contextwarden.cost.requests import view_request
from contextwarden.events import Event, RungEvent
from contextwarden.manager import ContextManager
from contextwarden.model import Message
from contextwarden.policy import CLEARED_MARKER, ContextPolicy
from tests.strategies import conversations, history_of, tool_turns

CACHE = CachePolicy()


def _skewed() -> list[Message]:
    """Eight tool turns whose two oldest results are small and the later ones large: clearing
    the old ones saves little and re-writes nearly everything after them."""
    messages = tool_turns(8, size=6_000)
    for i in (2, 4):
        (result,) = messages[i].tool_results
        messages[i] = replace(messages[i], content=(replace(result, content="small " * 60),))
    return messages


def test_pays_weighs_reads_saved_against_the_rewrite() -> None:
    # saving 1,000 read on 20 requests = 2,000 input-price tokens; re-writing 1,000 costs 1,150
    assert CACHE.pays(1_000, 1_000, 20)
    assert not CACHE.pays(1_000, 20_000, 20)
    assert not CACHE.pays(1_000, 1_000, 0)
    assert CACHE.pays(1_000, 1_000, 10**6) == CACHE.pays(1_000, 1_000, CACHE.horizon_requests)
    with pytest.raises(ValueError, match="read_ratio < write_ratio"):
        CachePolicy(read_ratio=2.0)


def test_first_changed_is_the_first_message_not_shared() -> None:
    messages = tool_turns(3)
    edited = MicroCompact(keep_recent=1, min_saving=0)(messages).messages
    assert first_changed(messages, edited) == 2  # the first result answers message 1
    assert first_changed(messages, messages) is None
    assert first_changed(messages, messages[:-1]) == len(messages) - 1


def _context(window: int) -> CompactionContext:
    return CompactionContext(policy=ContextPolicy(context_window=window))


def test_a_small_saving_that_rewrites_much_is_not_applied() -> None:
    messages = _skewed()
    rung = CacheAware(MicroCompact(keep_recent=6, min_saving=0), CACHE)
    result = rung(messages, _context(200_000))
    assert not result.applied and "does not pay" in result.report.description
    assert result.report.details["rewritten"] > 10 * result.report.details["saving"]
    # the same edit alone is applied
    assert MicroCompact(keep_recent=6, min_saving=0)(messages, _context(200_000)).applied


def test_a_saving_read_on_many_requests_is_applied() -> None:
    messages = tool_turns(8, size=6_000)  # the old results are most of the context
    rung = CacheAware(MicroCompact(keep_recent=1, min_saving=0), CACHE)
    assert rung(messages, _context(1_000_000)).applied


def test_at_the_autocompact_threshold_the_edit_is_applied_regardless() -> None:
    messages = _skewed()
    policy = ContextPolicy(context_window=8_500)  # autocompact from 7,098 tokens
    ctx = CompactionContext(policy=policy)
    assert ctx.total_before(messages) >= policy.autocompact_threshold
    assert CacheAware(MicroCompact(keep_recent=6, min_saving=0), CACHE)(messages, ctx).applied


def test_a_cold_cache_clears_only_a_context_that_is_not_small() -> None:
    messages = tool_turns(6, size=2_000)
    cold = CacheAware(MicroCompact(min_saving=0), CACHE, cold=True)
    small = cold(messages, _context(200_000))
    assert not small.applied and "still small" in small.report.description
    assert cold(messages, _context(8_000)).applied  # 2,670 tokens; half the threshold: 2,160


def test_a_manager_planning_for_the_cache_clears_when_it_goes_cold() -> None:
    start = 1_700_000_000.0
    messages = tool_turns(6, size=2_000, start=start)
    last = messages[-2].meta.timestamp
    assert last is not None
    now = [last + 4 * 60]
    events: list[Event] = []
    manager = ContextManager(ContextPolicy(context_window=8_000), clock=lambda: now[0], cache=CACHE)
    manager.on_event(events.append)
    history = history_of(messages)
    assert manager.prepare(history).actions == ()  # 4 minutes: the 5-minute cache is warm
    now[0] = last + 5 * 60
    assert manager.prepare(history).applied == ("microcompact",)
    cleared = [r for m in history.messages for r in m.tool_results if r.content == CLEARED_MARKER]
    assert len(cleared) == 3
    assert [(e.name, e.trigger) for e in events if isinstance(e, RungEvent)] == [
        ("microcompact", "idle")
    ]
    # today's manager waits the policy's 60 minutes
    plain = ContextManager(ContextPolicy(context_window=8_000), clock=lambda: now[0])
    assert plain.prepare(history_of(messages)).actions == ()


def test_the_edit_is_cheaper_under_the_cache_model_when_applied() -> None:
    """Where CacheAware applies an edit, the next 40 requests cost less than without it."""
    price = default_prices().get("claude-sonnet-4-5")
    messages = tool_turns(8, size=6_000)
    ctx = _context(1_000_000)
    edited = CacheAware(MicroCompact(keep_recent=1, min_saving=0), CACHE)(messages, ctx).messages

    def cost(view: tuple[object, ...] | list[object]) -> float:
        cache = AnthropicCache(price.min_cacheable_tokens)
        old = [ctx.count(m) for m in messages]  # type: ignore[arg-type]
        cache.send(view_request(0, 0, messages, old))
        counts = [ctx.count(m) for m in view]  # type: ignore[arg-type]
        return sum(
            cache.send(view_request(t, 0, view, counts)).cost(price)  # type: ignore[arg-type]
            for t in range(1, 41)
        )

    assert cost(edited) < cost(messages)


@settings(max_examples=40, deadline=None)
@given(conversations())
def test_cache_aware_returns_the_inner_result_or_the_input(messages: list[object]) -> None:
    ctx = _context(2_000)
    inner = MicroCompact(keep_recent=0, min_saving=0)(messages, ctx)  # type: ignore[arg-type]
    got = CacheAware(MicroCompact(keep_recent=0, min_saving=0), CACHE)(messages, ctx)  # type: ignore[arg-type]
    assert got.messages in (inner.messages, tuple(messages))
