"""qwen-code chat files: a real one (written by the pinned qwen-code) loads by detection as the
conversation qwen-code resumes from, nothing the file holds is dropped without a line in the load
report, and variants built from its own records (a rewound branch, fragments, a missing parent,
a subagent's records, bad lines) load as qwen-code reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES_DIR

from contextwarden.errors import FormatError
from contextwarden.eval.replay import replay
from contextwarden.formats import detect_format, load
from contextwarden.model import TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.rules import validate
from contextwarden.summarizers.typed import typed_texts

SESSION = FIXTURES_DIR / "qwen-code/qwen-code-0.24.4__resumed-compressed-session.jsonl"
SMALL_WINDOW = 450
"""Below the ~570 tokens of the trimmed session's last request, above its largest message (the
first file read, ~230): the ladder must compact on the way."""


def _records(path: Path = SESSION) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def _parts(records: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return [p[key] for r in records for p in (r.get("message") or {}).get("parts", ()) if key in p]


def test_the_real_session_is_detected_and_loads_with_no_rule_broken() -> None:
    assert detect_format(SESSION) == "qwen-code"
    history = load(SESSION)
    assert validate(history.messages) == []
    report = history.source
    assert report is not None and report.unreadable == 0 and report.issues == []
    assert report.records == len(_records())
    assert report.metadata["session_id"] == _records()[0]["sessionId"]


def test_every_call_and_result_is_kept_paired_with_its_text() -> None:
    records = _records()
    history = load(SESSION)
    uses = [b for m in history.messages for b in m.content if isinstance(b, ToolUseBlock)]
    calls = _parts(records, "functionCall")
    assert [(u.id, u.name, dict(u.input)) for u in uses] == [
        (c["id"], c["name"], c["args"]) for c in calls
    ]
    results = {r.tool_use_id: r for m in history.messages for r in m.tool_results}
    for response in _parts(records, "functionResponse"):
        body = response["response"]
        assert results[response["id"]].content == body.get("output", body.get("error"))


def test_failed_calls_are_marked_errors_and_successes_are_not() -> None:
    status = {
        r["toolCallResult"]["callId"]: r["toolCallResult"]["status"]
        for r in _records()
        if r["type"] == "tool_result"
    }
    results = [r for m in load(SESSION).messages for r in m.tool_results]
    assert {r.tool_use_id: r.is_error for r in results} == {
        call: state == "error" for call, state in status.items()
    }
    assert sum(r.is_error for r in results) == 2


def test_parallel_results_answer_their_calls_in_one_user_message() -> None:
    history = load(SESSION)
    first = history.messages[1]
    assert [u.name for u in first.tool_uses] == ["read_file", "grep_search"]
    assert [r.tool_use_id for r in history.messages[2].tool_results] == [
        u.id for u in first.tool_uses
    ]


def test_thoughts_are_kept_aside_and_never_sent_as_text() -> None:
    history = load(SESSION)
    thoughts = [
        p["text"]
        for r in _records()
        for p in (r.get("message") or {}).get("parts", ())
        if p.get("thought") is True
    ]
    kept = [p["text"] for m in history.messages for p in m.meta.extra.get("thought_parts", ())]
    assert kept == thoughts and len(thoughts) == 3
    assert all(t not in m.text for m in history.messages for t in thoughts)


def test_the_compression_is_kept_aside_and_placed_and_the_view_is_the_whole_session() -> None:
    history = load(SESSION)
    report = history.source
    assert report is not None
    (compaction,) = report.metadata["compactions"]
    assert compaction["line"] == 21 and compaction["info"]["triggerReason"] == "manual"
    assert compaction["summary"]["text"].startswith("<state_snapshot>")
    after = history.messages[compaction["messages_before"]]
    assert after.text == "Thanks, one more: how long is errors.py?"
    assert history.messages[0].text.startswith("Which errors does the contextwarden package")
    system = [r for r in _records() if r["type"] == "system"]
    assert [r["line"] for r in report.metadata["system_records"]] == [
        n for n, r in enumerate(_records(), start=1) if r["type"] == "system"
    ]
    assert len(report.metadata["system_records"]) == len(system)


def test_usage_and_model_are_read() -> None:
    records = [r for r in _records() if r["type"] == "assistant"]
    replies = [m for m in load(SESSION).messages if m.role == "assistant"]
    assert [m.meta.extra["model"] for m in replies] == [r["model"] for r in records]
    usage = replies[0].meta.extra["usage"]
    assert usage["input_tokens"] == records[0]["usageMetadata"]["promptTokenCount"]
    assert usage["output_tokens"] == records[0]["usageMetadata"]["candidatesTokenCount"]


def test_a_rewound_branch_is_reported_and_kept_off_the_thread(tmp_path: Path) -> None:
    records = _records()
    answer = records[17]  # line 18: the first prompt's final answer
    retry = {**records[21], "uuid": "retry-1", "parentUuid": answer["uuid"]}
    retry["message"] = {"role": "user", "parts": [{"text": "Instead: list the stores."}]}
    history = load(_write(tmp_path / "s.jsonl", [*records, retry]))
    assert history.messages[-1].text == "Instead: list the stores."
    report = history.source
    assert report is not None
    off = report.metadata["off_thread"]
    assert [r["line"] for r in off] == [22, 25]  # the abandoned prompt and its answer
    assert report.metadata["compactions"] == []  # the compression was on the abandoned branch
    assert [i.line for i in report.issues] == [22, 25]


def test_fragments_of_one_record_are_joined(tmp_path: Path) -> None:
    records = _records()
    reply = records[3]  # line 4: thought, text and two calls
    parts = reply["message"]["parts"]
    head = {**reply, "message": {**reply["message"], "parts": parts[:2]}}
    tail = {**reply, "message": {**reply["message"], "parts": parts[2:]}}
    history = load(_write(tmp_path / "s.jsonl", [*records[:3], head, tail, *records[4:]]))
    assert history.messages == load(SESSION).messages
    assert history.messages[1].meta.extra["lines"] == (4, 5)


def test_a_missing_parent_breaks_the_chain_but_loses_nothing(tmp_path: Path) -> None:
    records = _records()
    del records[8]  # line 9: the telemetry record the second reply hangs off
    history = load(_write(tmp_path / "s.jsonl", records))
    assert history.messages == load(SESSION).messages
    report = history.source
    assert report is not None
    assert [b["line"] for b in report.metadata["chain_breaks"]] == [9]


@pytest.mark.parametrize(
    ("link", "reason"),
    [(None, "record has no parent"), ("4e53fd79-a56f-4248-8afa-456cbc5fcdf9x", "not in the file")],
)
def test_a_broken_link_mid_file_loses_nothing(
    link: str | None, reason: str, tmp_path: Path
) -> None:
    records = _records()
    records[9]["parentUuid"] = link  # line 10: the second reply
    history = load(_write(tmp_path / "s.jsonl", records))
    assert history.messages == load(SESSION).messages
    assert history.source is not None
    (broken,) = history.source.metadata["chain_breaks"]
    assert broken["line"] == 10 and reason in broken["reason"]
    assert broken["continued_at_line"] == 9


def test_a_subagents_records_are_kept_aside(tmp_path: Path) -> None:
    records = _records()
    side = {**records[0], "uuid": "side-1", "isSidechain": True, "agentId": "explore-1"}
    history = load(_write(tmp_path / "s.jsonl", [*records, side]))
    assert history.messages == load(SESSION).messages
    assert history.source is not None
    assert [r["uuid"] for r in history.source.metadata["sidechain"]] == ["side-1"]


def test_a_reply_of_thoughts_alone_is_reported_and_kept(tmp_path: Path) -> None:
    records = _records()
    reply = records[24]  # line 25: a thought and the answer
    records[24] = {**reply, "message": {"role": "model", "parts": reply["message"]["parts"][:1]}}
    history = load(_write(tmp_path / "s.jsonl", records))
    assert history.source is not None
    (kept,) = history.source.metadata["empty_messages"]
    assert kept["line"] == 25 and kept["message"]["parts"][0]["thought"] is True
    assert any(i.line == 25 and "only thoughts" in i.message for i in history.source.issues)


def test_what_qwen_code_wrote_itself_is_not_read_as_typed(tmp_path: Path) -> None:
    records = _records()
    note = {**records[21], "uuid": "note-1", "provenance": "system", "subtype": "notification"}
    note["message"] = {"role": "user", "parts": [{"text": "Background task finished."}]}
    hook = "<qwen:user-prompt-submit-context>\nbranch: main\n</qwen:user-prompt-submit-context>"
    records[21]["message"]["parts"].append({"text": hook})
    records[21]["parentUuid"] = "note-1"  # the notification came in before the prompt
    history = load(_write(tmp_path / "s.jsonl", [*records[:21], note, *records[21:]]))
    (merged,) = [m for m in history.messages if "note-1" in m.meta.source_ids]
    assert list(typed_texts(merged)) == ["Thanks, one more: how long is errors.py?"]
    assert {"Background task finished.", hook} <= set(merged.meta.extra["injected_texts"])


def test_bad_lines_are_reported_by_line_and_a_file_of_them_refused(tmp_path: Path) -> None:
    records = _records()
    broken = {**records[21], "message": {"role": "user"}}  # no parts
    lines = [json.dumps(r) for r in [*records[:21], broken, *records[22:]]]
    lines.insert(5, "{not json")
    lines.insert(6, json.dumps({"hello": "world"}))
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    history = load(path, "qwen-code")
    report = history.source
    assert report is not None and report.unreadable == 2
    where = {i.line: i.message for i in report.issues}
    assert "malformed JSON" in where[6] and "not a qwen-code record" in where[7]
    assert "needs a message with a 'parts' list" in where[24]
    assert report.metadata["unusable_records"][0]["line"] == 24
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text('{"a": 1}\n{"b": 2}\n', encoding="utf-8")
    with pytest.raises(FormatError, match="qwen-code chat JSONL"):
        load(garbage, "qwen-code")


def test_a_claude_code_session_is_not_taken_for_qwen_code() -> None:
    claude = FIXTURES_DIR / "claude-code/claude-code-viewer-5c0375b4-main.jsonl"
    assert detect_format(claude) == "claude-code"


def test_a_replay_in_a_small_window_compacts_it_validly() -> None:
    run = replay(load(SESSION), ("ladder",), window=SMALL_WINDOW).runs["ladder"]
    assert run.compactions and run.invalid_requests == 0 and run.over_window == 0


def test_the_texts_the_person_typed_are_in_the_view() -> None:
    typed = [
        p["text"]
        for r in _records()
        if r["type"] == "user"
        for p in r["message"]["parts"]
        if "text" in p
    ]
    history = load(SESSION)
    texts = [b.text for m in history.messages for b in m.content if isinstance(b, TextBlock)]
    assert typed and all(t in texts for t in typed)
    assert not any(isinstance(b, ToolResultBlock) for b in history.messages[0].content)
