"""Replay every real transcript turn by turn through ``prepare()`` with a 30,000-token window.

Before each assistant message (when the agent sends a request) the context must be inside the
effective window and valid. The clock follows the transcript's own timestamps.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.rules import validate
from tests.conftest import TRANSCRIPTS, corpus, session_params

WINDOW = 30_000


@pytest.mark.parametrize("path", session_params())
def test_replay_stays_valid_and_inside_the_window(path: Path) -> None:
    source = load(path)
    now = [0.0]
    manager = ContextManager(ContextPolicy(context_window=WINDOW), clock=lambda: now[0])
    history = ConversationHistory(system=source.system, tools=source.tools)
    effective = manager.policy.effective_window
    requests = 0
    applied: Counter[str] = Counter()
    for message in source.messages:
        if message.meta.timestamp is not None:
            now[0] = max(now[0], message.meta.timestamp)
        if message.role == "assistant" and len(history):
            report = manager.prepare(history)
            requests += 1
            applied.update(report.applied)
            assert history.estimate_tokens() <= effective, (requests, report)
            assert not report.over_window
            assert validate(history.messages) == [], requests
        history.add(message)
    assert requests > 0
    # Every original message is still in the log, compaction or not.
    assert sum(1 for e in history.log if type(e).__name__ == "MessageAdded") == len(source.messages)
    if source.estimate_tokens() > 2 * WINDOW:
        assert applied, "a session this long must have been compacted"


@corpus
def test_every_transcript_is_replayed() -> None:
    assert len(TRANSCRIPTS) == 27
