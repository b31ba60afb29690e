"""Writing Claude Code's session format: our own Claude Code loader reads every export back."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import fixture_path, session_params
from test_stores import added, compaction, transcript

from contextwarden.formats import detect_format, load
from contextwarden.history import ConversationHistory
from contextwarden.log import CompactionBoundary, LogEntry
from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.stores import JsonlStore, SqliteStore, write_claude_code


def compacted_session(store: JsonlStore | SqliteStore) -> ConversationHistory:
    """Two compactions (one manual), an undo of the second, and turns with tool calls between."""
    h = ConversationHistory.open(store, "cc-1", system="be brief")
    for i in range(9):
        h.add_user_message(f"question {i}")
        use = ToolUseBlock(f"toolu_{i}", "Read", {"path": f"f{i}.py"})
        h.add_assistant_message(Message.assistant([use]))
        h.add_tool_results([ToolResultBlock(f"toolu_{i}", f"contents {i}")])
        h.add_assistant_message(Message.assistant(f"answer {i}"))
        if i in (3, 6):
            boundary = compaction(h.messages, f"after {i}")
            trigger = "manual" if i == 6 else "auto"
            h._replace_view(CompactionBoundary(**{**_fields(boundary), "trigger": trigger}))
    store.undo_compaction("cc-1")
    return h


def _fields(boundary: CompactionBoundary) -> dict[str, object]:
    return {name: getattr(boundary, name) for name in CompactionBoundary.__dataclass_fields__}


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_compacted_session_is_written_as_claude_code_writes_it(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path / "store")
    compacted_session(store)
    path = store.export_claude_code("cc-1", tmp_path / "cc-1.jsonl")
    recs = records(path)
    assert Counter(r["type"] for r in recs) == {"user": 20, "assistant": 18, "system": 3}
    for before, after in itertools.pairwise(recs):  # one uuid → parentUuid chain
        if after.get("subtype") == "compact_boundary":
            assert after["parentUuid"] is None
            assert after["logicalParentUuid"] == before["uuid"]
        else:
            assert after["parentUuid"] == before["uuid"]
    boundaries = [i for i, r in enumerate(recs) if r.get("subtype") == "compact_boundary"]
    segments = [recs[i]["compactMetadata"].pop("preservedSegment") for i in boundaries]  # type: ignore[attr-defined]
    assert [recs[i]["compactMetadata"] for i in boundaries] == [
        {"trigger": "auto", "preTokens": 160},
        {"trigger": "manual", "preTokens": 160},
    ]
    for i, segment in zip(boundaries, segments, strict=True):  # the 3 messages kept verbatim
        assert segment["headUuid"] == recs[i - 3]["uuid"]
        assert segment["tailUuid"] == segment["anchorUuid"] == recs[i - 1]["uuid"]
    assert all(recs[i + 1]["isCompactSummary"] is True for i in boundaries)
    assert [recs[i + 1]["message"]["content"] for i in boundaries] == [  # type: ignore[index]
        "summary after 3",
        "summary after 6",
    ]
    assert recs[-1]["subtype"] == "undo_compaction"
    assert len({r["uuid"] for r in recs}) == len(recs)
    assert {r["sessionId"] for r in recs} == {"cc-1"}


def test_our_claude_code_loader_reads_the_export_back(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "sessions.db")
    compacted_session(store)
    log = store.log("cc-1")
    path = write_claude_code(log, tmp_path / "cc-1.jsonl", session_id="cc-1")
    assert detect_format(path) == "claude-code"
    back = load(path)
    assert back.source is not None and back.source.issues == []
    assert list(back.messages) == added(log)  # the whole session, each message once
    compactions = back.source.metadata["compactions"]
    assert [c["summary"]["text"] for c in compactions] == ["summary after 3", "summary after 6"]
    assert [(c["trigger"], c["pre_tokens"]) for c in compactions] == [
        ("auto", 160),
        ("manual", 160),
    ]
    # Each boundary falls before the 3 messages its compaction kept verbatim (16 and 28 added).
    assert [c["messages_before"] for c in compactions] == [13, 25]


@pytest.mark.parametrize("path", session_params())
def test_every_transcript_survives_an_export(tmp_path: Path, path: Path) -> None:
    original = transcript(path)
    log: list[LogEntry] = list(original.log)
    exported = write_claude_code(log, tmp_path / "out.jsonl", session_id="t")
    back = load(exported, format="claude-code")
    assert back.source is not None
    uses = Counter(u.id for m in original.messages for u in m.tool_uses)
    if max(uses.values(), default=0) > 1:
        # The trajectory reuses tool_use ids; Claude Code logs never do, and the loader reports
        # (never silently drops) the records that repeat one.
        assert any("repeats" in issue.message for issue in back.source.issues)
    else:
        assert back.source.issues == []
        assert list(back.messages) == list(original.messages)


def test_prior_compactions_are_written_where_they_were(tmp_path: Path) -> None:
    """A session loaded from Claude Code keeps its compactions as metadata; written back they
    stand before the message that followed them, in order, with their summaries."""
    from contextwarden.stores.claude_code_writer import PriorCompaction, claude_code_records

    history = ConversationHistory()
    for i in range(6):
        history.add(Message.user(f"q{i}"))
        history.add(Message.assistant(f"a{i}"))
    prior = [
        PriorCompaction(8, "second summary", "manual", 900, 1_700_000_100.0),
        PriorCompaction(4, "first summary", "auto", 800, 1_700_000_000.0),
    ]
    records = claude_code_records(history.log, session_id="s", prior_compactions=prior)
    kinds = [r.get("subtype") or r["type"] for r in records]
    assert kinds == [
        *["user", "assistant"] * 2, "compact_boundary", "user",
        *["user", "assistant"] * 2, "compact_boundary", "user",
        *["user", "assistant"] * 2,
    ]  # fmt: skip
    boundaries = [r for r in records if r.get("subtype") == "compact_boundary"]
    assert [b["compactMetadata"] for b in boundaries] == [
        {"trigger": "auto", "preTokens": 800},
        {"trigger": "manual", "preTokens": 900},
    ]
    assert records[5]["isCompactSummary"] and records[5]["message"]["content"] == "first summary"
    assert boundaries[0]["logicalParentUuid"] == records[3]["uuid"]
    assert boundaries[0]["timestamp"] == "2023-11-14T22:13:20.000Z"
    path = write_claude_code(history.log, tmp_path / "s.jsonl", session_id="s",
                             prior_compactions=prior)  # fmt: skip
    back = load(path)
    assert [c["messages_before"] for c in back.source.metadata["compactions"]] == [4, 8]  # type: ignore[union-attr]
    assert [m.text for m in back.messages] == [m.text for m in history.messages]


def test_the_kept_tail_is_named_by_position_when_messages_repeat(tmp_path: Path) -> None:
    """An agent that asks the same thing again: the kept tail's records are found by where
    they are, not by what they say (the same message also stands earlier in the session)."""
    h = ConversationHistory()
    for _ in range(6):
        h.add_user_message("run the tests again")
        h.add_assistant_message(Message.assistant("3 failed"))
    h._replace_view(compaction(h.messages, "repeats", keep=3))
    path = write_claude_code(h.log, tmp_path / "r.jsonl", session_id="r")
    recs = records(path)
    boundary = next(r for r in recs if r.get("subtype") == "compact_boundary")
    segment = boundary["compactMetadata"]["preservedSegment"]  # type: ignore[index]
    # Kept: "3 failed", "run the tests again", "3 failed": messages 9 to 11, not 11 to 11.
    assert (segment["headUuid"], segment["tailUuid"]) == (recs[9]["uuid"], recs[11]["uuid"])
    back = load(path)
    assert back.source is not None
    assert back.source.metadata["compactions"][0]["messages_before"] == 9


def test_what_the_agent_injected_is_written_as_its_own_meta_record(tmp_path: Path) -> None:
    """A slash command's expansion rides in an ``isMeta`` record after the typed command: read
    back, it is still the agent's, not the person's, and the message is the same."""
    from contextwarden.summarizers.facts import extract_facts

    original = load(fixture_path("claude-code/d-kimuson__claude-code-viewer__5c0375b4.jsonl"))
    assert original.messages[0].meta.extra.get("injected_texts")
    path = write_claude_code(list(original.log), tmp_path / "out.jsonl", session_id="s")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r.get("isMeta", False) for r in records[:2]] == [False, True]
    back = load(path)
    assert list(back.messages) == list(original.messages)
    injected = [m.meta.extra.get("injected_texts") for m in back.messages]
    assert injected == [m.meta.extra.get("injected_texts") for m in original.messages]
    typed = extract_facts(back.messages).user_messages
    assert [m.text for m in typed] == [
        m.text for m in extract_facts(original.messages).user_messages
    ]
