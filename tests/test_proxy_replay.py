"""Real sessions replayed through the proxy as their agents sent them (whole history each turn):
no invalid and no over-window upstream request, and a managed prefix stable enough for a prompt
cache. Here the trimmed fixtures of tests/data/ at the 30,000-token window of the issue and at a
6,000-token one that makes the proxy compact; the whole corpus: benchmarks/bench_proxy_replay.py."""

from __future__ import annotations

import re

import pytest

from contextwarden.eval.proxy_replay import replay
from contextwarden.formats import load
from contextwarden.policy import ContextPolicy
from tests.conftest import FIXTURE_TRANSCRIPTS


@pytest.mark.parametrize("window", [30_000, 6_000])
def test_real_sessions_through_the_proxy(window: int) -> None:
    assert FIXTURE_TRANSCRIPTS, "no fixture transcripts under tests/data/transcripts"
    histories = {
        re.sub(r"[^A-Za-z0-9_.-]", "_", p.name)[:100]: load(p) for p in FIXTURE_TRANSCRIPTS
    }
    seen = replay(histories, window)
    for name, history in histories.items():
        turns = sum(m.role == "assistant" for m in history.messages[1:])
        measured = seen[name]
        assert measured.requests == turns, name
        assert measured.invalid == 0 and measured.over == 0, (name, measured)
    cached = sum(s.cached_tokens for s in seen.values())
    total = sum(s.input_tokens for s in seen.values())
    assert cached / total > 0.6, f"only {cached / total:.1%} of input tokens in an unchanged prefix"
    if window == 6_000:  # sessions that do not fit as sent went through compacted
        limit = ContextPolicy(context_window=window).effective_window
        over = [n for n, h in histories.items() if h.estimate_tokens() > limit]
        assert len(over) >= 2
        assert all(seen[n].peak <= limit for n in over)


"""Small enough that the session's requests must be compacted, and its last uncalibrated one
lands over the window by Claude's count."""
