"""aider's edits read from its log: the SEARCH/REPLACE blocks of a reply and aider's output after
it (``Applied edit to``, the failed-edit report) as the files and errors of a summary."""

from __future__ import annotations

from pathlib import Path

from contextwarden.compaction.base import CompactionContext
from contextwarden.compaction.microcompact import FAILED_LINES_NOTE, MicroCompact
from contextwarden.formats import load
from contextwarden.model import Message
from contextwarden.summarizers.facts import extract_facts

# The formats of aider 0.55's coders/editblock_coder.py and base_coder.py, as its terminal UI
# logs them (``> `` before aider's output; a multi-line message quoted on its first line only).
SEARCH = "def parse(text):\n    return text.split()\n"
FAILED = [
    "# 1 SEARCH/REPLACE block failed to match!",
    "",
    "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in lib/parse.py",
    "<<<<<<< SEARCH",
    *SEARCH.splitlines(),
    "=======",
    "def parse(text):",
    "    return text.split(',')",
    ">>>>>>> REPLACE",
    "",
    "The SEARCH section must exactly match an existing block of lines including all white space,"
    " comments, indentation, docstrings, etc",
]


def _block(path: str, fence: tuple[str, str] = ("```python", "```")) -> list[str]:
    replace = ["def parse(text):", "    return text.split(',')"]
    return [path, fence[0], "<<<<<<< SEARCH", *SEARCH.splitlines(), "=======", *replace,
            ">>>>>>> REPLACE", fence[1]]  # fmt: skip


def _log(tmp_path: Path) -> list[Message]:
    """A chat where the first reply's block fails to match, the second (aider's retry) applies
    (its file in a ``<source>`` fence, as aider asks when the file holds backticks) and the
    third writes a whole file, which only aider's ``Applied edit to`` line names."""
    lines = [
        "# aider chat started at 2024-09-06 06:00:35",
        "",
        "#### split on commas  ",
        "",
        "I'll change the separator.",
        "",
        *_block("lib/parse.py"),
        "",
        "> Tokens: 2.1k sent, 120 received.  ",
        f"> {FAILED[0]}  ",
        *FAILED[1:],  # aider sends the model the report (a terminal logs no reflected message)
        "",
        "Here is the fixed block.",
        "",
        *_block("lib/parse.py", ("<source>python", "</source>")),
        "",
        "> Applied edit to lib/parse.py  ",
        "> Commit 2d08cd8 fix: split on commas  ",
        "",
        "#### and a README  ",
        "",
        "README.md",
        "```",
        "# parse",
        "```",
        "",
        "> Applied edit to README.md  ",
        "",
        "#### thanks  ",
    ]
    log = tmp_path / ".aider.chat.history.md"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return list(load(log).messages)


def test_the_files_a_replys_edits_touch_are_listed(tmp_path: Path) -> None:
    files = {f.path: f.operations for f in extract_facts(_log(tmp_path)).files}
    assert files == {"lib/parse.py": ("edited (failed)", "edited"), "README.md": ("edited",)}


def test_a_failed_edit_report_is_an_error_fixed_by_the_edit_that_applied(tmp_path: Path) -> None:
    messages = _log(tmp_path)
    errors = extract_facts(messages).errors
    assert [(e.tool, e.target, e.excerpt, e.fixed) for e in errors] == [
        ("Edit", "lib/parse.py", FAILED[0], True)
    ]
    assert FAILED[2].removeprefix("## ") in "\n".join(errors[0].more)
    unfixed = extract_facts(messages[:4]).errors  # the chat cut before the retry
    assert [e.fixed for e in unfixed] == [False]


def test_a_reply_whose_edits_aider_applied_still_ends_the_turn(tmp_path: Path) -> None:
    facts = extract_facts(_log(tmp_path))
    assert [m.text for m in facts.pending_requests] == ["thanks"]
    assert [text.splitlines()[0] for _, text in facts.answers][-1] == "README.md"


def test_microcompact_keeps_the_error_lines_of_a_cleared_report(tmp_path: Path) -> None:
    messages = _log(tmp_path)
    result = MicroCompact(keep_recent=0, min_saving=0)(messages, CompactionContext())
    report = next(m.text for m in result.messages if "# 1 SEARCH/REPLACE" in m.text)
    assert FAILED_LINES_NOTE in report and "The SEARCH section must" not in report
    assert FAILED[2].removeprefix("## ") in report


def test_a_code_block_in_a_reply_aider_did_not_answer_is_no_edit(tmp_path: Path) -> None:
    log = tmp_path / ".aider.chat.history.md"
    text = "\n".join(["# aider chat started at 2024-09-06 06:00:35", "", "#### show me", "",
                      "An example of the format:", "", *_block("lib/parse.py"), "",
                      "#### ok"])  # fmt: skip
    log.write_text(text + "\n", encoding="utf-8")
    facts = extract_facts(list(load(log).messages))
    assert facts.files == () and facts.errors == ()
