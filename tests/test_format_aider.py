"""Aider's chat log: typed input, aider's own output and the model's replies, chat by chat."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextwarden.compaction.microcompact import FAILED_LINES_NOTE, MicroCompact
from contextwarden.errors import FormatError
from contextwarden.formats import detect_format, load
from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.rules import validate
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.failures import result_failure
from contextwarden.summarizers.typed import user_messages

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


# aider's own output as its browser UI (``aider --gui``) logs it, in the formats of aider 0.55's
# io.py, gui.py, linter.py and coders/editblock_coder.py (a real log: benchmarks/fresh_probes28).
FLAKE8 = (
    "/usr/bin/python3 -m flake8 --select=E9,F821,F823,F831,F406,F407,F701,F702,F704,F706 "
    "--show-source --isolated parser.py"
)
LINT = [
    "# Fix any errors below, if possible.",
    "",
    f"## Running: {FLAKE8}",
    "",
    "parser.py:12:20: F821 undefined name 'futures'",
    "            except futures.TimeoutError:",
    "                   ^",
    "",
    "## See relevant line below marked with █.",
]
FAILED = [
    "# 1 SEARCH/REPLACE block failed to match!",
    "",
    "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in parser.py",
    "<<<<<<< SEARCH",
    "import os",
    "=======",
    "import os, futures",
    ">>>>>>> REPLACE",
    "",
    "The SEARCH section must exactly match an existing block of lines including all white space,"
    " comments, indentation, docstrings, etc",
]
REPLY = ["parser.py", "```python", "<<<<<<< SEARCH", "import os", "=======", "import os",
         "import concurrent", ">>>>>>> REPLACE", "```"]  # fmt: skip


def _quoted(lines: list[str]) -> list[str]:
    return [f"> {line.strip()}  " if line.strip() else ">  " for line in lines]


def _typed(lines: list[str]) -> list[str]:
    return ["", *(f"#### {line}  " for line in lines), ""]


def _gui_log(tmp_path: Path) -> Path:
    """A chat where aider lints a reply's edit, then fails to apply the next reply's edit, and
    sends each report (and the files the person let it add) to the model as the next prompt."""
    lines = [
        "# aider chat started at 2024-09-06 06:00:35",
        "",
        *_quoted(["aider --gui", "Aider v0.55.1"]),
        *_typed(["make the parser faster"]),
        "I'll run the work in a thread pool.",
        "",
        *REPLY,
        "",
        *_quoted(["Applied edit to parser.py", "Commit 2d08cd8 refactor: parallelize", *LINT]),
        *_quoted(["Attempt to fix lint errors? (Y)es/(N)o [Yes]: y"]),
        *_typed(LINT),
        "The module is not imported; I'll import it.",
        "",
        *REPLY,
        "",
        *_quoted(["The LLM did not conform to the edit format.", FAILED[0]]),
        *FAILED[1:],  # tool_output quotes a multi-line message's first line only
        *_typed(FAILED),
        "Please add utils.py to the chat.",
        "",
        *_quoted(["Add utils.py to the chat? (Y)es/(N)o [Yes]: y"]),
        *_typed(["I added these files to the chat: utils.py",
                 "Let me know if there are others we should add."]),
        "Thanks, the parser is done.",
        "",
        *_typed(["and the tests?"]),
    ]  # fmt: skip
    log = tmp_path / ".aider.chat.history.md"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return log


def test_what_aider_sent_in_the_persons_name_is_not_typed(tmp_path: Path) -> None:
    history = load(_gui_log(tmp_path))
    typed = [m.text for m in user_messages(history.messages)]
    assert typed == ["make the parser faster", "and the tests?"]
    injected = [m for m in history.messages if m.role == "user" and m.meta.extra.get("injected")]
    assert any("F821 undefined name 'futures'" in m.text for m in injected)
    assert any("I added these files to the chat: utils.py" in m.text for m in injected)
    assert validate(history.messages) == []


def test_a_failed_edit_report_is_aiders_output_not_the_models_reply(tmp_path: Path) -> None:
    history = load(_gui_log(tmp_path))
    replies = [m.text for m in history.messages if m.role == "assistant"]
    assert not any("SearchReplaceNoExactMatch" in r or "SEARCH section" in r for r in replies)
    assert any(r.startswith("The module is not imported") for r in replies)
    report = next(m for m in history.messages if FAILED[2] in m.text)
    assert report.role == "user" and report.meta.extra["injected"] is True


def test_a_report_without_its_closing_line_stays_the_models_text(tmp_path: Path) -> None:
    log = tmp_path / ".aider.chat.history.md"
    text = "\n".join(["# aider chat started at 2024-09-06 06:00:35", "", *_typed(["go"]),
                      *_quoted([FAILED[0]]), "", "A reply that is no report."])  # fmt: skip
    log.write_text(text + "\n", encoding="utf-8")
    assert load(log).messages[-1].role == "assistant"


def test_a_reply_aider_linted_has_the_linters_failure_as_its_error(tmp_path: Path) -> None:
    history = load(_gui_log(tmp_path))
    linted = next(m for m in history.messages if m.meta.extra.get("action"))
    assert linted.text.startswith("I'll run the work in a thread pool.")
    assert linted.meta.extra["action"] == FLAKE8
    errors = extract_facts(history.messages).errors
    assert errors[0].excerpt == "parser.py:12:20: F821 undefined name 'futures'"


def test_a_reply_whose_edits_aider_could_not_apply_is_a_failed_edit(tmp_path: Path) -> None:
    history = load(_gui_log(tmp_path))
    failed = next(m for m in history.messages if m.meta.extra.get("edit"))
    assert failed.text.startswith("The module is not imported")
    assert failed.meta.extra["edit"] == "parser.py"
    error = extract_facts(history.messages).errors[-1]
    assert (error.excerpt, error.more) == (FAILED[0], (FAILED[2],))
    assert error.target == "parser.py"
    messages = history.messages[: history.messages.index(failed) + 3]
    cleared = MicroCompact(keep_recent=0, tools=["Bash"], min_saving=0)(messages).messages
    report = [m for m in cleared if FAILED_LINES_NOTE in m.text][-1]
    assert FAILED[0] in report.text and FAILED[2] in report.text and "import os" not in report.text


def test_a_line_the_person_types_after_aider_printed_it_stays_typed(tmp_path: Path) -> None:
    log = tmp_path / ".aider.chat.history.md"
    text = "\n".join(["# aider chat started at 2024-09-06 06:00:35", "", *_typed(["go"]),
                      "Run it with:", "", "```bash", "python main.py", "```", "",
                      *_quoted(["python main.py", "Run shell command? (Y)es/(N)o [Yes]: n"]),
                      *_typed(["python main.py"])])  # fmt: skip
    log.write_text(text + "\n", encoding="utf-8")
    typed = [m.text for m in user_messages(load(log).messages)]
    assert typed == ["go", "python main.py"]


def test_a_failed_edit_report_read_from_a_file_or_printed_is_no_failure() -> None:
    report = ToolResultBlock("c1", "\n".join(FAILED))
    read = ToolUseBlock("c1", "Read", {"file_path": ".aider.chat.history.md"})
    printed = ToolUseBlock("c1", "Bash", {"command": "cat .aider.chat.history.md"})
    assert result_failure(read, report) is None
    assert result_failure(printed, report) is None
