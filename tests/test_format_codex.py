"""The Codex CLI rollout loader against real rollouts: the fixtures, and the whole corpus."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from conftest import TRANSCRIPTS, corpus, fixture_path, session_params

from contextwarden.errors import FormatError
from contextwarden.formats import detect_format, load
from contextwarden.formats.codex import NAME, read, sniff
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.model import TextBlock, ToolResultBlock, ToolUseBlock, UnknownBlock
from contextwarden.repair import MISSING_RESULT_TEXT
from contextwarden.rules import validate
from tests.jsonpaths import assert_wrong_types_never_crash

FILES = [p for p in TRANSCRIPTS if p.parent.name == "codex"]  # the corpus's, when present
ROLLOUTS = session_params("codex")
SHORT = fixture_path("codex/EntityProcess__agentv__a392ff332928-s0-gpt-5.4.jsonl")
COMPACTED = fixture_path(
    "codex/EntityProcess__agentv__0034f597b72d-s1-codex-spark-2compactions.jsonl"
)
CALLS = ("function_call", "custom_tool_call", "tool_search_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output", "tool_search_output")


def by_name(part: str) -> Path:
    """A corpus rollout (tests calling this carry the ``corpus`` mark)."""
    return next(p for p in FILES if part in p.name)


@cache
def loaded(path: Path) -> ConversationHistory:
    return load(path)


def payloads(path: Path, record_type: str) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        rec = json.loads(line)
        if rec["type"] == record_type:
            out.append((n, rec["payload"]))
    return out


def user_texts(history: ConversationHistory) -> tuple[list[str], list[str]]:
    """(typed, injected) texts of the view's user messages."""
    typed: list[str] = []
    injected: list[str] = []
    for message in history.messages:
        if message.role != "user":
            continue
        marked = Counter(message.meta.extra.get("injected_texts", ()))
        for block in message.content:
            if isinstance(block, TextBlock) and marked[block.text] > 0:
                marked[block.text] -= 1
                injected.append(block.text)
            elif isinstance(block, TextBlock):
                typed.append(block.text)
    return typed, injected


def rollout(folder: Path, records: list[tuple[str, dict[str, Any]]]) -> Path:
    """A rollout file in ``folder`` of ``(type, payload)`` records, one timestamp for all."""
    path = folder / "rollout.jsonl"
    lines = [json.dumps({"timestamp": "2026-08-03T10:48:56Z", "type": t, "payload": p})
             for t, p in records]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@corpus
def test_all_four_rollouts_are_here() -> None:
    assert len(FILES) == 4


@pytest.mark.parametrize("path", ROLLOUTS)
def test_every_rollout_loads_valid_and_is_detected(path: Path) -> None:
    history = loaded(path)
    assert detect_format(path) == NAME
    assert history.source is not None and history.source.format == NAME
    assert history.source.issues == []
    assert history.repairs == []
    assert validate(history.messages) == []
    assert isinstance(history.system, str) and history.system.startswith("You are Codex")
    assert history.source.metadata["session"]["cwd"].endswith("agentv")


@pytest.mark.parametrize("path", ROLLOUTS)
def test_user_messages_match_an_independent_count(path: Path) -> None:
    history = loaded(path)
    items = [p for _, p in payloads(path, "response_item") if p["type"] == "message"]
    raw_user = [p for p in items if p["role"] in ("user", "developer")]
    events = [p["message"] for _, p in payloads(path, "event_msg") if p["type"] == "user_message"]
    typed, injected = user_texts(history)
    assert typed == events  # what the person submitted, in order
    assert len(typed) + len(injected) == sum(len(p["content"]) for p in raw_user)
    raw_assistant = [b["text"] for p in items if p["role"] == "assistant" for b in p["content"]]
    view_assistant = [
        b.text
        for m in history.messages
        if m.role == "assistant"
        for b in m.content
        if isinstance(b, TextBlock)
    ]
    assert view_assistant == raw_assistant


