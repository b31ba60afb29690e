"""Verification of LLM summaries against the facts, and reading their sections back."""

from __future__ import annotations

from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.carry import carried_user_messages
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.verify import ADDED_HEADING, split_sections, verify
from contextwarden.tokens.heuristic import HeuristicCounter

COUNTER = HeuristicCounter()


def conversation() -> list[Message]:
    return [
        Message.user("Rename   the flag\nto --json, please."),
        Message.assistant(
            [
                TextBlock("ok"),
                ToolUseBlock("1", "Grep", {"pattern": "x", "path": "src"}),
                ToolUseBlock("2", "Read", {"file_path": "src/cli.py"}),
            ]
        ),
        Message.user([ToolResultBlock("1", "src/cli.py:3: x"), ToolResultBlock("2", "code")]),
        Message.assistant("Renamed."),
        Message.user("thanks"),
    ]


def test_whitespace_is_folded_and_searched_directories_are_not_required() -> None:
    text = 'Summary.\n6. All User Messages:\n- "Rename the flag to --json, please."\n- "thanks"\n'
    full, added = verify(text + "Read src/cli.py.", extract_facts(conversation()), COUNTER)
    assert added == () and full == text + "Read src/cli.py."


def test_missing_facts_are_appended_and_carried_forward() -> None:
    text = "1. Primary Request and Intent:\nRename a flag.\n\n6. All User Messages:\n- thanks\n"
    full, added = verify(text, extract_facts(conversation()), COUNTER)
    assert added == ("user message #1", "file src/cli.py")
    assert full.startswith(text.rstrip()) and ADDED_HEADING in full
    # A later compaction reads the LLM's section 6 as one piece, then what we appended, verbatim.
    assert carried_user_messages(full) == ("- thanks", "Rename   the flag\nto --json, please.")


def test_sections_read_back_from_markdown_headings_only() -> None:
    text = (
        "## 1. Primary Request and Intent:\nDo X.\n1. Make a list\n2. Keep going\n\n"
        "**3. Files and Code Sections:**\n- a.py\n\n"
        "6. All user messages:\n- hi\n\n9. Optional Next Step: None\n\n"
        f"{ADDED_HEADING}\nextra"
    )
    sections = split_sections(text)
    assert sections[1] == "Do X.\n1. Make a list\n2. Keep going"  # a list is not a heading
    assert sections[3] == "- a.py"
    assert sections[6] == "- hi"
    assert sections[9] == ""
    assert sections[10] == "extra"
    assert 2 not in sections
