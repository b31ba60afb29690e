"""One table of tool names across agents (``contextwarden.toolnames``), read by the summarizer,
the compaction rungs and the file tracker alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextwarden.compaction.tools import ToolMatcher
from contextwarden.files import FileTracker
from contextwarden.formats import load
from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failures import result_failure
from contextwarden.summarizers.structured import StructuredSummarizer
from contextwarden.summarizers.tools import file_ops, is_shell, shell_command, todo_items
from contextwarden.toolnames import (
    aliases_of,
    canonical,
    is_editor,
    is_patch,
    patch_files,
    patch_text,
    path_of,
)

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Read", "Read"),
        ("read", "Read"),  # OpenCode
        ("read_file", "Read"),  # Gemini CLI, Cline
        ("view", "Read"),  # Copilot CLI
        ("copilot_readFile", "Read"),  # Copilot in VS Code, as SpecStory names its step
        ("copilot_replaceString", "Edit"),
        ("copilot_findTextInFiles", "Grep"),
        ("copilot_listDirectory", "Glob"),
        ("mcp__files__Read_File", "Read"),
        ("write_to_file", "Write"),  # Cline
        ("replace_in_file", "Edit"),  # Cline
        ("apply_diff", "Edit"),  # Roo Code
        ("replace", "Edit"),  # Gemini CLI
        ("str_replace_editor", "Edit"),
        ("apply_patch", "Edit"),
        ("execute_command", "Bash"),  # Cline
        ("run_shell_command", "Bash"),  # Gemini CLI
        ("powershell", "Bash"),  # Copilot CLI on Windows
        ("run_terminal_cmd", "Bash"),  # Cursor
        ("list_directory", "Glob"),
        ("search_file_content", "Grep"),
        ("write_todos", "TodoWrite"),
        ("update_plan", "TodoWrite"),
        ("attempt_completion", None),
        (None, None),
    ],
)
def test_every_agents_name_maps_to_one_canonical_tool(name: str | None, expected: str) -> None:
    assert canonical(name) == expected


QWEN_CODE_TOOLS = {
    "read_file": "Read",
    "write_file": "Write",
    "edit": "Edit",
    "grep_search": "Grep",
    "glob": "Glob",
    "list_directory": "Glob",
    "run_shell_command": "Bash",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
    "todo_write": "TodoWrite",
}
"""qwen-code 0.24.4's file, shell, web and todo tools (its ``ToolNames``), by what they do."""


def test_qwen_codes_tools_map_onto_the_canonical_ones() -> None:
    assert {name: canonical(name) for name in QWEN_CODE_TOOLS} == QWEN_CODE_TOOLS


def test_the_editor_and_patch_families_are_named_apart_and_count_as_edits() -> None:
    assert is_editor("str_replace_based_edit_tool") and not is_editor("edit")
    assert is_patch("apply_patch") and not is_patch("Edit")
    assert ToolMatcher(["Edit"]).canonical("apply_patch") == "Edit"


def ops(name: str, **args: object) -> list[tuple[str, str]]:
    return [(op.path, op.operation) for op in file_ops(ToolUseBlock("t1", name, args))]


def test_file_tools_of_every_agent_name_their_file() -> None:
    assert ops("read", filePath="/w/src/app.ts") == [("/w/src/app.ts", "read")]  # OpenCode
    assert ops("edit", filePath="a.ts", oldString="x", newString="y") == [("a.ts", "edited")]
    assert ops("write_to_file", path="b.py", content="x = 1\n") == [("b.py", "wrote")]  # Cline
    assert ops("replace_in_file", path="b.py", diff="<<<<<<< SEARCH") == [("b.py", "edited")]
    assert ops("read_file", absolute_path="/w/c.go") == [("/w/c.go", "read")]  # Gemini CLI 0.1
    assert ops("read_many_files", paths=["a.md", "b.md"]) == [("a.md", "read"), ("b.md", "read")]
    assert ops("edit_file", target_file="d.rs", code_edit="fn x() {}") == [("d.rs", "edited")]
    assert ops("view", path="e.txt") == [("e.txt", "read")]  # Copilot CLI
    assert ops("list_directory", path="src") == [("src", "searched")]
    assert ops("attempt_completion", result="done") == []