@pytest.mark.parametrize("path", ROLLOUTS)
def test_tool_calls_and_outputs_match_an_independent_count(path: Path) -> None:
    history = loaded(path)
    items = [p for _, p in payloads(path, "response_item")]
    calls = [p["call_id"] for p in items if p["type"] in CALLS]
    outputs = [p["call_id"] for p in items if p["type"] in OUTPUTS]
    uses = [b for m in history.messages for b in m.content if isinstance(b, ToolUseBlock)]
    results = [b for m in history.messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert [u.id for u in uses] == calls
    assert [r.tool_use_id for r in results] == outputs
    assert not [r for r in results if r.content == MISSING_RESULT_TEXT]
    reasoning = [p for p in items if p["type"] == "reasoning"]
    assert history.source is not None
    attached = sum(len(m.meta.extra.get("reasoning", ())) for m in history.messages)
    unattached = len(history.source.metadata.get("unattached_reasoning", []))
    assert attached + unattached == len(reasoning)


@pytest.mark.parametrize("path", ROLLOUTS)
def test_compactions_are_recorded_and_the_view_spans_the_whole_session(path: Path) -> None:
    history = loaded(path)
    assert history.source is not None
    raw = payloads(path, "compacted")
    found = history.source.metadata["compactions"]
    assert [c["line"] for c in found] == [n for n, _ in raw]
    assert bool(found) == ("compactions" in path.name)  # the fixture keeps the first of two
    for entry, (_, payload) in zip(found, raw, strict=True):
        assert entry["replacement_history"] == payload["replacement_history"]
        assert 0 < entry["messages_before"] < len(history.messages)
    events = [p["message"] for _, p in payloads(path, "event_msg") if p["type"] == "user_message"]
    typed, _ = user_texts(history)
    assert typed[0] == events[0] and typed[-1] == events[-1]  # before and after compactions


@corpus
def test_arguments_namespaces_and_custom_input_become_tool_input() -> None:
    history = loaded(by_name("0b9f2ac6f3aa"))
    uses: dict[str, ToolUseBlock] = {}
    for block in (b for m in history.messages for b in m.content if isinstance(b, ToolUseBlock)):
        uses.setdefault(block.name, block)
    assert uses["exec_command"].input["cmd"]
    assert uses["mcp__deepwiki__read_wiki_structure"].input == {
        "repoName": "vercel-labs/agent-eval"
    }
    assert uses["apply_patch"].input["input"].startswith("*** Begin Patch")
    assert uses["tool_search"].input["query"].startswith("deepwiki")


def test_developer_and_instruction_messages_are_marked_injected() -> None:
    history = loaded(SHORT)
    first = history.messages[0]
    assert first.meta.extra["lines"] == (3, 4, 6)
    injected = first.meta.extra["injected_texts"]
    assert injected[0].startswith("<permissions instructions>")
    assert any(t.startswith("# AGENTS.md instructions") for t in injected)
    assert first.meta.extra["injected"] is False  # line 6 is what the person typed
    assert first.content[-1] == TextBlock(
        "remove agentv-claude-trace plugin no longer needed, can merge directly"
    )


def test_assistant_meta_keeps_model_usage_and_reasoning() -> None:
    history = loaded(COMPACTED)
    replies = [m for m in history.messages if m.role == "assistant"]
    assert all(m.meta.extra["model"] == "gpt-5.3-codex-spark" for m in replies)
    assert all(m.meta.timestamp for m in replies)
    with_usage = [m for m in replies if "usage" in m.meta.extra]
    assert len(with_usage) > 0.9 * len(replies)
    assert all(m.meta.extra["usage"]["input_tokens"] > 0 for m in with_usage)
    reasoning = replies[0].meta.extra["reasoning"][0]
    assert reasoning["type"] == "reasoning" and reasoning["encrypted_content"] == "REDACTED"


def test_last_calls_without_output_wait_for_their_results() -> None:
    history = loaded(SHORT)
    last = history.messages[-1]
    assert last.role == "assistant" and len(last.tool_uses) == 2


def test_sniff_tells_codex_from_claude_code() -> None:
    claude = fixture_path("claude-code/d-kimuson__claude-code-viewer__5c0375b4.jsonl")
    assert sniff(SHORT, SHORT.read_text(encoding="utf-8")[:262_144])
    assert not sniff(claude, claude.read_text(encoding="utf-8")[:262_144])
    assert not sniff(SHORT, '{"type": ["user"], "payload": {}, "sessionId": "s"}\n')


def test_one_conversation_per_file() -> None:
    with pytest.raises(FormatError, match="index=0"):
        read(SHORT, LoadReport(str(SHORT), NAME), index=1)


def test_bad_lines_are_reported_by_line_and_good_records_kept(tmp_path: Path) -> None:
    source = SHORT
    lines = source.read_bytes().splitlines()
    records = [json.loads(line) for line in lines]
    records[11]["payload"]["arguments"] = "not json"  # line 12: a call whose arguments do not parse
    records[12]["payload"] = 5  # line 13: a record of the wrong shape
    records[21]["payload"]["content"].append({"type": "annotation_x", "data": 1})  # line 22
    extra = [
        {"timestamp": "x", "type": "response_item", "payload": {"type": "ghost_snapshot"}},
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "developer", "content": 5},
        },
    ]
    for i in (11, 12, 21):
        lines[i] = json.dumps(records[i]).encode()
    lines[14] = lines[14].replace(b"Chunk ID", b"Chunk\xff ID")  # line 15: invalid UTF-8
    lines[23:23] = [json.dumps(e).encode() for e in extra]  # lines 24 and 25
    lines.insert(3, b"{garbage")  # line 4; every original line from 4 on moves down one
    lines[-1] = lines[-1][:40]  # a truncated last line
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")

    history = load(path, "codex")
    assert history.source is not None
    issues = history.source.issues
    last = len(lines)
    assert [i.line for i in issues] == [4, 14, 16, 25, 26, last]  # read as the file streams
    assert "invalid UTF-8" in issues[2].message
    assert "not a Codex rollout record" in issues[1].message
    assert "'ghost_snapshot' has no message mapping" in issues[3].message
    assert "content must be a list" in issues[4].message
    assert history.source.metadata["unmapped_items"][0]["line"] == 25
    assert validate(history.messages) == []
    uses = [b for m in history.messages for b in m.content if isinstance(b, ToolUseBlock)]
    assert uses[1].input == {"raw_arguments": "not json"}
    intact = records[:12] + records[13:-1]  # not the wrong-shape record, not the truncated one
    assert len(uses) == sum(r["payload"].get("type") in CALLS for r in intact) == 21
    unknown = [b for m in history.messages for b in m.content if isinstance(b, UnknownBlock)]
    assert [b.type for b in unknown] == ["annotation_x"]
    results = [b for m in history.messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert any("Chunk\ufffd ID" in r.text for r in results)
    # The broken call's output is kept as marked text rather than dropped.
    assert any("kept unmatched tool results" in r.action for r in history.repairs)


PATHS: tuple[tuple[str | int, ...], ...] = (
    ("type",),
    ("timestamp",),
    ("payload",),
    ("payload", "type"),
    ("payload", "role"),
    ("payload", "content"),
    ("payload", "content", 0),
    ("payload", "content", 0, "type"),
    ("payload", "content", 0, "text"),
    ("payload", "name"),
    ("payload", "arguments"),
    ("payload", "call_id"),
    ("payload", "input"),
    ("payload", "output"),
    ("payload", "summary"),
    ("payload", "message"),
    ("payload", "info"),
    ("payload", "model"),
    ("payload", "base_instructions"),
)


@pytest.mark.parametrize("path_", PATHS, ids=["/".join(map(str, p)) for p in PATHS])
def test_wrong_types_anywhere_never_crash_the_loader(
    path_: tuple[str | int, ...], tmp_path: Path
) -> None:
    records = [json.loads(line) for line in SHORT.read_text(encoding="utf-8").splitlines()]
    assert_wrong_types_never_crash(records, path_, tmp_path / "rollout.jsonl", NAME)


def test_web_search_calls_become_a_call_and_its_result_like_function_calls(
    tmp_path: Path,
) -> None:
    source = fixture_path("codex/EntityProcess__agentv__a392ff332928-s0-gpt-5.4.jsonl")
    lines = source.read_text(encoding="utf-8").splitlines()
    first_reply = next(
        i for i, line in enumerate(lines) if '"role":"assistant"' in line.replace(" ", "")
    )
    searches = [
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "codex rollout format", "queries": ["codex"]},
        },
        {
            "type": "web_search_call",
            "status": "failed",
            "action": {"type": "open_page", "url": "https://example.com/x"},
        },
    ]
    stamp = "2026-01-01T00:00:00.000Z"
    added = [
        json.dumps({"timestamp": stamp, "type": "response_item", "payload": s}) for s in searches
    ]
    lines[first_reply:first_reply] = added
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    history = load(path)
    assert history.source is not None and "unmapped_items" not in history.source.metadata
    uses = {b.id: b for m in history.messages for b in m.content if isinstance(b, ToolUseBlock)}
    results = {
        b.tool_use_id: b
        for m in history.messages
        for b in m.content
        if isinstance(b, ToolResultBlock)
    }
    assert (
        uses["ws_1"].name == "web_search" and uses["ws_1"].input["query"] == "codex rollout format"
    )
    assert json.loads(results["ws_1"].content) == {"status": "completed"}
    second = f"web_search_call-line{first_reply + 2}"
    assert uses[second].input == {"type": "open_page", "url": "https://example.com/x"}
    assert results[second].is_error is True
    assert validate(history.messages) == []
    assert len(history.messages) == len(load(source).messages) + 4  # two calls, two results


