"""Gemini API JSON files (a saved generateContent request, or a list of contents) loaded by
auto-detection, with what could not be read reported by index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextwarden.cli import main
from contextwarden.formats import detect_format, load

REQUEST = Path(__file__).parent / "data" / "gemini" / "gemini-cli-0.61.0-20-reads.request.json"


def test_a_saved_gemini_cli_request_loads_whole() -> None:
    assert detect_format(REQUEST) == "gemini"
    history = load(REQUEST)
    body = json.loads(REQUEST.read_text())
    assert len(history.messages) == len(body["contents"]) == 41
    assert history.system[0]["text"] == body["systemInstruction"]["parts"][0]["text"]  # type: ignore[index]
    assert history.tools == body["tools"]
    assert history.source is not None and history.source.metadata["generationConfig"]
    assert history.to_gemini() == [
        {"role": c["role"], "parts": c["parts"]} for c in body["contents"]
    ]


def test_unreadable_contents_are_reported_and_the_rest_kept(tmp_path: Path) -> None:
    contents = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "system", "parts": [{"text": "no such role"}]},
        {"role": "model", "parts": [{"text": "hello"}]},
    ]
    path = tmp_path / "contents.json"
    path.write_text(json.dumps(contents))
    history = load(path)
    assert [m.text for m in history.messages] == ["hi", "hello"]
    assert history.source is not None
    (issue,) = history.source.issues
    assert issue.index == 1 and "'user' or 'model'" in issue.message


def test_a_file_with_nothing_readable_is_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"contents": [{"role": "tool", "parts": [{"text": "x"}]}]}))
    with pytest.raises(SystemExit) as info:
        main(["inspect", str(path), "--format", "gemini"])
    assert info.value.code == 2
