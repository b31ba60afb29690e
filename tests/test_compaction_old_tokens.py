"""Microcompact's trigger check reuses the ledger's counts instead of re-counting old results."""

from __future__ import annotations

import pytest

from contextwarden.compaction.incremental import CompactableResults
from contextwarden.compaction.tools import ToolMatcher
from contextwarden.model import Message
from contextwarden.policy import CLEARED_MARKER, DEFAULT_COMPACTABLE_TOOLS
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.strategies import history_of, tool_turns


def test_old_tokens_come_from_the_ledger_without_counting_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    history = history_of(tool_turns(40, size=3_000))
    view = history.messages
    results = CompactableResults(ToolMatcher(DEFAULT_COMPACTABLE_TOOLS))
    results.update(view)
    calls: list[str] = []
    original = HeuristicCounter.count_text
    monkeypatch.setattr(
        HeuristicCounter,
        "count_text",
        lambda self, text: calls.append(text) or original(self, text),
    )
    saving = results.old_tokens(view, 3, history.message_tokens, CLEARED_MARKER)
    assert calls == []  # nothing re-counted
    monkeypatch.undo()
    exact = sum(
        HeuristicCounter().count_text(r.text) for m in view[: -2 * 3] for r in m.tool_results
    )
    assert saving == pytest.approx(exact, rel=0.02)


def test_a_result_sharing_its_message_gets_its_share_of_the_count() -> None:
    messages = tool_turns(5, size=2_000)
    big = messages[2]
    (result,) = big.tool_results
    messages[2] = Message("user", (result, *Message.user("x" * len(result.text)).content))
    history = history_of(messages)
    found = CompactableResults(ToolMatcher(DEFAULT_COMPACTABLE_TOOLS))
    found.update(history.messages)
    share = found.old_tokens(history.messages, 4, history.message_tokens, CLEARED_MARKER)
    assert share == history.message_tokens(2) // 2