def test_real_web_searches_take_the_call_id_of_their_end_event() -> None:
    sample = (
        Path(__file__).parent
        / "data"
        / "codex"
        / "EntityProcess__agentv__8d1ecb6dc628-web-search.jsonl"
    )
    records = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines()]
    ends = [r["payload"] for r in records if r["payload"].get("type") == "web_search_end"]
    history = load(sample)
    searches = [
        b
        for m in history.messages
        for b in m.content
        if isinstance(b, ToolUseBlock) and b.name == "web_search"
    ]
    assert [(s.id, s.input["url"]) for s in searches] == [
        (e["call_id"], e["action"]["url"]) for e in ends
    ]
    results = {
        b.tool_use_id: b
        for m in history.messages
        for b in m.content
        if isinstance(b, ToolResultBlock)
    }
    assert all(json.loads(results[s.id].content) == {"status": "completed"} for s in searches)
    assert history.source is not None and history.source.issues == []
    assert validate(history.messages) == []


def test_newer_rollout_items_are_read_not_rejected(tmp_path: Path) -> None:
    """``world_state``, ``inter_agent_communication`` and its metadata are ``RolloutItem``
    variants of newer Codex (codex-rs/protocol/src/protocol.rs), not foreign records."""
    message = {
        "author": "/root/researcher",
        "recipient": "/root",
        "other_recipients": [],
        "content": "Found the failing test: test_parse_dates.",
        "trigger_turn": True,
    }
    records = [
        ("session_meta", {"id": "s1", "cwd": "/repo", "cli_version": "0.130.0"}),
        ("world_state", {"full": True, "state": {"agents_md": {"text": "Use pytest."}}}),
        ("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Find the failing test."}]}),
        ("event_msg", {"type": "user_message", "message": "Find the failing test."}),
        ("inter_agent_communication_metadata", {"trigger_turn": True}),
        ("inter_agent_communication", message),
        ("world_state", {"full": False, "state": {"environments": {"subagents": None}}}),
        ("response_item", {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "The researcher found it."}]}),
    ]  # fmt: skip
    history = load(rollout(tmp_path, records))
    assert history.source is not None
    assert history.source.issues == [] and history.source.unreadable == 0
    assert history.source.metadata["side_records"] == {
        "world_state": 2,
        "inter_agent_communication_metadata": 1,
    }
    assert [m.role for m in history.messages] == ["user", "assistant"]
    texts = [b.text for b in history.messages[1].content if isinstance(b, TextBlock)]
    assert json.loads(texts[0]) == message
    assert texts[-1] == "The researcher found it."
    assert validate(history.messages) == []


