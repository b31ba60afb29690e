"""Cursor's agent transcripts: detection, roles, tool calls paired by order (the files carry no
ids), typed prompts told from Cursor's context, damaged lines reported by number, and a replay
in a small window that breaks no API rule."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from cliruns import run_cli, run_json
from conftest import FIXTURES_DIR

from contextwarden.errors import FormatError
from contextwarden.eval.replay import replay
from contextwarden.formats import detect_format, load
from contextwarden.model import TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.rules import validate
from contextwarden.summarizers.typed import clean_typed_text, user_messages

IDE = FIXTURES_DIR / "cursor/constructed__ide-transcript.jsonl"
RESULTS = FIXTURES_DIR / "cursor/constructed__tool-results.jsonl"
SMALL_WINDOW = 300


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _queries(path: Path) -> list[str]:
    """What the person typed: each user line's ``<user_query>`` content, from the file."""
    found = []
    for record in _records(path):
        for part in record.get("message", {}).get("content", []):
            text = part.get("text", "") if record.get("role") == "user" else ""
            if "<user_query>" in text:
                found.append(text.split("<user_query>")[1].split("</user_query>")[0].strip())
    return found


def _write(tmp_path: Path, records: list[Any], raw: dict[int, str] | None = None) -> Path:
    lines = [json.dumps(r) for r in records]
    for index, text in (raw or {}).items():
        lines[index] = text
    path = tmp_path / "transcript.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("path", [IDE, RESULTS])
def test_it_is_told_by_detection_and_its_rules_hold(path: Path) -> None:
    assert detect_format(path) == "cursor"
    history = load(path)
    assert not history.source.issues and not validate(history.messages)
    roles = [m.role for m in history.messages]
    assert roles[0] == "user" and all(a != b for a, b in itertools.pairwise(roles))


def test_a_chat_of_failed_turns_is_told_too(tmp_path: Path) -> None:
    failed = {"type": "turn_ended", "status": "error", "error": "usage limit reached"}
    prompt = {"role": "user", "message": {"content": "<user_query>\nretry\n</user_query>"}}
    records = [_records(IDE)[0], prompt, failed, prompt, failed]
    path = _write(tmp_path, records)
    assert detect_format(path) == "cursor"
    assert [e["status"] for e in load(path).source.metadata["turns_ended"]] == ["error"] * 2


def test_every_line_is_a_message_of_its_role_in_order() -> None:
    loaded = [(m.meta.extra["lines"][0], m.role) for m in load(IDE).messages if m.meta.extra]
    recorded = [(n, r["role"]) for n, r in enumerate(_records(IDE), start=1) if "role" in r]
    assert loaded == recorded


def test_calls_without_ids_get_ids_and_each_result_answers_the_oldest_open_call() -> None:
    history = load(RESULTS)
    calls = [u for m in history.messages for u in m.tool_uses]
    results = [r for m in history.messages for r in m.tool_results]
    assert [c.name for c in calls] == ["Grep", "Read", "StrReplace"]
    assert len({c.id for c in calls}) == len(calls)
    assert [r.tool_use_id for r in results] == [c.id for c in calls]
    recorded = [
        part["content"]
        for record in _records(RESULTS)
        for part in record.get("message", {}).get("content", [])
        if part.get("type") == "tool_result"
    ]
    assert results[0].text == recorded[0]
    assert results[1].text == recorded[1][0]["text"]


def test_calls_cursor_never_answered_get_merge_modes_placeholder() -> None:
    history = load(IDE)
    calls = [u for m in history.messages for u in m.tool_uses]
    assert len(calls) == sum(
        part.get("type") == "tool_use"
        for record in _records(IDE)
        for part in record.get("message", {}).get("content", [])
    )
    answered = {r.tool_use_id for m in history.messages for r in m.tool_results}
    assert {c.id for c in calls[:-1]} <= answered  # the last call ends the (aborted) file


def test_a_result_naming_an_open_call_answers_that_call(tmp_path: Path) -> None:
    records = [
        {"role": "user", "message": {"content": "<user_query>go</user_query>"}},
        {
            "role": "assistant",
            "message": {
                "content": [
                    {"type": "tool_use", "id": "a", "name": "Read", "input": {}},
                    {"type": "tool_use", "id": "b", "name": "Grep", "input": {}},
                ]
            },
        },
        {"role": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "b"}]}},
        {"role": "user", "message": {"content": [{"type": "tool_result", "content": "r"}]}},
    ]
    results = [r for m in load(_write(tmp_path, records)).messages for r in m.tool_results]
    assert [r.tool_use_id for r in results] == ["b", "a"]


