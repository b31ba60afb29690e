"""The Claude Code session loader against real sessions: the fixtures, and the whole corpus."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES_DIR, TRANSCRIPTS, corpus, fixture_path, session_params

from contextwarden.errors import FormatError
from contextwarden.formats import detect_format, load
from contextwarden.formats.claude_code import NAME, read, sniff
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import Message, TextBlock, ToolResultBlock, UnknownBlock
from contextwarden.rules import validate
from contextwarden.summarizers.typed import user_messages
from tests.jsonpaths import assert_wrong_types_never_crash

FILES = [p for p in TRANSCRIPTS if p.parent.name == "claude-code"]  # the corpus's, when present
SESSIONS = session_params("claude-code")
SMALL = fixture_path("claude-code/d-kimuson__claude-code-viewer__5c0375b4.jsonl")
COMPACTED = fixture_path("claude-code/entireio__cli__7662d755ef9f-s2-1compact-sonnet.jsonl")
# Written from NOTES.md on purpose rather than imported, so the count below is independent
# (the last three: task notifications and the IDE extension's context, read in Safecast's files).
INJECTED = (
    "<system-reminder>",
    "<local-command-",
    "<bash-std",
    "[Request interrupted",
    "<task-notification>",
    "<ide_opened_file>",
    "<ide_selection>",
)
# Background commands finishing and an IDE note in front of a question (Claude Code 2.1.42)
NOTIFIED = (
    FIXTURES_DIR
    / "claude-code"
    / "Safecast__safecast-map-MCP__da-1a12cda362-task-notifications.jsonl"
)


def by_name(part: str) -> Path:
    """A corpus session (tests calling this carry the ``corpus`` mark)."""
    return next(p for p in FILES if part in p.name)


@cache
def loaded(path: Path) -> ConversationHistory:
    return load(path)


def raw_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def raw_typed_texts(path: Path) -> Counter[str]:
    """What the person typed, counted straight from the file."""
    typed: Counter[str] = Counter()
    for rec in raw_records(path):
        if rec.get("type") != "user" or rec.get("isSidechain") or rec.get("isMeta"):
            continue
        if rec.get("isCompactSummary"):
            continue
        content = rec["message"]["content"]
        parts = (
            [content]
            if isinstance(content, str)
            else [b["text"] for b in content if b.get("type") == "text"]
        )
        typed.update(t for t in parts if t.strip() and not t.lstrip().startswith(INJECTED))
    return typed


def view_typed_texts(history: ConversationHistory) -> Counter[str]:
    typed: Counter[str] = Counter()
    for message in history.messages:
        if message.role != "user" or "lines" not in message.meta.extra:
            continue  # placeholders inserted by merge-mode repairs are nobody's text
        texts = Counter(b.text for b in message.content if isinstance(b, TextBlock))
        typed.update(texts - Counter(message.meta.extra.get("injected_texts", ())))
    return typed


@corpus
def test_all_eleven_sessions_are_here() -> None:
    assert len(FILES) == 11


@pytest.mark.parametrize("path", SESSIONS)
def test_every_session_loads_valid_and_is_detected(path: Path) -> None:
    history = loaded(path)
    assert detect_format(path) == NAME
    assert history.source is not None and history.source.format == NAME
    assert validate(history.messages) == []
    assert len(history.messages) > 10
    # The only issues real files produce are the reported off-thread records.
    off = {r["line"] for r in history.source.metadata["off_thread"]}
    assert {i.line for i in history.source.issues} == off
    assert all("main thread" in i.message for i in history.source.issues)


@pytest.mark.parametrize("path", SESSIONS)
def test_every_typed_text_is_in_the_view(path: Path) -> None:
    history = loaded(path)
    assert history.source is not None
    off_thread = Counter(
        r["text"]
        for r in history.source.metadata["off_thread"]
        if r["role"] == "user" and r["text"].strip() and not r["text"].startswith(INJECTED)
    )
    expected = raw_typed_texts(path)
    assert sum(expected.values()) > 0
    assert view_typed_texts(history) + off_thread == expected


@pytest.mark.parametrize("path", SESSIONS)
def test_every_tool_call_and_reply_appears_exactly_once(path: Path) -> None:
    history = loaded(path)
    raw = [
        r for r in raw_records(path) if r.get("type") == "assistant" and not r.get("isSidechain")
    ]
    raw_calls = {b["id"] for r in raw for b in r["message"]["content"] if b["type"] == "tool_use"}
    view_calls = [u.id for m in history.messages for u in m.tool_uses]
    assert sorted(view_calls) == sorted(raw_calls)
    # Records of one API reply (same message.id) end up in one message, never split.
    owner: dict[str, int] = {}
    for i, message in enumerate(history.messages):
        if message.role == "assistant":
            for msg_id in message.meta.extra.get("message_ids", (message.meta.id,)):
                assert owner.setdefault(msg_id, i) == i
    assert set(owner) == {r["message"]["id"] for r in raw}
    assert not [r for r in history.repairs if "placeholder" in r.action]


@pytest.mark.parametrize("path", SESSIONS)
def test_compactions_match_boundary_records(path: Path) -> None:
    history = loaded(path)
    assert history.source is not None
    records = raw_records(path)
    boundaries = [n for n, r in enumerate(records, 1) if r.get("subtype") == "compact_boundary"]
    summaries = [n for n, r in enumerate(records, 1) if r.get("isCompactSummary")]
    found = history.source.metadata["compactions"]
    assert [c["line"] for c in found if c["kind"] == "compact_boundary"] == boundaries
    assert [c["summary"]["line"] for c in found if c["summary"]] == summaries
    befores = [c["messages_before"] for c in found]
    assert befores == sorted(befores)
    # Claude Code's own summary is metadata only; the view keeps the whole session instead.
    view_lines = {n for m in history.messages for n in m.meta.extra.get("lines", ())}
    assert not view_lines & set(summaries)


@corpus
def test_three_compactions_with_their_summaries() -> None:
    history = loaded(by_name("cd95adddad32-s0-3compacts"))
    assert history.source is not None
    found = history.source.metadata["compactions"]
    assert len(found) == 3
    for entry in found:
        assert entry["trigger"] in ("auto", "manual") and entry["pre_tokens"] > 100_000
        assert entry["summary"]["text"].startswith("This session is being continued")
    # Messages before the first boundary are in the view (a parentUuid-only walk drops them).
    assert found[0]["messages_before"] > 10


@corpus
def test_missing_logical_parent_is_bridged_not_dropped() -> None:
    history = loaded(by_name("d0161e0df1cb"))
    assert history.source is not None
    assert 781 in history.source.metadata["blank_records"]
    breaks = history.source.metadata["chain_breaks"]
    assert breaks == [
        {
            "line": 776,
            "missing_parent": "c02d591f-cc6b-4da6-a422-73078171dcbf",
            "reason": "parent is not in the file",
            "continued_at_line": 775,
        }
    ]
    assert history.messages[0].text == "our git status has broken, why?"


@corpus
def test_reply_interleaved_with_its_results_is_one_message() -> None:
    history = loaded(by_name("d0161e0df1cb"))
    index = next(i for i, m in enumerate(history.messages) if 787 in m.meta.extra["lines"])
    reply, results = history.messages[index], history.messages[index + 1]
    assert reply.meta.extra["lines"] == (782, 783, 784, 787)  # 781 holds only "\n\n"
    assert [b.type for b in reply.content] == ["thinking", "text", "tool_use", "tool_use"]
    assert results.meta.extra["lines"] == (786, 789)
    assert [r.tool_use_id for r in results.tool_results] == [u.id for u in reply.tool_uses]


@corpus
def test_text_typed_while_a_tool_ran_is_kept_as_typed() -> None:
    history = loaded(by_name("d0161e0df1cb"))
    message = next(m for m in history.messages if 679 in m.meta.extra.get("lines", ()))
    assert isinstance(message.content[0], ToolResultBlock)
    assert message.content[-1] == TextBlock("it's in worktree 2 I'm seeing this issue")
    assert "injected_texts" not in message.meta.extra


@corpus
def test_injected_text_is_kept_and_marked() -> None:
    history = loaded(by_name("44785715c3f5"))
    message = next(m for m in history.messages if 159 in m.meta.extra.get("lines", ()))
    injected = message.meta.extra["injected_texts"]
    assert injected[0].startswith("<local-command-caveat>")  # an isMeta record
    assert injected[1].startswith("<local-command-stdout>")
    assert message.meta.extra["isMeta"] is True
    typed = [b.text for b in message.content if isinstance(b, TextBlock) and b.text not in injected]
    assert typed[0].startswith("<command-name>/compact</command-name>")  # the person's command
    assert "<command-args>we've finished the base implementation" in typed[0]
    assert typed[1] == "can we continue the debug?"
    assert message.meta.extra["injected"] is False  # it also holds typed text


def test_task_notifications_and_ide_notes_are_kept_and_marked_as_the_tools() -> None:
    history = load(NOTIFIED)
    notices = [m for m in history.messages if "<task-notification>" in message_texts(m)]
    assert len(notices) == 3
    for message in notices:
        text = message_texts(message)
        assert text.endswith("Read the output file to retrieve the result: " + output_file(text))
        assert message.meta.extra["injected_texts"] == (text,)  # kept whole, listed as the tool's
        assert message.meta.extra["injected"] is True
    asked = next(m for m in history.messages if "VPS01" in message_texts(m))
    note, typed = (b.text for b in asked.content if isinstance(b, TextBlock))
    assert note.startswith("<ide_opened_file>The user opened the file")
    assert asked.meta.extra["injected_texts"] == (note,)
    assert asked.meta.extra["injected"] is False  # the person's question is beside it
    assert [t.text for t in user_messages(history.messages)] == [typed]
    assert typed == "We can still use the old MCP at VPS01 If we want?"


def test_a_ci_monitor_event_is_kept_and_marked_as_the_tools(tmp_path: Path) -> None:
    # Claude Code's CI monitor hands a watched pull request's GitHub events to the session as
    # ``<ci-monitor-event>`` blocks in the user role (anthropics/claude-code#55431); the shape is
    # the one Claude Code 2.1.229 (claude-desktop) wrote, the text a made-up bot comment.
    records = raw_records(SMALL)
    event = (
        "<ci-monitor-event>acme/widgets PR #12 has 1 new review comment:\n"
        "- review-bot[bot]: <h3>Review</h3>\nConsider a guard here.\n\n"
        "Please address the feedback and push a fix.</ci-monitor-event>"
    )
    last = records[-1]
    records.append(
        {
            **{k: last[k] for k in ("sessionId", "cwd", "version", "isSidechain", "userType")},
            "parentUuid": last["uuid"],
            "uuid": "0b5d7a52-0000-4000-8000-000000000001",
            "type": "user",
            "timestamp": last["timestamp"],
            "origin": {"kind": "human"},
            "message": {"role": "user", "content": event},
        }
    )
    history = load(_write(tmp_path / "monitored.jsonl", records))
    notice = history.messages[-1]
    assert message_texts(notice) == event  # kept whole in the view
    assert notice.meta.extra["injected_texts"] == (event,)
    assert notice.meta.extra["injected"] is True
    assert event not in [t.text for t in user_messages(history.messages)]


def message_texts(message: Message) -> str:
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


def output_file(notice: str) -> str:
    return notice.split("<output-file>", 1)[1].split("</output-file>", 1)[0]


@corpus
def test_off_thread_records_are_reported_with_their_text() -> None:
    history = loaded(by_name("0e3fdc072c53"))
    assert history.source is not None
    off = history.source.metadata["off_thread"]
    assert [r["line"] for r in off] == [566, 567]
    assert off[0]["text"].startswith("<command-name>/exit")
    assert [i.line for i in history.source.issues] == [566, 567]


@corpus
def test_queued_input_that_never_reached_the_view_is_kept() -> None:
    history = loaded(by_name("d0161e0df1cb"))
    assert history.source is not None
    queued = history.source.metadata["queued_inputs"]
    assert [q["text"] for q in queued] == [
        "(I'm not 100% sure but it did start with an 'e')",
        "this is why I wanted to log the file",
    ]


@corpus
def test_sidechain_records_are_counted_not_loaded() -> None:
    path = by_name("fe5e1c67-todo-app")
    history = loaded(path)
    assert history.source is not None
    side = {r["uuid"] for r in raw_records(path) if r.get("isSidechain")}
    assert history.source.metadata["sidechain_records"] == len(side) == 405
    assert not side & {s for m in history.messages for s in m.meta.source_ids}
    assert history.source.metadata["summaries"][0]["line"] == 1


@corpus
def test_assistant_meta_keeps_model_usage_and_synthetic_flag() -> None:
    history = loaded(by_name("0e3fdc072c53"))
    replies = [m for m in history.messages if m.role == "assistant"]
    assert all(m.meta.timestamp and m.meta.id for m in replies)
    real = [m for m in replies if not m.meta.extra.get("synthetic")]
    assert all(m.meta.extra["usage"]["output_tokens"] >= 1 for m in real)
    synthetic = [m for m in replies if m.meta.extra.get("synthetic")]
    assert synthetic and all(m.meta.extra["model"] == "<synthetic>" for m in synthetic)


def test_sniff_tells_claude_code_from_codex() -> None:
    codex = fixture_path("codex/EntityProcess__agentv__a392ff332928-s0-gpt-5.4.jsonl")
    assert sniff(SMALL, SMALL.read_text(encoding="utf-8")[:262_144])
    assert not sniff(codex, codex.read_text(encoding="utf-8")[:262_144])
    assert not sniff(SMALL, '{"messages": []}')
    assert not sniff(SMALL, '{"type": ["user"], "payload": {}, "sessionId": "s"}\n')
    big = next(
        p for p in (SMALL, COMPACTED) if p.read_text(encoding="utf-8").startswith('{"parentUuid":')
    )
    assert sniff(big, big.read_text(encoding="utf-8")[:100])  # a first line cut by the head


def test_one_conversation_per_file() -> None:
    with pytest.raises(FormatError, match="index=0"):
        read(SMALL, LoadReport(str(SMALL), NAME), index=1)


def test_bad_lines_are_reported_by_line_and_good_records_kept(tmp_path: Path) -> None:
    source = SMALL
    lines = source.read_bytes().splitlines()
    records = [json.loads(line) for line in lines]
    unknown = records[43]  # line 44: an assistant text block, given a type we do not model
    unknown["message"]["content"][0]["type"] = "server_widget"
    broken = records[45]  # line 46: a tool_result record whose message has the wrong type
    broken["message"] = 5
    lines[43], lines[45] = json.dumps(unknown).encode(), json.dumps(broken).encode()
    lines[2] = lines[2].replace(b"I'll help you", b"I'll\xff help you")  # invalid UTF-8
    lines.insert(3, b"this is not json {")  # now line 4; original lines >= 4 move down one
    lines[-1] = lines[-1][: len(lines[-1]) // 2]  # truncated last record (line 54)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")

    history = load(path, "claude-code")
    assert history.source is not None
    issues = history.source.issues
    assert [i.line for i in issues] == [3, 4, 47, 54]  # the bad UTF-8 on line 3, with its line
    assert "invalid UTF-8" in issues[0].message
    assert "malformed JSON" in issues[1].message and "malformed JSON" in issues[3].message
    assert "'message' must be an object" in issues[2].message
    assert validate(history.messages) == []
    kept = {n for m in history.messages for n in m.meta.extra.get("lines", ())}
    good = {
        n + (n >= 4)
        for n, r in enumerate(records, 1)
        if r["type"] in ("user", "assistant") and not r["isSidechain"] and n not in (46, 53)
    }
    assert kept == good
    assert "I'll\ufffd help you" in history.messages[1].text
    blocks = [b for m in history.messages for b in m.content if isinstance(b, UnknownBlock)]
    assert [b.type for b in blocks] == ["server_widget"]
    # The unusable result's call is answered by a marked placeholder, not silently dropped.
    assert any("placeholder" in r.action for r in history.repairs)


PATHS: tuple[tuple[str | int, ...], ...] = (
    ("type",),
    ("uuid",),
    ("parentUuid",),
    ("logicalParentUuid",),
    ("isSidechain",),
    ("isMeta",),
    ("isCompactSummary",),
    ("timestamp",),
    ("subtype",),
    ("compactMetadata",),
    ("content",),
    ("version",),
    ("message",),
    ("message", "role"),
    ("message", "content"),
    ("message", "id"),
    ("message", "usage"),
    ("message", "model"),
    ("message", "content", 0),
    ("message", "content", 0, "type"),
    ("message", "content", 0, "text"),
    ("message", "content", 0, "id"),
    ("message", "content", 0, "input"),
    ("message", "content", 0, "tool_use_id"),
    ("message", "content", 0, "content"),
)


@pytest.mark.parametrize("path_", PATHS, ids=["/".join(map(str, p)) for p in PATHS])
def test_wrong_types_anywhere_never_crash_the_loader(
    path_: tuple[str | int, ...], tmp_path: Path
) -> None:
    records = raw_records(COMPACTED)  # compact and microcompact boundaries
    assert_wrong_types_never_crash(records, path_, tmp_path / "session.jsonl", NAME)


# ----------------------------------------------------------------------------- resumed, partial
def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_a_file_that_starts_at_a_compaction_opens_with_its_summary(tmp_path: Path) -> None:
    records = raw_records(COMPACTED)
    start = next(i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary")
    summary = next(r for r in records[start:] if r.get("isCompactSummary"))
    history = load(_write(tmp_path / "resumed.jsonl", records[start:]))
    first = history.messages[0]
    assert first.role == "user" and first.meta.extra["compact_summary"] is True
    text = summary["message"]["content"]
    text = text if isinstance(text, str) else text[0]["text"]
    assert first.content[0] == TextBlock(text)  # the summary itself, not a placeholder
    assert validate(history.messages) == []
    assert history.source is not None and history.source.metadata["opening_summary_line"] == 2


def test_a_partial_compaction_places_its_boundary_before_the_preserved_segment(
    tmp_path: Path,
) -> None:
    records = raw_records(COMPACTED)
    full = load(COMPACTED)
    boundary = next(r for r in records if r.get("subtype") == "compact_boundary")
    head, tail = full.messages[10], full.messages[14]
    boundary["compactMetadata"]["preservedSegment"] = {
        "headUuid": head.meta.source_ids[0],
        "anchorUuid": boundary["uuid"],
        "tailUuid": tail.meta.source_ids[-1],
    }
    history = load(_write(tmp_path / "partial.jsonl", records))
    assert history.messages == full.messages  # the kept records stay where they were said
    assert history.source is not None
    entry = next(c for c in history.source.metadata["compactions"] if "preserved_segment" in c)
    segment = entry["preserved_segment"]
    assert (segment["first_message"], segment["last_message"]) == (10, 14)
    assert entry["messages_before"] == 10 and segment["in_view"] is True