def test_an_agent_message_item_is_injected_user_text_with_its_route(tmp_path: Path) -> None:
    """``ResponseItem::AgentMessage`` (codex-rs/protocol/src/models.rs): what another agent sent,
    model input (Codex sends it as a user message where the provider lacks the item), is read as
    user text marked injected, not set aside as unmapped."""
    agent_message = {
        "type": "agent_message",
        "id": "amsg_1",
        "author": "/root/worker",
        "recipient": "/root",
        "content": [
            {"type": "input_text", "text": "Tests pass after the fix."},
            {"type": "encrypted_content", "encrypted_content": "gAAAA"},
        ],
        "internal_chat_message_metadata_passthrough": {"turn_id": "t1"},
    }
    records = [
        ("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Fix the date parser."}]}),
        ("event_msg", {"type": "user_message", "message": "Fix the date parser."}),
        ("response_item", {"type": "function_call", "call_id": "c1", "name": "spawn_agent",
                           "arguments": '{"task": "fix"}'}),
        ("response_item", {"type": "function_call_output", "call_id": "c1", "output": "ok"}),
        ("response_item", agent_message),
        ("response_item", {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "The worker fixed it."}]}),
    ]  # fmt: skip
    history = load(rollout(tmp_path, records))
    assert history.source is not None and history.source.issues == []
    assert [m.role for m in history.messages] == ["user", "assistant", "user", "assistant"]
    heard = history.messages[2]
    assert [b.text for b in heard.content if isinstance(b, TextBlock)] == [
        "Tests pass after the fix."
    ]
    assert [b.type for b in heard.content if isinstance(b, UnknownBlock)] == ["encrypted_content"]
    assert heard.meta.extra["injected_texts"] == ("Tests pass after the fix.",)
    assert heard.meta.extra["agent_messages"] == (
        {"author": "/root/worker", "recipient": "/root", "id": "amsg_1"},
    )
    assert validate(history.messages) == []


