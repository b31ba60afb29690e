"""Aider's chat log: typed input, aider's own output and the model's replies, chat by chat."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextwarden.errors import FormatError
from contextwarden.formats import detect_format, load
from contextwarden.rules import validate

SAMPLE = Path(__file__).parent / "data" / "aider" / "AlexShchuka__mozgoslav__.aider.chat.history.md"


def test_each_chat_is_a_conversation_picked_by_index() -> None:
    assert detect_format(SAMPLE) == "aider"
    first, second = load(SAMPLE, index=0), load(SAMPLE, index=1)
    assert first.source is not None and first.source.metadata["conversations"] == 2
    assert [m.role for m in first.messages] == ["user"]  # the model never answered
    assert "hi" in first.messages[0].text and "AuthenticationError" in first.messages[0].text
    assert [m.role for m in second.messages] == ["user", "assistant", "user", "assistant", "user"]
    with pytest.raises(FormatError, match="index 2 is out of range"):
        load(SAMPLE, index=2)


def test_typed_lines_aider_output_and_replies_keep_their_roles() -> None:
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    typed = [line[5:].rstrip() for line in lines if line.startswith("#### ")]
    history = load(SAMPLE, index=1)
    users = [m for m in history.messages if m.role == "user"]
    assert [t for t in typed[1:] if not any(t in m.text for m in users)] == []
    replies = [m.text for m in history.messages if m.role == "assistant"]
    assert replies[0].endswith("подожду, пока вы добавите их в чат.")
    assert "### Текущий этап RAG" in replies[1]  # the model's markdown stays whole
    assert not any(line.startswith(("> ", "#### ")) for r in replies for line in r.splitlines())
    last = history.messages[-1]
    assert last.meta.extra["injected"] is True and last.meta.extra["injected_kind"] == "aider"
    assert last.text == "Tokens: 1.9k sent, 2.4k received."
    assert validate(history.messages) == []
    assert history.source is not None
    assert history.source.metadata["command"].startswith("/Users/aleksandr/.local/bin/aider")


def test_markdown_that_is_not_an_aider_log_is_refused(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Shopping\n\n- milk\n- bread\n")
    with pytest.raises(FormatError, match="--format"):
        load(notes)
    with pytest.raises(FormatError, match="Shopping") as info:
        load(notes, "aider")
    assert "line 1" in str(info.value)
    assert load(notes, "aider", lenient=True).messages  # salvage keeps the text
