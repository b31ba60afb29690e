"""A session file whose first record is bigger than the sniffed head is still told by its format's
own keys: every loader's sample, its first record's first text grown past the head, is detected
as before and loads; a file no loader knows is refused naming the file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_TRANSCRIPTS_DIR, FIXTURES_DIR

from contextwarden.errors import FormatError
from contextwarden.formats import SNIFF_BYTES, detect_format, load, sniffing

BIG_TEXT = "".join(
    f'src/pkg/module_{n}.py:{n}: error: "quoted" C:\\path\\{n} — café ✓ 🚀\tend\n'
    for n in range(SNIFF_BYTES // 40)
)
"""A pasted log longer than the head, with the quotes, backslashes, tabs and non-ASCII text a
JSON writer escapes (so its escapes straddle read chunks and the head's end)."""

JSON_SAMPLES = {
    "claude-code": "claude-code/claude-code-viewer-5c0375b4-main.jsonl",
    "qwen-code": "qwen-code/qwen-code-0.24.4__resumed-compressed-session.jsonl",
    "codex": "codex/EntityProcess__agentv__8d1ecb6dc628-web-search.jsonl",
    "pi": "pi/MandavkarPranjal__prsui__mouse-follow.jsonl",
    "cursor": "cursor/constructed__ide-transcript.jsonl",
    "copilot": "copilot/EntityProcess__agentv__269e1b9e5502-events.jsonl",
    "entire": "entire/entireio__cli__copilot_expected.jsonl",
    "gemini-cli": "gemini-cli/Mai0313__VibeCodingTracker__session-2025-10.json",
    "gemini-cli-jsonl": "gemini-cli/Mai0313__VibeCodingTracker__session.jsonl",
    "cline": "cline/constructed__api_conversation_history.json",
    "cline-ui": "cline/constructed__ui_messages.json",
    "opencode": "opencode/victoryforphil__dark-factory__jolly-eagle.json",
    "openhands": "openhands/All-Hands-AI__openhands-resolver__pairs-output.jsonl",
    "openhands-v1": "openhands/OpenHands__software-agent-sdk__v1-events-pwd.json",
    "openhands-v1-output": "openhands/OpenHands__software-agent-sdk__v1-output.jsonl",
    "swe-agent": "transcripts/swe-agent/SWE-agent__SWE-agent__gpt4-pydicom-1458.traj",
    "swe-agent-mini": "transcripts/swe-agent/"
    "gruckion__mini-swe-agent__gemini3pro-django__django-11138.traj.json",
    "gemini": "gemini/gemini-cli-0.61.0-20-reads.request.json",
}
"""One sample per JSON format (keyed by format, a suffix naming a second layout of it)."""
MARKDOWN_SAMPLES = {
    "specstory": (
        "specstory/specstoryai__tutorials__brief-readme-update-for-tutorial-repository.md"
    ),
    "gemini-cli-share": "gemini-cli-share/jimpelton__trackgen__research-chat1.md",
    "aider": "aider/AlexShchuka__mozgoslav__.aider.chat.history.md",
}
TURN_OPENINGS = ("_**User", "## USER", "#### ")
"""Where each Markdown format's first turn starts (SpecStory, Gemini CLI share, aider)."""


def _strings(value: Any) -> Iterator[tuple[Any, Any]]:
    """(container, key) of every string in ``value``, in document order."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(item, str):
            yield value, key
        elif isinstance(item, (dict, list)):
            yield from _strings(item)


def _grow_first_text(record: Any) -> bool:
    """Append ``BIG_TEXT`` to the record's first text (a string holding a space): an
    instruction, a message, a pasted file, wherever the format puts it first."""
    for container, key in _strings(record):
        if " " in container[key]:
            container[key] += BIG_TEXT
            return True
    return False


def _grown_json(source: Path, target: Path) -> Path:
    """A copy of ``source`` whose first record holding text (a JSONL line, or the document)
    has grown past the head."""
    text = source.read_text(encoding="utf-8")
    if source.suffix == ".jsonl":
        lines = text.split("\n")
        for n, line in enumerate(lines):
            record = json.loads(line)
            if _grow_first_text(record):
                lines[n] = json.dumps(record)
                break
        target.write_text("\n".join(lines), encoding="utf-8")
    else:
        document = json.loads(text)
        assert _grow_first_text(document)
        indent = 2 if text.lstrip()[1:2] == "\n" else None
        target.write_text(json.dumps(document, indent=indent), encoding="utf-8")
    return target


def _unnamed(tmp_path: Path, source: Path) -> Path:
    """Where the grown copy goes: a neutral name, so no loader knows it by its file name."""
    return tmp_path / ("session" + (".jsonl" if source.suffix == ".jsonl" else ".json"))


@pytest.mark.parametrize("kind", sorted(JSON_SAMPLES))
def test_a_first_record_bigger_than_the_head_is_told_by_its_keys(kind: str, tmp_path: Path) -> None:
    source = FIXTURES_DIR / JSON_SAMPLES[kind]
    expected = kind.split("-v1")[0].removesuffix("-jsonl").removesuffix("-mini")
    path = _grown_json(source, _unnamed(tmp_path, source))
    head = path.read_text(encoding="utf-8")[:SNIFF_BYTES]
    assert "module_2000.py" in head  # the grown text fills the head
    assert detect_format(path) == expected
    history = load(path)
    assert history.source is not None and history.source.unreadable == 0 and history.messages


@pytest.mark.parametrize("kind", sorted(MARKDOWN_SAMPLES))
def test_a_markdown_first_turn_bigger_than_the_head_is_told(kind: str, tmp_path: Path) -> None:
    lines = (FIXTURES_DIR / MARKDOWN_SAMPLES[kind]).read_text(encoding="utf-8").split("\n")
    at = next(n for n, line in enumerate(lines) if line.startswith(TURN_OPENINGS))
    path = tmp_path / "history.md"
    path.write_text("\n".join([*lines[: at + 2], BIG_TEXT, *lines[at + 2 :]]), encoding="utf-8")
    assert detect_format(path) == kind
    assert load(path).messages


def test_an_opencode_storage_session_with_a_big_summary_is_told(tmp_path: Path) -> None:
    session = tmp_path / "storage" / "session" / "prj1" / "ses_1.json"
    session.parent.mkdir(parents=True)
    info = {"id": "ses_1", "projectID": "prj1", "title": "t", "summary": {"diffs": [BIG_TEXT]}}
    session.write_text(json.dumps(info), encoding="utf-8")
    assert detect_format(session) == "opencode-storage"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {
                "messages": [
                    {"role": "system", "content": BIG_TEXT},
                    {"role": "user", "content": "fix it"},
                    {"role": "assistant", "content": None, "tool_calls": []},
                ],
                "model": "gpt-x",
            },
            "openai",
        ),
        (
            {
                "system": [{"type": "text", "text": BIG_TEXT}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
                    },
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}],
                    },
                ],
                "model": "claude-x",
            },
            "anthropic",
        ),
    ],
    ids=["openai", "anthropic"],
)
def test_a_request_body_whose_system_prompt_fills_the_head_is_told(
    body: dict[str, Any], expected: str, tmp_path: Path
) -> None:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    assert detect_format(path) == expected


def test_a_big_json_file_of_no_known_format_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text(json.dumps({"notes": BIG_TEXT, "tags": ["a"]}), encoding="utf-8")
    with pytest.raises(FormatError, match="could not tell the format") as info:
        detect_format(path)
    assert info.value.path == str(path)


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64])
def test_the_condensed_head_keeps_every_key_whatever_the_chunks(
    chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Escapes cut by a chunk's end, or by the kept length, never leave invalid JSON."""
    monkeypatch.setattr(sniffing, "CHUNK_BYTES", chunk)
    monkeypatch.setattr(sniffing, "KEPT_CHARS", 5)
    document: dict[str, Any] = {
        'q\\"': ['x\\"\u00e9\U0001f680\\u0041' * 4, {"k": "\\\\" * 9}],
        "z": 1,
    }
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    condensed = json.loads(sniffing.condensed_head(path))
    assert list(condensed) == list(document) and condensed["z"] == 1
    kept = condensed['q\\"'][0]
    assert kept and document['q\\"'][0].startswith(kept)


def test_a_file_whose_first_record_fits_is_shown_its_plain_head_only() -> None:
    """Detection reads no more of an ordinary file than its head."""
    path = FIXTURE_TRANSCRIPTS_DIR / "codex/EntityProcess__agentv__a392ff332928-s0-gpt-5.4.jsonl"
    text = path.read_bytes()[:SNIFF_BYTES].decode("utf-8", errors="replace")
    assert list(sniffing.sniffed_heads(path)) == [text]
