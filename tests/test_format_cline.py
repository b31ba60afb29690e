"""Cline/Roo task histories: detected by shape (not as OpenAI chat), every message kept, the tool
answers Cline writes as text turned into the results of its native calls, usage read."""

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
from contextwarden.rules import validate

SAMPLE = FIXTURES_DIR / "cline" / "constructed__api_conversation_history.json"


def _document() -> list[dict[str, Any]]:
    value: list[dict[str, Any]] = json.loads(SAMPLE.read_text(encoding="utf-8"))
    return value


def test_detected_as_cline_not_openai_and_every_message_kept() -> None:
    assert detect_format(SAMPLE) == "cline"
    history = load(SAMPLE)
    document = _document()
    assert validate(history.messages) == []
    assert history.source is not None and history.source.records == len(document)
    read = sorted({int(i) for m in history.messages for i in m.meta.source_ids})
    assert read == list(range(len(document)))


def test_text_answers_become_the_results_of_the_native_calls() -> None:
    history = load(SAMPLE)
    results = {r.tool_use_id: r for m in history.messages for r in m.tool_results}
    first, second = "toolu_01Read0000000000000000001", "toolu_01Read0000000000000000002"
    assert results[first].text.startswith("[read_file for 'src/app.py'] Result:")
    assert not results[first].is_error
    assert results[second].is_error and "was not executed" in results[second].text
    subagents = results["tooluse_Sub000000000000000000003"]
    assert subagents.text.startswith("[subagents] Result:")  # use_subagents answers by that name
    answered = history.messages[2]
    assert [b.type for b in answered.content] == ["tool_result", "tool_result", "text"]


def test_xml_tool_calls_in_text_stay_text_as_the_model_saw_them() -> None:
    history = load(SAMPLE)
    xml = history.messages[5]
    assert xml.role == "assistant" and not xml.tool_uses
    assert "<execute_command>" in xml.text
    assert history.messages[6].text.startswith("[execute_command for")


def test_an_unanswered_call_is_reported_and_answered_as_not_run() -> None:
    history = load(SAMPLE)
    assert history.source is not None
    issue = next(i for i in history.source.issues if "attempt_completion" in i.message)
    assert issue.index == 8
    answer = next(r for m in history.messages for r in m.tool_results if "Done" in r.tool_use_id)
    assert answer.is_error


def test_usage_model_and_time_are_read() -> None:
    history = load(SAMPLE)
    document = _document()
    cost = recorded_cost(history, default_prices())
    replies = [m for m in document if m["role"] == "assistant"]
    assert cost is not None and cost["requests"] == len(replies)
    assert cost["by_model"]["claude-sonnet-4-5-20250929"]["cache_read_tokens"] == sum(
        m["metrics"]["tokens"]["cached"] for m in replies
    )
    first = history.messages[1]
    assert first.meta.timestamp == document[1]["ts"] / 1000
    assert first.meta.extra["mode"] == "act"


def test_a_message_that_cannot_be_read_is_reported_by_index(tmp_path: Path) -> None:
    document = _document()
    document.insert(3, {"role": "tool", "content": "x"})
    document.insert(5, {"role": "assistant", "content": []})
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    history = load(path)
    assert history.source is not None
    assert {i.index for i in history.source.issues} >= {3, 5}
    assert validate(history.messages) == []


def test_a_list_of_something_else_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps([{"name": "x"}]), encoding="utf-8")
    with pytest.raises(FormatError, match="no message could be read"):
        load(path, lenient=True)
    path.write_text(json.dumps({"messages": []}), encoding="utf-8")
    with pytest.raises(FormatError, match="expected a JSON list"):
        load(path)


UI = FIXTURES_DIR / "cline" / "constructed__ui_messages.json"


def test_ui_messages_are_detected_and_read_request_by_request() -> None:
    assert detect_format(UI) == "cline-ui"
    records = json.loads(UI.read_text(encoding="utf-8"))
    requests = [json.loads(r["text"]) for r in records if r.get("say") == "api_req_started"]
    history = load(UI)
    assert validate(history.messages) == []
    users = [m for m in history.messages if m.role == "user"]
    assert [m.text for m in users] == [r["request"] for r in requests]
    replies = [m for m in history.messages if m.role == "assistant"]
    assert len(replies) == len(requests)
    assert replies[0].text.startswith("I'll read the entry point first.")
    assert "[readFile] {" in replies[0].text and replies[0].meta.extra["reasoning"]
    assert replies[1].text == "[command] python -m pytest -q"
    assert replies[2].text == "Added --verbose and documented it."


def test_ui_messages_usage_and_cost_are_read_per_request() -> None:
    records = json.loads(UI.read_text(encoding="utf-8"))
    requests = [json.loads(r["text"]) for r in records if r.get("say") == "api_req_started"]
    history = load(UI)
    cost = recorded_cost(history, default_prices())
    assert cost is not None and cost["requests"] == len(requests)
    assert cost["by_model"]["claude-sonnet-4-5-20250929"]["cache_write_tokens"] == sum(
        r["cacheWrites"] for r in requests
    )
    assert [m.meta.extra["cost"] for m in history.messages if m.role == "assistant"] == [
        r["cost"] for r in requests
    ]


def test_ui_only_records_are_counted_and_named_once() -> None:
    history = load(UI)
    assert history.source is not None
    ui = history.source.metadata["ui_records"]
    assert ui == {
        "checkpoint_created": 2,
        "task_progress": 1,
        "command_output": 1,
        "completion_result": 1,
    }
    assert sum("webview" in i.message for i in history.source.issues) == 1


def test_ui_messages_beside_the_api_history_point_to_it(tmp_path: Path) -> None:
    (tmp_path / "ui_messages.json").write_text(UI.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "api_conversation_history.json").write_text(
        SAMPLE.read_text(encoding="utf-8"), encoding="utf-8"
    )
    history = load(tmp_path / "ui_messages.json")
    assert history.source is not None
    assert any("api_conversation_history.json" in i.message for i in history.source.issues)


def test_a_reply_of_empty_text_is_reported_not_dropped_silently(tmp_path: Path) -> None:
    document = _document()
    document.insert(9, {"role": "assistant", "content": [{"type": "text", "text": "  "}]})
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    history = load(path)
    assert history.source is not None
    assert any(i.index == 9 and "no content" in i.message for i in history.source.issues)
    assert len(history.messages) == len(load(SAMPLE).messages)
