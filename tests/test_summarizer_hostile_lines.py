"""A failed output's line built to make a pattern backtrack (``x: x: x: …``, a row of ``=``) is
read in linear time: a session's summary never waits on one output, however it was written."""

from __future__ import annotations

import pytest

from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.commands import shell_refused
from contextwarden.summarizers.structured import StructuredSummarizer

LINE_CHARS = 100_000


@pytest.mark.timeout(60)
@pytest.mark.parametrize("unit", ["x: ", "a.b: ", "Error: ", "=", "  ", "\t", "1"])
def test_a_long_repeated_line_does_not_stall_the_summary(unit: str) -> None:
    """Each of these took minutes (a usage error's ``(?:name: )+.*``, pytest's count's ``=*``
    frame, a code frame's and a zero count's leading blanks, a measured change's number read
    from each of its digits); the failure line after it is still the one the summary quotes."""
    line = unit * (LINE_CHARS // len(unit))
    output = f"Exit code 1\n{line}\nerror: linker failed for target app"
    messages = [
        Message.user("Build it."),
        Message.assistant([ToolUseBlock("t1", "Bash", {"command": "make app"})]),
        Message.user([ToolResultBlock("t1", output, is_error=True)]),
        Message.assistant(f"The build failed: {line}"),
        Message.user("Try again."),
    ]
    summary = StructuredSummarizer().summarize(messages).text
    assert "error: linker failed for target app" in summary


@pytest.mark.timeout(60)
def test_many_shell_refusals_of_a_long_command_are_read_in_linear_time() -> None:
    """A step the command line handles (``foo … || true``) was read again, over the whole step,
    for each line of the output that names its word: minutes for a long command (a heredoc)
    whose output repeats the shell's refusal."""
    command = "foo" + " x" * (LINE_CHARS // 2) + " || true; bar"
    output = "\n".join(["bash: line 1: foo: command not found"] * 100_000)
    assert shell_refused(output, command) is None  # the step is handled: no failure
    assert shell_refused(f"{output}\nbash: line 2: bar: command not found", command) is not None