def test_shells_of_every_agent_are_read_as_commands() -> None:
    for name in ("execute_command", "powershell", "run_terminal_cmd", "run_shell_command"):
        block = ToolUseBlock("t1", name, {"command": "cat README.md"})
        assert is_shell(block) and shell_command(block) == "cat README.md"
    assert ops("powershell", command="cat notes.txt") == [("notes.txt", "read")]


def test_gemini_todos_are_a_todo_list() -> None:
    block = ToolUseBlock(
        "t1", "write_todos", {"todos": [{"description": "port the parser", "status": "pending"}]}
    )
    items = todo_items(block)
    assert items is not None and [(i.text, i.status) for i in items] == [
        ("port the parser", "pending")
    ]


def test_a_file_read_that_says_error_is_not_a_failure_whatever_the_agent_calls_it() -> None:
    for name in ("Read", "read", "view", "read_file", "search_file_content"):
        call = ToolUseBlock("t1", name, {"filePath": "log.txt"})
        assert result_failure(call, ToolResultBlock("t1", "line 3: Error: disk full")) is None
    shell = ToolUseBlock("t2", "powershell", {"command": "cat log.txt; exit 1"})
    assert result_failure(shell, ToolResultBlock("t2", "Error: disk full", True)) is not None


def test_the_file_tracker_knows_opencodes_file_path_key() -> None:
    tracker = FileTracker()
    use = ToolUseBlock("t1", "read", {"filePath": "src/app.ts"})
    tracker.observe(Message.assistant([use]))
    assert tracker.recent() == ["src/app.ts"]


def test_a_real_opencode_sessions_reads_are_in_the_summarys_file_list() -> None:
    """OpenCode names the file of its read, edit and write tools ``filePath``."""
    path = DATA / "opencode" / "victoryforphil__dark-factory__silent-nebula.json"
    summary = StructuredSummarizer().summarize(load(path).messages)
    assert "dark-factory/scripts/install.sh.ts` — read" in summary.sections[3]


def test_a_patch_names_each_file_with_its_operation_and_its_own_lines() -> None:
    text = (
        "*** Begin Patch\n*** Add File: docs/new.md\n+hello\n"
        "*** Update File: src/app.py  \n@@\n-old\n+new\n*** Delete File: old.txt\n*** End Patch"
    )
    files = list(patch_files(text))
    assert [(f.operation, f.path) for f in files] == [
        ("Add", "docs/new.md"),
        ("Update", "src/app.py"),
        ("Delete", "old.txt"),
    ]
    assert files[1].body == ("@@", "-old", "+new")
    assert patch_text({"cmd": text}) == text  # whatever key the loader kept it under
    assert patch_text({"input": "no patch"}) == "no patch"


def test_the_tracker_and_the_summary_read_the_same_files_from_a_patch() -> None:
    text = "*** Begin Patch\n*** Update File: a.py\n-x\n+y\n*** Delete File: b.py\n*** End Patch"
    use = ToolUseBlock(id="t1", name="apply_patch", input={"input": text})
    ops = file_ops(use)
    assert [(op.path, op.operation) for op in ops] == [("a.py", "edited"), ("b.py", "deleted")]
    tracked = FileTracker(tools=("apply_patch",)).paths_of(Message("assistant", (use,)))
    assert tracked == ["a.py"]  # a deleted file is nothing to re-read


def test_a_path_is_read_by_the_first_key_that_names_one_blanks_dropped() -> None:
    assert path_of({"path": "  ", "filePath": " src/x.ts\n"}) == "src/x.ts"
    assert path_of({"command": "ls"}) is None


def test_a_limit_set_for_a_canonical_tool_covers_its_aliases_only() -> None:
    assert "read_file" in aliases_of("Read") and "read_file" in aliases_of("read")
    assert aliases_of("read_file") == () and aliases_of("Unknown") == ()


def test_a_versioned_tool_name_is_the_tool_it_versions() -> None:
    # Cursor 2 renamed its tools read_file_v2, edit_file_v2, run_terminal_command_v2.
    assert canonical("read_file_v2") == "Read" and canonical("edit_file_v2") == "Edit"
    assert canonical("run_terminal_command_v2") == "Bash"
    assert canonical("mcp__fs__read_file_v3") == "Read"
    assert canonical("glob_file_search") == "Glob" and canonical("ripgrep_raw_search") == "Grep"
    assert canonical("v2") is None and canonical("dev") is None
