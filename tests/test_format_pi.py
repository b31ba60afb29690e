"""pi coding agent sessions: two real files (trimmed; written by pi and stored by the Entire CLI)
load by detection as the branch pi resumes, every tool call answered, replies' thinking, model
and usage kept, failures reported by line; variants built from their own records (a branch left
behind, a fresh root, a missing parent, a compaction, a version 1 file, damaged and unknown
content) load as pi reads them, with nothing dropped unreported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cliruns import run_cli, run_json
from conftest import FIXTURES_DIR

from contextwarden.cli.inspect_cmd import recorded_losses, sent_context
from contextwarden.cost.recorded import recorded_requests
from contextwarden.eval.replay import replay
from contextwarden.formats import detect_format, load
from contextwarden.history import ConversationHistory
from contextwarden.model import (
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
)
from contextwarden.rules import validate
from contextwarden.tokens.heuristic import HeuristicCounter

PRSUI = FIXTURES_DIR / "pi/MandavkarPranjal__prsui__mouse-follow.jsonl"
AUTH_GO = FIXTURES_DIR / "pi/entireio__auth-go__review.jsonl"
OH_MY_PI = FIXTURES_DIR / "pi/preloopdev__preloop__oh-my-pi-subagent.jsonl"
SMALL_WINDOW = 2_000
"""Below the ~2,260 tokens of the trimmed prsui session: the ladder must compact on the way."""


def _records(path: Path = PRSUI) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _messages(records: list[dict[str, Any]], role: str) -> list[dict[str, Any]]:
    return [
        r["message"] for r in records if r["type"] == "message" and r["message"]["role"] == role
    ]


def _texts(history: ConversationHistory) -> str:
    return "\n".join(
        b.text for m in history.messages for b in m.content if isinstance(b, TextBlock)
    )


def _issues(history: ConversationHistory) -> dict[int | None, str]:
    assert history.source is not None
    return {i.line: i.message for i in history.source.issues}


@pytest.mark.parametrize("path", [PRSUI, AUTH_GO], ids=lambda p: p.name)
def test_real_files_load_by_detection_every_call_answered(path: Path) -> None:
    records = _records(path)
    history = load(path)
    assert detect_format(path) == "pi" and history.source is not None
    assert history.source.metadata["session"]["id"] == records[0]["id"]
    assert validate(history.messages) == []
    calls = [b.id for m in history.messages for b in m.content if isinstance(b, ToolUseBlock)]
    results = [r.tool_use_id for m in history.messages for r in m.tool_results]
    assert calls == results == [m["toolCallId"] for m in _messages(records, "toolResult")]
    typed = [m["content"][0]["text"] for m in _messages(records, "user")]
    assert [t for t in typed if t in _texts(history)] == typed


def test_oh_my_pi_title_first_is_detected_its_system_prompt_sent() -> None:
    records = _records(OH_MY_PI)
    history = load(OH_MY_PI)
    assert detect_format(OH_MY_PI) == "pi" and history.source is not None
    metadata = history.source.metadata
    assert metadata["session"]["id"] == records[1]["id"]
    assert metadata["title"] == {"line": 1, **{k: v for k, v in records[0].items() if k != "pad"}}
    init = next(r for r in records if r["type"] == "session_init")
    assert history.system == init["systemPrompt"]
    assert [entry["tools"] for entry in metadata["session_init"]] == [init["tools"]]
    assert "systemPrompt" not in metadata["session_init"][0]
    assert [e["type"] for e in metadata["side_entries"]] == ["credential_pin"]
    assert "unknown_entries" not in metadata and history.source.issues == []
    assert validate(history.messages) == []
    typed = [m["content"][0]["text"] for m in _messages(records, "user")]
    assert typed and [t for t in typed if t in _texts(history)] == typed


def _after_last(records: list[dict[str, Any]], *added: dict[str, Any]) -> list[dict[str, Any]]:
    """``records`` with ``added`` chained after the last entry, each the child of the one before,
    stamped as Oh My Pi stamps its entries."""
    parent = records[-1]["id"]
    chained = []
    for n, entry in enumerate(added):
        entry_id = f"e{n:07d}"
        stamp = {"id": entry_id, "parentId": parent, "timestamp": "2026-07-21T10:00:00Z"}
        chained.append({**entry, **stamp})
        parent = entry_id
    return records + chained


def test_oh_my_pi_settings_on_the_branch_are_kept_not_reported(tmp_path: Path) -> None:
    # The shapes of Oh My Pi's session-entries.ts: a plan-mode switch, a service tier, the rules
    # its stream rules injected, the MCP tools the model is offered.
    settings = [
        {"type": "mode_change", "mode": "plan", "data": {"planFilePath": "/tmp/plan.md"}},
        {"type": "service_tier_change", "serviceTier": {"openai": "priority"}},
        {"type": "ttsr_injection", "injectedRules": ["no-any"]},
        {"type": "mcp_tool_selection", "selectedToolNames": ["github.search_code"]},
    ]
    path = _write(tmp_path / "settings.jsonl", _after_last(_records(OH_MY_PI), *settings))
    history = load(path)
    assert history.source is not None and history.source.issues == []
    metadata = history.source.metadata
    assert "unknown_entries" not in metadata
    kinds = [entry["type"] for entry in metadata["settings"]]
    assert kinds == ["model_change", "thinking_level_change", *(s["type"] for s in settings)]
    assert metadata["settings"][-1]["selectedToolNames"] == ["github.search_code"]
    assert history.messages == load(OH_MY_PI).messages


def test_oh_my_pi_clear_starts_the_view_again_what_came_before_kept(tmp_path: Path) -> None:
    records = _after_last(
        _records(OH_MY_PI),
        {"type": "reset_boundary"},
        {"type": "message", "message": {"role": "user", "content": "start over: just list it"}},
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "Listed."}],
                "stopReason": "stop",
            },
        },
    )
    path = _write(tmp_path / "cleared.jsonl", records)
    reset_line = len(records) - 2

    history = load(path)

    assert [m.text for m in history.messages] == ["start over: just list it", "Listed."]
    assert history.source is not None
    before = [r for r in _records(OH_MY_PI) if r["type"] == "message"]
    cleared = history.source.metadata["cleared"]
    assert [entry["id"] for entry in cleared] == [r["id"] for r in before]
    assert "/clear" in _issues(history)[reset_line] and len(history.source.issues) == 1
    assert history.system == load(OH_MY_PI).system  # the session_init before it still holds
    assert validate(history.messages) == []


def test_replies_keep_thinking_signatures_model_and_usage() -> None:
    records = _records(AUTH_GO)
    replies = [m for m in _messages(records, "assistant") if m["stopReason"] != "error"]
    history = load(AUTH_GO)
    mine = [m for m in history.messages if m.role == "assistant"]
    signatures = [
        p["thinkingSignature"] for m in replies for p in m["content"] if p["type"] == "thinking"
    ]
    thinking = [b for m in mine for b in m.content if isinstance(b, ThinkingBlock)]
    assert [b.signature for b in thinking] == signatures and signatures
    assert {m.meta.extra["model"] for m in mine} == {"gpt-5.5"}
    assert [m.meta.extra["usage"]["input_tokens"] for m in mine] == [
        r["usage"]["input"] for r in replies
    ]
    assert len(recorded_requests(history.messages)) == len(replies)


def test_a_failed_reply_is_left_out_as_pi_does_reported_by_line() -> None:
    records = _records(AUTH_GO)
    line, failed = next(
        (n, r)
        for n, r in enumerate(records, 1)
        if r.get("message", {}).get("stopReason") == "error"
    )
    history = load(AUTH_GO)
    assert "WebSocket error" in _issues(history)[line]
    assert history.source is not None
    assert history.source.metadata["failed_replies"] == [{"line": line, **failed}]
    assert failed["id"] not in {i for m in history.messages for i in m.meta.source_ids}


def test_the_view_is_the_branch_the_file_ends_on_the_rest_kept_and_reported(tmp_path: Path) -> None:
    records = _records()
    at = next(n for n, r in enumerate(records) if r.get("message", {}).get("stopReason") == "stop")
    records += [
        {
            "type": "message",
            "id": "b0000001",
            "parentId": records[at]["id"],
            "timestamp": "2026-07-21T10:00:00Z",
            "message": {"role": "user", "content": "try another way"},
        },
        {
            "type": "message",
            "id": "b0000002",
            "parentId": "b0000001",
            "timestamp": "2026-07-21T10:00:01Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "another way"}],
                "stopReason": "stop",
            },
        },
    ]
    history = load(_write(tmp_path / "branched.jsonl", records))
    left = list(range(at + 2, len(records) - 1))  # the 1-based lines after the branch point
    assert history.source is not None
    assert [e["line"] for e in history.source.metadata["off_thread"]] == left
    assert all("not on the branch" in _issues(history)[n] for n in left)
    assert history.messages[-2].content == (TextBlock("try another way"),)
    assert history.messages[-1].meta.id == "b0000002" and validate(history.messages) == []
    assert len(history.messages) == len(load(PRSUI).messages) - 4 + 2


def test_a_second_root_starts_a_branch_from_nothing(tmp_path: Path) -> None:
    records = [
        *_records(),
        {
            "type": "message",
            "id": "r0000001",
            "parentId": None,
            "timestamp": "2026-07-21T10:00:00Z",
            "message": {"role": "user", "content": "start over"},
        },
    ]
    history = load(_write(tmp_path / "reset.jsonl", records))
    assert [m.meta.id for m in history.messages] == ["r0000001"]


def test_a_missing_parent_is_bridged_and_reported(tmp_path: Path) -> None:
    records = _records()
    records[-1]["parentId"] = "deadbeef"
    history = load(_write(tmp_path / "gap.jsonl", records))
    assert "parent is not in the file" in _issues(history)[len(records)]
    assert len(history.messages) == len(load(PRSUI).messages)


def test_a_repeated_id_links_to_the_later_entry_the_earlier_kept(tmp_path: Path) -> None:
    records = _records()
    copy = {**records[-1], "message": {"role": "user", "content": "an earlier copy"}}
    records.insert(len(records) - 1, copy)
    history = load(_write(tmp_path / "repeated.jsonl", records))
    assert history.source is not None
    assert f"repeats line {len(records) - 1}" in _issues(history)[len(records)]
    assert history.source.metadata["shadowed_entries"][0]["message"]["content"] == "an earlier copy"
    assert "an earlier copy" not in _texts(history)
    assert len(history.messages) == len(load(PRSUI).messages)


def test_a_damaged_line_is_reported_with_its_number_the_rest_loads(tmp_path: Path) -> None:
    path = tmp_path / "damaged.jsonl"
    lines = PRSUI.read_text(encoding="utf-8").splitlines()
    lines[9] = lines[9][:40]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    history = load(path)
    issues = _issues(history)
    assert "malformed JSON" in issues[10] and "the branch goes on at line 9" in issues[11]
    assert "parent is not in the file" in issues[11]
    assert len(history.messages) == len(load(PRSUI).messages) and validate(history.messages) == []


def _compacted(tmp_path: Path) -> tuple[ConversationHistory, list[dict[str, Any]], int]:
    """AUTH_GO with a compaction before its second request, keeping the last two replies."""
    records = _records(AUTH_GO)
    second = next(
        n for n, r in enumerate(records) if n > 4 and r.get("message", {}).get("role") == "user"
    )
    kept = second - 3  # the reply before the last result and reply of the first request
    compaction = {
        "type": "compaction",
        "id": "c0000001",
        "parentId": records[second - 1]["id"],
        "timestamp": "2026-05-20T11:00:00Z",
        "summary": "SUMMARY: the review so far",
        "firstKeptEntryId": records[kept]["id"],
        "tokensBefore": 12_345,
    }
    records[second]["parentId"] = "c0000001"
    records.insert(second, compaction)
    return load(_write(tmp_path / "compacted.jsonl", records)), records, kept + 1


def test_a_compaction_is_kept_aside_with_what_pi_sends_after_it(tmp_path: Path) -> None:
    history, _, kept_line = _compacted(tmp_path)
    assert history.source is not None
    (entry,) = history.source.metadata["compactions"]
    first = next(i for i, m in enumerate(history.messages) if kept_line in m.meta.extra["lines"])
    assert (
        entry["summary"]["text"] == "SUMMARY: the review so far"
        and entry["tokens_before"] == 12_345
    )
    assert entry["messages_before"] == first
    assert entry["preserved_segment"]["last_message"] == first + 2
    _, sent = sent_context(history)
    assert sent[0].content == (TextBlock("SUMMARY: the review so far"),)
    assert sent[1:] == history.messages[first:] and validate(sent) == []
    (lost,) = recorded_losses(history, HeuristicCounter())
    assert lost["strategy"] == "pi compaction"


def test_a_version_1_file_is_a_list_and_names_the_kept_entry_by_index(tmp_path: Path) -> None:
    history, records, kept_line = _compacted(tmp_path)
    header = {k: v for k, v in records[0].items() if k != "version"}  # version 1 wrote none
    legacy = [
        header,
        *({k: v for k, v in r.items() if k not in ("id", "parentId")} for r in records[1:]),
    ]
    compaction = next(r for r in legacy if r["type"] == "compaction")
    del compaction["firstKeptEntryId"]
    compaction["firstKeptEntryIndex"] = kept_line - 1  # the header is index 0
    old = load(_write(tmp_path / "v1.jsonl", legacy))
    assert [m.content for m in old.messages] == [m.content for m in history.messages]
    assert old.source is not None and history.source is not None
    (entry,) = old.source.metadata["compactions"]
    assert entry["messages_before"] == history.source.metadata["compactions"][0]["messages_before"]


def test_what_pi_adds_to_the_context_is_injected_unknown_content_kept(tmp_path: Path) -> None:
    records = _records()
    records[4]["message"]["content"].append({"type": "audio", "data": "AAAA"})
    tail = [
        {"type": "branch_summary", "fromId": "x", "summary": "BRANCH SUMMARY"},
        {
            "type": "custom_message",
            "customType": "ext",
            "content": "EXTENSION SAYS",
            "display": True,
        },
        {
            "type": "message",
            "message": {
                "role": "bashExecution",
                "command": "ls",
                "output": "a.txt",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
            },
        },
        {
            "type": "message",
            "message": {
                "role": "bashExecution",
                "command": "env",
                "output": "SECRET",
                "exitCode": 0,
                "excludeFromContext": True,
            },
        },
        {"type": "message", "message": {"role": "alien", "content": "?"}},
        {"type": "future_thing", "data": 1},
        {"type": "label", "targetId": records[4]["id"], "label": "start"},
        {"type": "session_info", "name": "mouse follow"},
    ]
    parent = records[-1]["id"]
    for n, entry in enumerate(tail):
        entry.update(id=f"t000000{n}", parentId=parent, timestamp="2026-07-21T10:00:00Z")
        parent = entry["id"]
    history = load(_write(tmp_path / "extras.jsonl", records + tail))
    assert history.source is not None
    meta, issues, first = history.source.metadata, _issues(history), len(records) + 1
    assert UnknownBlock is type(history.messages[0].content[-1])
    last = history.messages[-1]
    assert last.meta.extra["injected"] is True and "SECRET" not in _texts(history)
    assert [
        t in _texts(history) for t in ("BRANCH SUMMARY", "EXTENSION SAYS", "Ran `ls`\na.txt")
    ] == [True] * 3
    assert (
        "pi does not send it" in issues[first + 3]
        and meta["empty_messages"][0]["line"] == first + 3
    )
    assert "'alien'" in issues[first + 4] and meta["unusable_entries"][0]["line"] == first + 4
    assert "new to this loader" in issues[first + 5] and meta["unknown_entries"][0]["data"] == 1
    assert meta["labels"] == {records[4]["id"]: "start"} and meta["session_name"] == "mouse follow"


def test_oh_my_pi_developer_reminders_are_sent_as_injected_text(tmp_path: Path) -> None:
    records = _records()
    reminder = "<system-reminder>\nLast turn had no tool call → session idle.\n</system-reminder>"
    records.append(
        {
            "type": "message",
            "id": "d0000000",
            "parentId": records[-1]["id"],
            "timestamp": "2026-07-21T10:00:00Z",
            "message": {"role": "developer", "content": [{"type": "text", "text": reminder}]},
        }
    )
    history = load(_write(tmp_path / "reminder.jsonl", records))
    assert history.source is not None and len(records) not in _issues(history)
    last = history.messages[-1]
    assert last.role == "user" and last.meta.extra["injected"] is True
    assert last.meta.extra["pi_role"] == "developer" and reminder in _texts(history)


def test_a_tool_result_holds_the_text_pi_recorded() -> None:
    records = _records()
    first = _messages(records, "toolResult")[0]
    result = next(r for m in load(PRSUI).messages for r in m.tool_results)
    assert isinstance(result, ToolResultBlock) and result.tool_use_id == first["toolCallId"]
    assert result.content == (TextBlock(first["content"][0]["text"]),)


def test_a_replay_in_a_small_window_compacts_it_validly() -> None:
    run = replay(load(PRSUI), ("ladder",), window=SMALL_WINDOW).runs["ladder"]
    assert run.compactions and run.invalid_requests == 0 and run.over_window == 0


def test_inspect_reads_it_by_detection_and_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_json(capsys, "inspect", str(PRSUI))["format"] == "pi"
    code, out, _ = run_cli(capsys, "inspect", "--format", "pi", str(AUTH_GO))
    assert code == 0 and "pi" in out
