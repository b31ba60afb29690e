"""End to end: ContextManager with the offline summarizer replays the longest real transcript with
a 30,000-token window; after every autocompact the context still holds every user message."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

import pytest
from conftest import FIXTURE_TRANSCRIPTS, TRANSCRIPTS, corpus

from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.model import Message, TextBlock
from contextwarden.policy import ContextPolicy
from contextwarden.rules import validate
from contextwarden.summarizers import StructuredSummarizer, user_messages
from contextwarden.tokens.heuristic import HeuristicCounter

WINDOW = 30_000
COUNTER = HeuristicCounter()


@cache
def longest(paths: tuple[Path, ...]) -> tuple[Path, tuple[Message, ...]]:
    """The transcript whose messages cost the most tokens."""
    loaded = [(p, tuple(load(p).messages)) for p in paths]
    return max(loaded, key=lambda pm: sum(COUNTER.count_message(m) for m in pm[1]))


def view_text(messages: Sequence[Message]) -> str:
    return "\n".join(b.text for m in messages for b in m.content if isinstance(b, TextBlock))


def missing_user_messages(said: Sequence[Message], view: Sequence[Message]) -> list[str]:
    """Typed messages of ``said`` that the view holds neither verbatim nor as head + tail."""
    text = view_text(view)
    floor = StructuredSummarizer().policy.min_user_message_tokens
    missing = []
    for message in user_messages(said):
        if message.text in text:
            continue
        long_enough = COUNTER.count_text(message.text) > floor
        if not (long_enough and message.text[:40] in text and message.text[-40:] in text):
            missing.append(message.text[:80])
    return missing


@pytest.mark.parametrize(
    ("paths", "window"),
    [
        pytest.param(tuple(FIXTURE_TRANSCRIPTS), 4_000, id="fixtures"),  # trimmed: a small window
        pytest.param(tuple(TRANSCRIPTS), WINDOW, id="corpus", marks=corpus),
    ],
)
def test_replay_longest_transcript_keeps_every_user_message(
    paths: tuple[Path, ...], window: int
) -> None:
    path, messages = longest(paths)
    manager = ContextManager(policy=ContextPolicy(context_window=window))
    assert isinstance(manager.summarizer, StructuredSummarizer)
    history = ConversationHistory()
    summaries = 0
    for i, message in enumerate(messages):
        if message.role == "assistant":
            report = manager.prepare(history)
            if "summarize" in report.applied:
                summaries += 1
                assert missing_user_messages(messages[:i], history.messages) == [], (
                    f"{path.name}: after the autocompact before message {i}"
                )
            assert validate(history.messages) == []
        history.add(message)
    assert summaries >= 3, f"{path.name} should autocompact several times in a {window} window"
    assert missing_user_messages(messages, history.messages) == []
