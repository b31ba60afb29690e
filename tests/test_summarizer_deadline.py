"""A summary attempt never outlasts its deadline, whatever the server does: long retry-after
answers, a body dripped one byte at a time, headers that never come. Tested through the real
anthropic and openai SDKs against wire-format servers on 127.0.0.1, with a short deadline."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from servers import Captured, Reply, serving
from test_summarizer_llm import PROVIDERS, Provider, conversation, good_text, transcript_of

from contextwarden.errors import SummarizerError
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.model import Message
from contextwarden.policy import ContextPolicy
from contextwarden.summarizers.deadline import DeadlineExceeded, PromptTooLongError
from contextwarden.summarizers.llm import LLMPolicy

DEADLINE = 1.5
"""The deadline under test (seconds): short, so a miss shows in seconds."""
SLACK = 1.0
"""What a missed deadline may add (closing the connection, the last byte's wait)."""


@pytest.fixture(params=PROVIDERS, ids=[p.name for p in PROVIDERS])
def provider(request: pytest.FixtureRequest) -> Provider:
    result: Provider = request.param
    return result


def timed(fn: Any) -> tuple[float, BaseException | None]:
    started = time.monotonic()
    try:
        fn()
    except Exception as exc:
        return time.monotonic() - started, exc
    return time.monotonic() - started, None


def limited(provider: Provider, retry_after: str) -> Reply:
    return provider.error(429, "rate_limit_error", "Rate limited", **{"retry-after": retry_after})


@pytest.mark.parametrize("retry_after", ["120", "3600"])
def test_a_long_retry_after_ends_the_attempt_at_once(provider: Provider, retry_after: str) -> None:
    with serving(provider.path, [limited(provider, retry_after)]) as api:
        summarizer = provider.make(api.url, max_retries=2, deadline=DEADLINE)
        elapsed, error = timed(lambda: summarizer.summarize(conversation()))
    assert isinstance(error, DeadlineExceeded) and elapsed < DEADLINE
    assert f"asked to wait {retry_after} s" in str(error)
    assert len(api.requests) == 1  # the retry was never going to fit


def test_a_short_retry_after_is_honoured_within_the_deadline(provider: Provider) -> None:
    script = [limited(provider, "0.3"), Reply(provider.reply(good_text()))]
    with serving(provider.path, script) as api:
        summarizer = provider.make(api.url, max_retries=2, deadline=DEADLINE)
        elapsed, error = timed(lambda: summarizer.summarize(conversation()))
    assert error is None and len(api.requests) == 2 and 0.3 <= elapsed < DEADLINE


def test_a_body_dripped_byte_by_byte_is_cut_at_the_deadline(provider: Provider) -> None:
    drip = Reply(provider.reply(good_text()), drip=0.05)  # ~2,000 bytes: well over a minute
    with serving(provider.path, [drip]) as api:
        summarizer = provider.make(api.url, max_retries=2, deadline=DEADLINE, timeout=60.0)
        elapsed, error = timed(lambda: summarizer.summarize(conversation()))
    assert isinstance(error, DeadlineExceeded), error
    assert DEADLINE <= elapsed < DEADLINE + SLACK


def test_headers_that_never_come_end_at_the_deadline_not_the_timeout(provider: Provider) -> None:
    silent = Reply(provider.reply(good_text()), delay=30.0)
    with serving(provider.path, [silent]) as api:
        summarizer = provider.make(api.url, max_retries=5, deadline=DEADLINE, timeout=60.0)
        elapsed, error = timed(lambda: summarizer.summarize(conversation()))
    assert isinstance(error, DeadlineExceeded) and DEADLINE <= elapsed < DEADLINE + SLACK
    assert len(api.requests) == 1


def test_the_async_summary_keeps_the_same_deadline(provider: Provider) -> None:
    drip = Reply(provider.reply(good_text()), drip=0.05)
    with serving(provider.path, [drip]) as api:
        summarizer = provider.make(api.url, deadline=DEADLINE, timeout=60.0)
        elapsed, error = timed(lambda: asyncio.run(summarizer.asummarize(conversation())))
    assert isinstance(error, DeadlineExceeded) and DEADLINE <= elapsed < DEADLINE + SLACK
    with serving(provider.path, [limited(provider, "3600")]) as api:
        summarizer = provider.make(api.url, max_retries=2, deadline=DEADLINE)
        elapsed, error = timed(lambda: asyncio.run(summarizer.asummarize(conversation())))
    assert isinstance(error, DeadlineExceeded) and elapsed < DEADLINE


def test_a_deadline_miss_is_a_failure_the_breaker_counts(provider: Provider) -> None:
    with serving(provider.path, [limited(provider, "3600")]) as api:
        summarizer = provider.make(api.url, max_retries=2, deadline=DEADLINE)
        manager = ContextManager(ContextPolicy(context_window=2_000), summarizer=summarizer)
        history = _long_history()
        started = time.monotonic()
        report = manager.prepare(history)
        elapsed = time.monotonic() - started
    assert elapsed < DEADLINE + SLACK
    assert manager.consecutive_failures(history) == 1
    failed = [a for a in report.actions if a.name == "summarize"]
    assert failed and "deadline" in failed[0].description


def _long_history() -> ConversationHistory:
    history = ConversationHistory()
    for n in range(12):
        history.add(Message.user(f"request {n}: " + "details " * 120))
        history.add(Message.assistant(f"answer {n}: " + "done " * 120))
    return history


# ----------------------------------------------------------------------------- prompt too long
def too_long(provider: Provider) -> Reply:
    return provider.error(
        400, "invalid_request_error", "prompt is too long: 213462 tokens > 200000 maximum"
    )


def test_prompt_too_long_is_retried_once_in_smaller_chunks(provider: Provider) -> None:
    def script(request: Captured) -> Reply:
        return too_long(provider) if len(api.requests) == 1 else Reply(provider.reply(good_text()))

    policy = LLMPolicy(min_chunk_tokens=100)  # the test conversation is small
    with serving(provider.path, script) as api:
        summarizer = provider.make(api.url, policy=policy, deadline=10.0)
        summary = summarizer.summarize(conversation())
    first, *rest = [transcript_of(provider.prompt(r)) for r in api.requests]
    assert len(rest) >= 2  # planned again, now in pieces of the transcript
    assert all(len(piece) < len(first) for piece in rest)
    assert summary.requests == len(rest)


def test_prompt_too_long_twice_is_one_failure(provider: Provider) -> None:
    policy = LLMPolicy(min_chunk_tokens=100)
    with serving(provider.path, [too_long(provider)]) as api:
        summarizer = provider.make(api.url, policy=policy, deadline=10.0)
        with pytest.raises(PromptTooLongError, match="too long"):
            summarizer.summarize(conversation())
    assert len(api.requests) == 2  # the first plan's request and the smaller plan's first


def test_deadline_must_be_a_positive_number(provider: Provider) -> None:
    for bad in (0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="deadline"):
            provider.make("http://127.0.0.1:9", deadline=bad)
    assert issubclass(DeadlineExceeded, SummarizerError)
