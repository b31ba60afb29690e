"""A terminal's screen rows, written out one per line, joined again where a row broke a failure
line mid-word at the terminal's width (``summarizers.terminal_wrap``).

The outputs are written here in the shape SpecStory saves Cursor's terminal in: each row at most
the terminal's width, a longer line broken into rows with no mark (xterm.js ``isWrapped``).
"""

from __future__ import annotations

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failures import failure_lines, result_failure
from contextwarden.summarizers.terminal_wrap import unwrapped

# a 60-column terminal: the prompt's and the error's rows reach its width
WRAPPED_CAT = (
    "(venv) dev@host app % cat ~/.cache/app-name/servers-list.jso\n"
    "n\n"
    "cat: /Users/dev/.cache/app-name/servers-list.json: No such f\n"
    "ile or directory\n"
    "(venv) dev@host app %\n"
)


def terminal(command: str) -> ToolUseBlock:
    return ToolUseBlock("text-call-3-0", "run_terminal_cmd", {"command": command})


def test_a_failure_line_broken_mid_word_is_read_whole() -> None:
    call = terminal("cat ~/.cache/app-name/servers-list.json")
    assert result_failure(call, ToolResultBlock(call.id, WRAPPED_CAT)) == (
        "cat: /Users/dev/.cache/app-name/servers-list.json: No such file or directory"
    )


def test_rows_of_one_width_the_program_ended_stay_apart() -> None:
    """Two located lines of one length are no wrap: the next starts a line of its own, and the
    first already names what failed."""
    conflicts = (
        "docs/friction-log.md:142: leftover conflict marker\n"
        "docs/friction-log.md:149: leftover conflict marker\n"
        "docs/friction-log.md:155: new blank line at EOF.\n"
    )
    assert unwrapped(conflicts) == conflicts
    call = ToolUseBlock("toolu_1", "Bash", {"command": "git diff --check"})
    assert failure_lines(call, ToolResultBlock(call.id, conflicts), 4) == (
        "docs/friction-log.md:142: leftover conflict marker",
        "docs/friction-log.md:149: leftover conflict marker",
    )


def test_only_a_break_that_completes_a_telling_line_is_joined() -> None:
    """A message wrapped over rows that no rule reads whole stays in its rows (joined, it would
    rank by its first row's words and be clipped to its head), and a row ending at a space or a
    rule's ``=`` was not broken mid-word."""
    prose = (
        "[mobx] Encountered an uncaught exception thrown by a reaction, in: 'Rea\n"
        "ction[DataConfigurationModel.afterCreate.reaction [show all]]' TypeErr\n"
        "or: Cannot destructure property 'hiddenAttrs' of 'undefined'.\n"
    )
    assert unwrapped(prose) == prose
    rules = "=" * 60 + "\n" + "=" * 60 + "\nplatform linux\n"
    assert unwrapped(rules) == rules
    short = "cat: x: No such f\nile or directory\n"  # narrower than any terminal
    assert unwrapped(short) == short
