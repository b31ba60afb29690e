"""Gemini CLI v0.6's ``/chat share`` layout (``**user**:`` / ``**model**:``, text parts alone) is
detected and loaded, and an export pasted below a write-up's notes is detected in any layout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import FIXTURES_DIR

from contextwarden.errors import FormatError
from contextwarden.eval.replay import replay
from contextwarden.formats import detect_format, load
from contextwarden.model import TextBlock
from contextwarden.rules import validate
from contextwarden.summarizers.typed import typed_texts

V06 = FIXTURES_DIR / "gemini-cli-share/handwritten-v0.6-share.md"
"""Written by hand as v0.6's ``serializeHistoryToMarkdown`` writes (see tests/data/SOURCES.md)."""
ICON_FIRST = FIXTURES_DIR / "gemini-cli-share/jaymcortest__unidoku__rut.md"
SEPARATOR = "\n\n---\n\n"
HEADING = re.compile(r"\*\*(user|model)\*\*:\n\n")
REFERENCED = "\n--- Content from referenced files ---"
V06_WINDOW = 300
"""Below the ~560 tokens of the v0.6 fixture, above its largest message (~200)."""


def _sections(text: str) -> list[tuple[int, str, str]]:
    """(line, role, body) of each section, read with the exporter's own join."""
    found, line = [], 1
    for chunk in text.split(SEPARATOR):
        match = HEADING.match(chunk)
        assert match is not None, chunk[:40]
        found.append((line, match.group(1), chunk[match.end() :]))
        line += chunk.count("\n") + SEPARATOR.count("\n")
    return found


def _written(tmp_path: Path, text: str, name: str = "chat.md") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))  # as given: no newline translation
    return path


def test_a_v06_export_is_detected_and_every_text_loads_in_order() -> None:
    text = V06.read_text(encoding="utf-8")
    assert detect_format(V06) == "gemini-cli-share"
    history = load(V06)
    assert validate(history.messages) == []
    assert history.source is not None and history.source.records == len(_sections(text))
    expected = []
    for _, role, body in _sections(text):
        head, mark, files = body.partition(REFERENCED) if role == "user" else (body, "", "")
        expected += [piece for piece in (head, mark.lstrip("\n") + files) if piece.strip()]
    blocks = [b for m in history.messages for b in m.content]
    assert all(isinstance(b, TextBlock) for b in blocks)
    assert [b.text for b in blocks if isinstance(b, TextBlock)] == expected
    roles = [m.role for m in history.messages]
    assert roles == ["user", "assistant"] * (len(roles) // 2)


def test_the_empty_sections_v06_left_of_tool_turns_are_reported_once_by_line() -> None:
    empty = [line for line, _, body in _sections(V06.read_text(encoding="utf-8")) if not body]
    report = load(V06).source
    assert report is not None and report.metadata["unwritten_sections"] == empty
    (issue,) = report.issues
    assert issue.line == empty[0] and f"{len(empty)} section(s)" in issue.message
    assert "v0.6" in issue.message


def test_the_setup_context_and_an_at_file_are_not_read_as_typed() -> None:
    setup, _, asked, *_ = load(V06).messages
    assert setup.meta.extra["injected"] is True and list(typed_texts(setup)) == []
    (typed,) = typed_texts(asked)
    assert typed.startswith("Why does `python -m pytest` fail on @weather.py?")
    (files,) = asked.meta.extra["injected_texts"]
    assert files.startswith("--- Content from referenced files ---")


def test_a_windows_export_loads_as_the_same_contents(tmp_path: Path) -> None:
    text = V06.read_text(encoding="utf-8")
    path = _written(tmp_path, text.replace("\n", "\r\n"))
    assert detect_format(path) == "gemini-cli-share"
    assert [m.content for m in load(path).messages] == [m.content for m in load(V06).messages]


@pytest.mark.parametrize("export", [V06, ICON_FIRST], ids=["v0.6", "icon-first"])
def test_an_export_pasted_below_a_write_ups_notes_is_detected(tmp_path: Path, export: Path) -> None:
    """As the write-ups that end in the chat that solved them do: the notes are not a turn."""
    notes = "# Day 5\n\nThe flag is in the manifest.\n\n## AI solution\n\nThe agent's chat:\n\n"
    path = _written(tmp_path, notes + export.read_text(encoding="utf-8"))
    assert detect_format(path) == "gemini-cli-share"
    history, original = load(path), load(export)
    assert [m.content for m in history.messages] == [m.content for m in original.messages]
    assert history.source is not None and history.source.metadata["preamble"] == notes


@pytest.mark.parametrize(
    "text",
    [
        "**user**:\n\nhello\n",
        "# Notes\n\n**user**:\n\nhello\n\n---\n\n**Model**: Claude\n",
        "**model**:\n\nhi\n\n---\n\n## USER 🧑‍💻\n\nthere\n",
    ],
    ids=["one-section", "inline-bold-label", "two-layouts"],
)
def test_a_text_with_fewer_than_two_sections_of_one_layout_is_not_detected(
    tmp_path: Path, text: str
) -> None:
    with pytest.raises(FormatError, match="could not tell the format"):
        detect_format(_written(tmp_path, text, "notes.md"))


def test_a_heading_of_the_other_layout_after_a_separator_stays_text(tmp_path: Path) -> None:
    """A file is written in one layout: a reply quoting another export keeps the quote."""
    quote = "An export looks like this:\n\n---\n\n🧑‍💻 ## USER\n\nhello"
    text = V06.read_text(encoding="utf-8") + f"{SEPARATOR}**user**:\n\nShow me.{SEPARATOR}"
    history = load(_written(tmp_path, text + f"**model**:\n\n{quote}"))
    assert history.messages[-1].text == quote
    head, mark, tail = ICON_FIRST.read_text(encoding="utf-8").rpartition(f"{SEPARATOR}✨ ## MODEL")
    quoted = f"{head}{SEPARATOR}**model**:\n\nquoted{mark}{tail}"
    icon, original = load(_written(tmp_path, quoted, "icon.md")), load(ICON_FIRST)
    assert len(icon.messages) == len(original.messages)
    assert icon.messages[-2].text.endswith(f"{SEPARATOR}**model**:\n\nquoted")


def test_an_export_of_empty_sections_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = _written(tmp_path, SEPARATOR.join(["**user**:\n\n", "**model**:\n\n"] * 2))
    with pytest.raises(FormatError, match="no message could be read") as caught:
        load(path)
    assert str(path) in str(caught.value)


def test_a_replay_of_the_v06_export_in_a_small_window_compacts_it_validly() -> None:
    run = replay(load(V06), ("ladder",), window=V06_WINDOW).runs["ladder"]
    assert run.compactions and run.invalid_requests == 0 and run.over_window == 0
