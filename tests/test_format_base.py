"""The helpers every loader shares (formats/base.py): each written once, checked once here."""

from __future__ import annotations

import time

import pytest

from contextwarden.errors import FormatError
from contextwarden.formats.base import (
    parse_timestamp,
    place_by_line,
    relocate_issues,
    repeated_tool_use,
    request_messages,
)
from contextwarden.loadreport import LoadIssue, LoadReport
from contextwarden.model import FrozenDict, Message, MessageMeta, TextBlock, ToolUseBlock
from contextwarden.wire.common import RAW_ARGUMENTS, image_from_url, parse_arguments


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Tokyo"])
def test_timestamps_without_a_zone_read_as_utc_on_any_machine(
    zone: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        assert parse_timestamp("2024-01-01T00:00:00") == 1704067200.0
        assert parse_timestamp("2024-01-01T00:00:00Z") == 1704067200.0
        assert parse_timestamp("2024-01-01T09:00:00+09:00") == 1704067200.0
    finally:
        monkeypatch.undo()
        time.tzset()
    assert parse_timestamp("yesterday") is None
    assert parse_timestamp(1704067200) is None


def test_arguments_that_are_not_a_json_object_are_kept_verbatim() -> None:
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments("[1, 2]") == {RAW_ARGUMENTS: "[1, 2]"}
    assert parse_arguments("not json") == {RAW_ARGUMENTS: "not json"}
    assert parse_arguments("") == {RAW_ARGUMENTS: ""}


def test_image_urls_become_base64_or_url_sources() -> None:
    assert image_from_url("data:image/png;base64,iVBO").source == {
        "type": "base64",
        "media_type": "image/png",
        "data": "iVBO",
    }
    assert image_from_url("https://x/a.png").source == {"type": "url", "url": "https://x/a.png"}
    # not a base64 data URL: kept as the URL it is rather than guessed at
    assert image_from_url("data:,hello").source == {"type": "url", "url": "data:,hello"}


def test_request_messages_takes_a_body_or_a_bare_list_and_refuses_anything_else() -> None:
    report = LoadReport(None, "x")
    body, messages = request_messages({"model": "m", "messages": [1]}, None, report, ["model"])
    assert messages == [1] and body["model"] == "m" and report.metadata == {"model": "m"}
    assert request_messages([2], None, report, []) == ({"messages": [2]}, [2])
    for bad in ({"messages": "no"}, 3, {"msgs": []}):
        with pytest.raises(FormatError, match="'messages'"):
            request_messages(bad, "f.json", report, [])


def test_issues_from_a_sub_list_are_moved_to_file_lines_or_indices() -> None:
    report = LoadReport(None, "x", issues=[LoadIssue("before", index=0)])
    report.skip("a", index=1)
    report.skip("b")
    report.skip("c", index=9)  # beyond the list: left as it was
    relocate_issues(report, 1, lines=[10, 20])
    assert [(i.line, i.index) for i in report.issues] == [
        (None, 0),
        (20, None),
        (None, None),
        (None, 9),
    ]
    report = LoadReport(None, "x")
    report.skip("a", index=1)
    relocate_issues(report, 0, indices=[4, 7])
    assert report.issues[0].index == 7 and report.issues[0].line is None


def test_a_repeated_tool_use_id_names_the_line_it_first_stood_on() -> None:
    calls: dict[str, int] = {}
    first = Message("assistant", (ToolUseBlock("t1", "bash", FrozenDict()),))
    assert repeated_tool_use(calls, first, 3) is None
    assert repeated_tool_use(calls, first, 8, "call_id") == "call_id 't1' repeats line 3"
    assert calls == {"t1": 3}


def test_entries_are_placed_by_the_first_line_of_each_message() -> None:
    def at(*lines: int) -> Message:
        return Message("user", (TextBlock("x"),), MessageMeta(extra=FrozenDict({"lines": lines})))

    placeholder = Message("assistant", (TextBlock("y"),))  # no lines: inherits the one before
    messages = [at(2, 3), placeholder, at(10), at(20)]
    entries = [{"line": 1}, {"line": 5}, {"line": 15}, {"line": 99}]
    place_by_line(entries, messages)
    assert [e["messages_before"] for e in entries] == [0, 2, 3, 4]
