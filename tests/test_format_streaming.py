"""The JSONL loaders read a file one line at a time: a large file is never held whole, and what is
read is what ``iter_jsonl`` of the whole text would give (line numbers, issues)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

from contextwarden.formats import load
from contextwarden.formats.base import iter_jsonl, read_jsonl, read_text
from contextwarden.loadreport import LoadReport

MB = 1_000_000


def _report(path: Path) -> LoadReport:
    return LoadReport(str(path), "test")


def test_streamed_lines_match_the_whole_text(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\r\n\n{bad\n{"b": "x\xe2\x80\xa8y"}\n{"c": "\xff"}\n{"d": 4}')
    streamed, whole = _report(path), _report(path)
    got = [(i.line, i.value) for i in read_jsonl(path, streamed)]
    expected = [(1, {"a": 1}), (4, {"b": "x\u2028y"}), (5, {"c": "\ufffd"}), (6, {"d": 4})]
    assert got == expected  # a U+2028 inside a JSON string does not end its line
    list(iter_jsonl(read_text(path, whole), whole))
    assert (streamed.records, streamed.unreadable) == (5, 1)
    messages = [i.message for i in streamed.issues]
    assert [i.line for i in streamed.issues] == [3, 5]
    assert "malformed JSON" in messages[0]
    assert messages[1] == "invalid UTF-8 at byte 38; undecodable bytes replaced with U+FFFD"
    assert any(i.message == messages[1] for i in whole.issues)  # the same offset either way


def test_a_file_is_never_held_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    line = json.dumps({"text": "lorem ipsum " * 1_000}) + "\n"
    path.write_text(line * (8 * MB // len(line)), encoding="utf-8")
    tracemalloc.start()
    try:
        chars = sum(len(item.value["text"]) for item in read_jsonl(path, _report(path)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert chars == 12_000 * (8 * MB // len(line))
    assert peak < 0.05 * path.stat().st_size  # a few lines, not the file (bytes, text, lines)


def test_a_claude_code_file_with_a_huge_message_loads(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    user = {"type": "user", "uuid": "u", "parentUuid": None, "sessionId": "s"}
    user["message"] = {"role": "user", "content": "word " * MB}
    path.write_text(json.dumps(user) + "\n", encoding="utf-8")
    history = load(path, "claude-code")
    assert len(history.messages) == 1 and len(history.messages[0].text) == 5 * MB