def test_a_rollout_of_newer_codex_records_loads_without_issues() -> None:
    """Records of a 2026-08 Codex rollout (trimmed by agent-sessions): its ``world_state``,
    ``inter_agent_communication_metadata`` and ``agent_message`` lines are read, none skipped."""
    sample = (
        Path(__file__).parent
        / "data"
        / "codex"
        / "jazzyalex__agent-sessions__stage0-codex-small-newer-items.jsonl"
    )
    history = load(sample)
    assert history.source is not None and history.source.issues == []
    assert history.source.metadata["side_records"] == {
        "world_state": 2,
        "inter_agent_communication_metadata": 1,
    }
    routes = [r for m in history.messages for r in m.meta.extra.get("agent_messages", ())]
    assert len(routes) == 1
    assert validate(history.messages) == []


def test_a_compaction_inside_a_merged_message_names_its_blocks_and_its_summary() -> None:
    """A hand-written local compaction (the layout of Codex's ``compact.rs``) falls between a tool
    output and the next typed message, which the view merges into one user message: the record
    names the blocks read before it, and that its summary is readable."""
    path = Path(__file__).parent / "data" / "codex" / "handwritten-local-compaction.jsonl"
    history = load(path)
    assert history.source is not None
    (entry,) = history.source.metadata["compactions"]
    message = history.messages[entry["messages_before"] - 1]
    head = [b for n, b in enumerate(message.content) if n in entry["blocks_before"]]
    tail = [b for n, b in enumerate(message.content) if n not in entry["blocks_before"]]
    (_, compacted), *_ = payloads(path, "compacted")
    (last_output, *_) = [
        p
        for _, p in reversed(payloads(path, "response_item"))
        if p["type"] == "function_call_output"
    ]
    assert [getattr(b, "tool_use_id", None) for b in head] == [last_output["call_id"]]
    typed_after = [
        p["message"]
        for n, p in payloads(path, "event_msg")
        if p["type"] == "user_message" and n > entry["line"]
    ]
    assert [getattr(b, "text", None) for b in tail] == typed_after
    assert entry["summary_state"] == "read" and compacted["message"].startswith("Another")
    remote = loaded(COMPACTED).source
    assert remote is not None
    assert [c["summary_state"] for c in remote.metadata["compactions"]] == ["encrypted"]
