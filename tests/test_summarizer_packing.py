"""What a summary's fixed lines cost, summary after summary: a carried file's operations are
counted again with the new ones (not ``earlier: …`` grown at each compaction), and the user
messages an earlier summary quoted are named once, not in each header. Every request pays for
each word."""

from __future__ import annotations

from contextwarden.compaction.summarize import CONTINUATION_NOTE
from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers import StructuredSummarizer, extract_facts

# A decision and a finding in an agent's own words (Claude Code, a Python project's test run).
CAUSE = "The fixture fails because `tmp_path` is function-scoped, so I'll use `tmp_path_factory`."
READ = "The teardown order is fixture scope first, then `autouse` hooks in `conftest.py` line 40."


def edit_session(round_: int) -> list[Message]:
    """One round of a Claude Code session: read ``conftest.py``, edit it (Read and Edit are
    the tool names and inputs Claude Code's transcripts record), say why."""
    read = ToolUseBlock(f"r{round_}", "Read", {"file_path": "/repo/tests/conftest.py"})
    edit = ToolUseBlock(
        f"e{round_}",
        "Edit",
        {"file_path": "/repo/tests/conftest.py", "old_string": "a", "new_string": "b"},
    )
    return [
        Message.user(f"Round {round_}: fix the fixture."),
        Message.assistant([read]),
        Message.user([ToolResultBlock(f"r{round_}", "import pytest\n")]),
        Message.assistant(READ),
        Message.assistant([edit]),
        Message.user([ToolResultBlock(f"e{round_}", "The file has been updated.")]),
        Message.assistant(CAUSE),
        Message.user("Thanks."),
        Message.assistant("Done."),
    ]


def compacted(rounds: int) -> str:
    """The summary after ``rounds`` compactions, each of the last summary and a new round."""
    text = ""
    for round_ in range(rounds):
        earlier = [Message.user(f"{CONTINUATION_NOTE}\n\n<summary>\n{text}\n</summary>")]
        messages = [*(earlier if text else []), *edit_session(round_)]
        text = StructuredSummarizer().summarize(messages).text
    return text


def test_a_carried_file_is_counted_again_not_restated_after_each_compaction() -> None:
    line = next(
        line for line in compacted(4).splitlines() if line.startswith("- `/repo/tests/conftest")
    )
    assert line == "- `/repo/tests/conftest.py` — read (4), edited (4); last: edited (+1 -1 lines)"


def test_a_carried_files_operations_are_its_counts_with_the_last_one_last() -> None:
    from contextwarden.summarizers.file_facts import carried_operations  # new: fails on the old

    done = "read (3), edited (failed) (2), edited; last: read (120 lines)"
    ops = [(op.operation, op.detail) for op in carried_operations("a.py", done)]
    assert ops == [
        *[("read", "")] * 2,
        *[("edited (failed)", "")] * 2,
        ("edited", ""),
        ("read", "120 lines"),
    ]
    # a line in a layout not read back is carried as written, as before
    assert [op.operation for op in carried_operations("a.py", "moved to b/ (+3)")] == [
        "earlier: moved to b/ (+3)"
    ]


def test_the_user_messages_an_earlier_summary_quoted_are_named_once() -> None:
    text = compacted(3)
    six = text[text.index("6. All User Messages:") : text.index("7. Pending Tasks:")]
    assert "from an earlier summary]" not in six
    assert "(#1-#4 from an earlier summary)" in six
    facts = extract_facts([Message.user(f"{CONTINUATION_NOTE}\n\n<summary>\n{text}\n</summary>")])
    assert [m.text for m in facts.user_messages] == [
        f"{said}"
        for round_ in range(3)
        for said in (f"Round {round_}: fix the fixture.", "Thanks.")
    ]