def test_a_result_with_no_open_call_is_reported_by_line_and_kept(tmp_path: Path) -> None:
    records = [*_records(RESULTS)[:4], _records(RESULTS)[3]]  # both calls answered, then again
    history = load(_write(tmp_path, records))
    unanswered = history.source.metadata["unanswered_results"]
    assert [item["line"] for item in unanswered] == [5]
    assert unanswered[0]["result"] == records[4]["message"]["content"][0]
    assert [issue.line for issue in history.source.issues] == [5]


def test_only_the_user_query_counts_as_typed_and_cursor_context_is_marked() -> None:
    history = load(IDE)
    assert [t.text for t in user_messages(history.messages)] == _queries(IDE)
    reminder = next(m for m in history.messages if "injected_texts" in m.meta.extra)
    first = reminder.content[0]
    assert isinstance(first, TextBlock) and reminder.meta.extra["injected_texts"] == (first.text,)
    assert reminder.meta.extra["injected"] is False


def test_a_bare_prompt_with_no_wrapper_is_typed(tmp_path: Path) -> None:
    records = [
        {"role": "user", "message": {"content": [{"type": "text", "text": "fix the build"}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "Done."}]}},
    ]
    history = load(_write(tmp_path, records))
    assert [t.text for t in user_messages(history.messages)] == ["fix the build"]
    assert "injected_texts" not in history.messages[0].meta.extra


def test_a_proxied_request_reads_the_user_query_alike() -> None:
    text = _records(IDE)[7]["message"]["content"][0]["text"]
    assert clean_typed_text(text) == _queries(IDE)[1]
    assert clean_typed_text("<user_query>\none\n</user_query>\n<user_query>two") == "one\ntwo"


def test_a_person_quoting_the_tag_keeps_every_word() -> None:
    """Someone writing about Cursor's files in any agent quotes the tag in their own words: what
    they typed is theirs whole, not cut down to the element's content."""
    text = "Parse lines like <user_query>fix it</user_query> and keep the rest of the prompt."
    assert clean_typed_text(text) == text


def test_the_timestamp_cursor_writes_in_the_prompt_is_the_messages_time() -> None:
    first = load(IDE).messages[0]
    assert first.meta.timestamp == 1_785_740_400.0  # Monday, Aug 3, 2026, 9:00 AM (UTC+2)


def test_turn_ends_and_the_chats_metadata_are_kept_with_their_lines() -> None:
    history = load(IDE)
    records = _records(IDE)
    ends = history.source.metadata["turns_ended"]
    expected = [(n, r["status"]) for n, r in enumerate(records, 1) if r.get("type") == "turn_ended"]
    assert [(e["line"], e["status"]) for e in ends] == expected
    assert [e["messages_before"] for e in ends][-1] == len(history.messages)
    kept = history.source.metadata["transcript_metadata"]
    assert kept == [{"line": 1, "metadata": records[0]["metadata"]}]


def test_damaged_and_unknown_lines_are_reported_by_number_and_kept(tmp_path: Path) -> None:
    records = _records(RESULTS)
    records[4] = {"role": "assistant", "message": {"content": 7}}
    records.insert(5, {"type": "new_kind", "x": 1})
    path = _write(tmp_path, records, raw={1: '{"role": "assistant", "message": {"cont'})
    history = load(path, lenient=True)
    issues = {issue.line: issue.message for issue in history.source.issues}
    assert "malformed JSON" in issues[2]
    assert "'message.content' must be a list" in issues[5]
    assert "new to this loader" in issues[6]
    kept = {item["line"]: item["record"] for item in history.source.metadata["unknown_records"]}
    assert kept == {5: records[4], 6: records[5]}
    assert not validate(history.messages)


def test_a_file_of_other_records_is_refused_naming_the_format(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"a": 1}, {"b": 2}])
    with pytest.raises(FormatError, match="not readable as cursor"):
        load(path, "cursor")


def test_a_replay_in_a_small_window_compacts_it_validly() -> None:
    run = replay(load(IDE), ("ladder",), window=SMALL_WINDOW).runs["ladder"]
    assert run.compactions and run.invalid_requests == 0 and run.over_window == 0


def test_inspect_reads_it_by_detection_and_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_json(capsys, "inspect", str(IDE))["format"] == "cursor"
    code, out, _ = run_cli(capsys, "inspect", "--format", "cursor", str(RESULTS))
    assert code == 0 and "cursor" in out


def test_blocks_are_read_by_the_anthropic_wire_reader() -> None:
    history = load(RESULTS)
    assert isinstance(history.messages[1].content[1], ToolUseBlock)
    assert isinstance(history.messages[2].content[0], ToolResultBlock)
