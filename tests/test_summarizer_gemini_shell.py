"""Gemini CLI's ``run_shell_command`` result (``Command:``, ``Directory:``, ``Output:``,
``Error:``, ``Exit Code:`` … fields, as its ``docs/tools/shell.md`` lists them) is read as the
program's output: a failure's lines are the program's, not the command's own lines (a
here-document) nor ``Error: (none)``. The results are written here in that layout."""

from __future__ import annotations

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failures import failure_lines
from contextwarden.summarizers.gemini_shell import shell_result_output
from contextwarden.summarizers.outputs import exit_status, program_output

COMMAND = "cat >> ~/.ssh/config <<EOF\nHost 10.0.0.1\n    LogLevel ERROR\nEOF\n"
HEREDOC = (
    f"Command: {COMMAND}"
    "Directory: (root)\n"
    "Output: bash: line 5: warning: here-document at line 1 delimited by end-of-file "
    "(wanted `EOF')\n"
    "bash: -c: line 6: syntax error: unexpected end of file\n"
    "Error: (none)\n"
    "Exit Code: 2\n"
    "Signal: (none)\n"
    "Background PIDs: (none)\n"
    "Process Group PGID: 4242"
)


def test_the_fields_are_read_as_the_program_output() -> None:
    assert shell_result_output(HEREDOC) == (
        "bash: line 5: warning: here-document at line 1 delimited by end-of-file (wanted `EOF')\n"
        "bash: -c: line 6: syntax error: unexpected end of file\n"
        "Exit Code: 2"
    )
    assert program_output(HEREDOC) == shell_result_output(HEREDOC)
    assert exit_status(HEREDOC) == 2


def test_an_error_the_program_printed_and_the_subprocess_error_are_kept() -> None:
    text = (
        "Command: ./deploy.sh\nDirectory: app\nOutput: Error: token expired\n"
        "Error: Command exited with code 1\nExit Code: 1\nSignal: (none)\n"
        "Background PIDs: (none)\nProcess Group PGID: 7"
    )
    assert shell_result_output(text) == (
        "Error: token expired\nCommand exited with code 1\nExit Code: 1"
    )


def test_other_text_is_not_read_so() -> None:
    assert shell_result_output("Command: not a result\nhello") is None
    assert shell_result_output("plain output") is None


def test_a_failure_keeps_the_program_lines_only() -> None:
    call = ToolUseBlock(id="g1", name="run_shell_command", input={"command": COMMAND})
    kept = failure_lines(call, ToolResultBlock(tool_use_id="g1", content=HEREDOC), 4)
    assert kept[0] == "bash: -c: line 6: syntax error: unexpected end of file"
    assert "Error: (none)" not in kept
    assert not any("LogLevel" in line for line in kept)
