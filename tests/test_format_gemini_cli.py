"""Gemini CLI sessions: both layouts of real files load by detection; the JSONL log is replayed as
the CLI replays it on resume ($set, checkpoints, $rewindTo, re-written replies), and nothing the
file holds is dropped without a line in the load report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES_DIR

from contextwarden.cost.prices import default_prices
from contextwarden.cost.recorded import recorded_cost
from contextwarden.errors import FormatError
from contextwarden.formats import detect_format, load
from contextwarden.model import TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.rules import validate
from contextwarden.summarizers.structured import StructuredSummarizer

JSONL = FIXTURES_DIR / "gemini-cli/Mai0313__VibeCodingTracker__session.jsonl"
WITH_KIND = FIXTURES_DIR / "gemini-cli/Mai0313__VibeCodingTracker__session-kind-main.json"
WITHOUT_KIND = FIXTURES_DIR / "gemini-cli/Mai0313__VibeCodingTracker__session-2025-10.json"
DENIED = FIXTURES_DIR / "gemini-cli/savekirk__session-bridge__denied-with-reason.json"


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("path", [JSONL, WITH_KIND, WITHOUT_KIND, DENIED], ids=lambda p: p.name)
def test_both_layouts_are_detected_and_load_with_no_rule_broken(path: Path) -> None:
    assert detect_format(path) == "gemini-cli"
    history = load(path)
    assert validate(history.messages) == []
    assert history.source is not None and history.source.unreadable == 0
    assert history.source.metadata["session"]["projectHash"]


def test_every_call_and_its_result_are_kept_in_the_json_layout() -> None:
    document = json.loads(WITH_KIND.read_text(encoding="utf-8"))
    calls = [c for m in document["messages"] for c in m.get("toolCalls", [])]
    history = load(WITH_KIND)
    uses = [b for m in history.messages for b in m.content if isinstance(b, ToolUseBlock)]
    results = {r.tool_use_id: r for m in history.messages for r in m.tool_results}
    assert [u.id for u in uses] == [c["id"] for c in calls]
    assert [u.input for u in uses] == [c["args"] for c in calls]
    first = calls[0]["result"][0]["functionResponse"]["response"]["output"]
    assert results[calls[0]["id"]].content == first
    assert history.messages[0].text == document["messages"][0]["content"][0]["text"]


def test_a_reply_rewritten_later_in_the_log_is_read_once_in_its_first_place() -> None:
    records = _records(JSONL)
    ids = [r["id"] for r in records if "id" in r and r.get("type") in ("user", "gemini")]
    history = load(JSONL)
    assert history.source is not None
    assert history.source.metadata["superseded_records"] == len(ids) - len(set(ids))
    read = [i for m in history.messages for i in m.meta.source_ids]
    assert sorted(set(read)) == sorted(
        {r["id"] for r in records if r.get("type") in ("user", "gemini")}
    )


def test_notices_are_kept_in_metadata_and_named_in_the_report() -> None:
    history = load(JSONL)
    assert history.source is not None
    notices = history.source.metadata["notices"]
    assert [n["content"] for n in notices][-1] == "Request cancelled."
    assert any("notices" in str(issue) for issue in history.source.issues)
    assert all("Request cancelled." not in m.text for m in history.messages)


def test_usage_and_model_are_read_so_inspect_shows_recorded_requests() -> None:
    history = load(WITH_KIND)
    document = json.loads(WITH_KIND.read_text(encoding="utf-8"))
    replies = [m for m in document["messages"] if m["type"] == "gemini"]
    cost = recorded_cost(history, default_prices())
    assert cost is not None and cost["requests"] == len(replies)
    first = next(m for m in history.messages if m.role == "assistant")
    tokens = replies[0]["tokens"]
    assert first.meta.extra["usage"]["prompt_tokens"] == tokens["input"] + tokens["tool"]
    assert first.meta.extra["usage"]["completion_tokens"] == tokens["output"] + tokens["thoughts"]
    assert first.meta.extra["model"] == replies[0]["model"]
    assert first.meta.extra["thoughts"][0]["subject"] == replies[0]["thoughts"][0]["subject"]


def test_a_rewind_removes_the_messages_after_it_and_reports_each(tmp_path: Path) -> None:
    records = _records(JSONL)
    users = [r for r in records if r.get("type") == "user"]
    target = users[-1]["id"]  # the last prompt and everything after it is rewound
    path = _write(tmp_path / "session-rewound.jsonl", [*records, {"$rewindTo": target}])
    history = load(path)
    full = load(JSONL)
    assert history.source is not None
    removed = [i for i in history.source.issues if "rewound" in i.message]
    kept = [i for m in history.messages for i in m.meta.source_ids]
    assert target not in kept and target in [i for m in full.messages for i in m.meta.source_ids]
    assert len(removed) == history.source.metadata["removed_messages"] > 0
    assert all(i.line is not None for i in removed)
    assert validate(history.messages) == []


def test_a_checkpoint_replaces_the_conversation(tmp_path: Path) -> None:
    records = _records(JSONL)
    first_user = next(r for r in records if r.get("type") == "user")
    checkpoint = {"$set": {"messages": [first_user], "lastUpdated": "2026-04-23T13:00:00Z"}}
    history = load(_write(tmp_path / "session-checkpoint.jsonl", [*records, checkpoint]))
    assert [m.text for m in history.messages] == [first_user["content"][0]["text"]]
    assert history.source is not None
    assert history.source.metadata["session"]["lastUpdated"] == "2026-04-23T13:00:00Z"
    assert any("checkpoint" in i.message for i in history.source.issues)


def test_a_call_without_result_is_reported_and_answered(tmp_path: Path) -> None:
    document = json.loads(WITH_KIND.read_text(encoding="utf-8"))
    call = document["messages"][1]["toolCalls"][0]
    del call["result"]
    call["status"] = "cancelled"
    path = tmp_path / "session-cancelled.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    history = load(path)
    assert validate(history.messages) == []
    assert history.source is not None
    assert any(call["id"] in i.message and i.index == 1 for i in history.source.issues)
    answers = [r for m in history.messages for r in m.tool_results if r.tool_use_id == call["id"]]
    assert len(answers) == 1 and answers[0].is_error


def test_parts_that_are_not_text_are_kept_whole(tmp_path: Path) -> None:
    document = json.loads(WITHOUT_KIND.read_text(encoding="utf-8"))
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    document["messages"][0]["content"] = [{"text": "look"}, image]
    path = tmp_path / "session-image.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    first = load(path).messages[0]
    assert isinstance(first.content[0], TextBlock)
    assert first.content[1].type == "gemini_part" and dict(first.content[1].raw)["inlineData"]  # type: ignore[union-attr]


def test_garbage_lines_are_reported_by_line_and_a_file_of_them_refused(tmp_path: Path) -> None:
    records = _records(JSONL)
    mixed = _write(tmp_path / "session-mixed.jsonl", [records[0], {"foo": 1}, *records[1:]])
    history = load(mixed)
    assert history.source is not None and history.source.unreadable == 1
    assert history.source.issues[0].line == 2
    only_header = _write(tmp_path / "session-empty.jsonl", records[:1])
    with pytest.raises(FormatError, match="no message could be read"):
        load(only_header, lenient=True)


def test_successful_calls_are_not_marked_as_errors() -> None:
    history = load(JSONL)
    results = [r for m in history.messages for r in m.tool_results]
    assert results and all(isinstance(r, ToolResultBlock) for r in results)
    assert not any(r.is_error for r in results)  # every call in this session succeeded


def test_a_reply_of_thoughts_alone_is_reported_and_kept_in_metadata(tmp_path: Path) -> None:
    document = json.loads(WITHOUT_KIND.read_text(encoding="utf-8"))
    document["messages"][2]["content"] = ""  # thoughts and tokens only: nothing for the model
    path = tmp_path / "session-thoughts.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    history = load(path)
    assert history.source is not None
    kept = history.source.metadata["empty_messages"]
    assert [m["id"] for m in kept] == [document["messages"][2]["id"]]
    assert any(i.index == 2 and "empty_messages" in i.message for i in history.source.issues)


def test_a_text_part_with_more_fields_keeps_its_text_and_the_part(tmp_path: Path) -> None:
    document = json.loads(WITHOUT_KIND.read_text(encoding="utf-8"))
    signed = {"text": "done", "thoughtSignature": "c2lnbmF0dXJl"}
    document["messages"][1]["content"] = [signed]
    path = tmp_path / "session-signed.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    reply = load(path).messages[1]
    assert isinstance(reply.content[0], TextBlock) and reply.content[0].text.startswith("done")
    assert not reply.content[0].extra  # nothing Gemini-only goes on an Anthropic text block
    assert dict(reply.meta.extra["parts"][0]["text_part_fields"][0]) == signed


def _denials(document: dict[str, Any]) -> list[tuple[str, str]]:
    """Each cancelled call's id and the words the person typed in the user record after it."""
    records = document["messages"]
    pairs = []
    for at, record in enumerate(records):
        for call in record.get("toolCalls", []):
            if call["status"] == "cancelled":
                typed = next(r for r in records[at + 1 :] if r["type"] == "user")
                pairs.append((call["id"], typed["content"][0]["text"]))
    return pairs


def test_words_typed_when_denying_a_call_follow_its_cancelled_result_verbatim() -> None:
    # Gemini CLI writes the reason a person gives for denying a call as a user record after the
    # reply holding the cancelled call: the person's words, in the turn that answers the call.
    document = json.loads(DENIED.read_text(encoding="utf-8"))
    denials = _denials(document)
    history = load(DENIED)
    assert len(denials) == 2 and validate(history.messages) == []
    for call_id, typed in denials:
        turn = next(
            m for m in history.messages if call_id in [r.tool_use_id for r in m.tool_results]
        )
        result = next(r for r in turn.tool_results if r.tool_use_id == call_id)
        assert result.is_error and result.content.startswith("[Operation Cancelled]")
        assert turn.role == "user" and turn.content[-1] == TextBlock(typed)


def test_a_summary_carries_the_words_typed_with_a_denial_as_the_persons_own() -> None:
    # Issue #26: words a person types in the same turn as a tool result must not be lost with it.
    denials = _denials(json.loads(DENIED.read_text(encoding="utf-8")))
    summary = StructuredSummarizer().summarize(load(DENIED).messages[:-1])
    requests = summary.text.split("All User Messages:", 1)[1]
    assert all(f"\n{typed}\n" in requests for _, typed in denials)
