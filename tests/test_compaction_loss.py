"""The loss report is exact: whatever fact leaves the context is named by the compaction that
removed it, and every id it names gets the original back."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from rich.console import Console

from contextwarden.cli.chat_ui import lost_table
from contextwarden.compaction import loss
from contextwarden.compaction.loss import (
    CLIPPED,
    CONTENT_KINDS,
    EXCERPT_CHARS,
    FACT_KINDS,
    LossReport,
    log_losses,
    losses,
)
from contextwarden.compaction.truncate import Truncate
from contextwarden.eval.probes import default_probes, reasoning_probes
from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.log import MessageAdded
from contextwarden.manager import ContextManager
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.policy import ContextPolicy
from contextwarden.searchable import SEPARATOR, message_text
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.conftest import fixture_path, session_params

WINDOW = 12_000
"""Small enough that every fixture session is compacted by several rungs."""
MULTI_TURN = (
    "claude-code/entireio__cli__7662d755ef9f-s2-1compact-sonnet.jsonl",
    "codex/EntityProcess__agentv__0034f597b72d-s1-codex-spark-2compactions.jsonl",
)
"""Fixtures with several typed user turns, so a truncation has turns to drop."""


def _text(view: tuple[Message, ...]) -> str:
    return SEPARATOR.join(message_text(m) for m in view)


def _covered(fact: str, lost: LossReport, history: ConversationHistory) -> bool:
    """The report names ``fact``: a fact item quotes it, or an id it gives brings it back."""
    if any(fact in item.what for item in lost.of(*FACT_KINDS)):
        return True
    for ref in lost.refs:
        if fact in history.rehydrate(ref).text:
            return True
    return False


def _check(
    before: tuple[Message, ...],
    after: tuple[Message, ...],
    lost: LossReport,
    history: ConversationHistory,
) -> int:
    """Every fact of the conversation ``before`` held and ``after`` does not is named by
    ``lost``; returns how many there were."""
    facts = {p.text for p in (*default_probes(before), *reasoning_probes(before))}
    had, has = _text(before), _text(after)
    said = _text(tuple(e.message for e in history.log if isinstance(e, MessageAdded)))
    # A fact of the conversation, not of a marker or summary a rung wrote.
    gone = [f for f in facts if f in had and f not in has and f in said]
    missing = [f for f in gone if not _covered(f, lost, history)]
    assert missing == [], missing[:3]
    return len(gone)


def _replay(path: Path) -> tuple[int, int]:
    """Replay ``path`` at ``WINDOW``; after each compaction, every fact of the conversation that
    left the context must be named by its report. Returns (compactions, facts checked)."""
    source = load(path)
    manager = ContextManager(ContextPolicy(context_window=WINDOW, on_overflow="flag"))
    history = ConversationHistory(system=source.system, tools=source.tools, mode="merge")
    compactions = checked = 0
    for message in source.messages:
        if message.role == "assistant" and len(history):
            before = history.messages
            report = manager.prepare(history)
            if report.compacted:
                compactions += 1
                assert report.lost.tokens > 0, report.applied
                checked += _check(before, history.messages, report.lost, history)
            else:
                assert not report.lost
        history.add(message)
    if source.estimate_tokens() > 2 * WINDOW:
        assert compactions, "a session this long must have been compacted"
    return compactions, checked


@pytest.mark.parametrize("path", session_params())
def test_every_fact_that_leaves_the_context_is_in_the_report(path: Path) -> None:
    _replay(path)


@pytest.mark.parametrize("name", MULTI_TURN)
def test_facts_a_truncation_drops_are_named(name: str) -> None:
    history = load(fixture_path(name))
    before = history.messages
    after = Truncate(keep_recent_turns=1)(before).messages
    assert _check(before, after, losses(before, after, history.counter), history) >= 5


@pytest.mark.parametrize("name", MULTI_TURN)
def test_tokens_and_refs_of_a_truncation(name: str) -> None:
    history = load(fixture_path(name))
    counter = HeuristicCounter()
    before = history.messages
    result = Truncate(keep_recent_turns=2)(before)
    assert result.applied
    lost = losses(before, result.messages, counter)
    removed = lost.of("message")
    kept = set(result.messages)
    assert len(removed) == sum(1 for m in before if m not in kept)
    assert lost.tokens == sum(counter.count_message(before[i.index or 0]) for i in removed)
    originals = {
        ref: history.rehydrate(ref) for ref in lost.refs
    }  # KeyError: an id with no original
    assert sum(1 for block in originals.values() if block.text) > len(originals) // 2
    assert all(line.count(" tokens: ") == 1 for line in lost.lines())


def test_nothing_changed_nothing_lost() -> None:
    history = load(fixture_path(MULTI_TURN[0]))
    assert not losses(history.messages, history.messages, HeuristicCounter())


def test_a_stored_log_tells_what_each_compaction_removed() -> None:
    source = load(fixture_path(MULTI_TURN[0]))
    manager = ContextManager(ContextPolicy(context_window=WINDOW, on_overflow="flag"))
    history = ConversationHistory(system=source.system, tools=source.tools, mode="merge")
    live = LossReport()
    for message in source.messages:
        if message.role == "assistant" and len(history):
            live = live.merged(manager.prepare(history).lost)
        history.add(message)
    recorded = log_losses(history.log, history.counter)
    assert recorded, "the session was compacted"
    merged = LossReport(tuple(item for _, report in recorded for item in report.items))
    assert merged.of(*CONTENT_KINDS) == live.of(*CONTENT_KINDS)


def test_chat_context_lists_what_the_last_compaction_removed() -> None:
    source = load(fixture_path(MULTI_TURN[0]))
    manager = ContextManager(ContextPolicy(context_window=WINDOW, on_overflow="flag"))
    history = ConversationHistory(system=source.system, tools=source.tools, mode="merge")
    assert lost_table(history) is None
    last = LossReport()
    for message in source.messages:
        if message.role == "assistant" and len(history):
            report = manager.prepare(history)
            last = report.lost or last
        history.add(message)
    table = lost_table(history)
    assert table is not None
    console = Console(record=True, width=200)
    console.print(table)
    shown = console.export_text()
    assert f"removed {last.tokens:,} tokens" in shown
    assert last.items[0].refs[0] in shown


def test_a_later_compaction_reads_no_output_again(judged: list[str]) -> None:
    """The report of a compaction re-reads every message from the first one changed; an output
    an earlier compaction (or microcompact, or the summary) judged is not judged again, and the
    report is the same: the failure the cleared result held, recalled by its call's id."""
    module = f"widget_{uuid.uuid4().hex}"  # an output no other test judged

    def view(output: str) -> tuple[Message, ...]:
        return (
            Message("user", (TextBlock("build it"),)),
            Message("assistant", (ToolUseBlock("t2", "Bash", {"command": "make build"}),)),
            Message("user", (ToolResultBlock("t2", output, is_error=True),)),
            Message("assistant", (TextBlock("It failed; I will add the module."),)),
        )

    failed = f"error: cannot find module {module}\nExit code 2"
    counter = HeuristicCounter()
    first = losses(view(failed), view("[cleared]"), counter)
    read = len(judged)
    again = losses(view("".join(list(failed))), view("[cleared]"), counter)  # equal copies
    assert again == first
    assert len(judged) == read
    error = first.of("error")
    assert [(item.what, item.index, item.refs) for item in error] == [
        (f"error: cannot find module {module}", 2, ("t2",))
    ]


@pytest.mark.parametrize(
    "text",
    [
        "short",
        "  FAILED  tests/test_a.py::test_x\n\n\tAssertionError:\u00a0assert 1 == 2  ",
        "word " * 30,  # 149 characters: clipped
        "x" * 200,  # one word longer than an excerpt
        "a" * 119 + " b",  # 121 characters: clipped after the space
        "\u3000".join(["行"] * 100),  # an ideographic space between words
        " \n\t ",
    ],
)
def test_an_excerpt_is_the_text_s_words_clipped(text: str) -> None:
    flat = " ".join(text.split())
    expected = flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + CLIPPED
    assert loss._excerpt(text) == expected


def test_a_long_output_s_excerpt_reads_only_its_head() -> None:
    text = "error: boom\n" + "line of output\n" * 1_000_000
    started = time.perf_counter()
    assert loss._excerpt(text).startswith("error: boom line of output")
    assert time.perf_counter() - started < 0.05
