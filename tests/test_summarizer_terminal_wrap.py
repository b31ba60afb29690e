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


# pytest -v in an 80-column terminal: three tests failed, and the closing count (its terminal
# plugin's ``summary_stats``, "==== 3 failed, 9 passed … in 1.34s ====") is broken inside its
# duration; the row before it was padded with blanks the save kept
WRAPPED_PYTEST = (
    "tests/test_browser.py::test_browser_list FAILED                           [ 25%]\n"
    "tests/test_browser.py::test_browser_stop FAILED                           [ 50%]\n"
    "tests/test_browser.py::test_browser_config FAILED                         [ 75%]\n"
    "tests/test_browser.py::test_no_browser PASSED                             [100%]\n"
    "__________________________________ test_browser_list ___________________________\n"
    "E   AssertionError: assert 16 == 2\n"
    "FAILED tests/test_browser.py::test_browser_list - AssertionError: assert 16 == 2\n"
    "FAILED tests/test_browser.py::test_browser_stop - AssertionError: assert 3 == 0\n"
    "FAILED tests/test_browser.py::test_browser_config - assert <Config> is None\n"
    "            ===================== 3 failed, 9 passed, 3 warnings, 9 rerun in 1.3\n"
    "4s =====================\n"
)


def test_a_count_of_failed_tests_broken_in_its_duration_is_read_whole() -> None:
    """Joined, the row is pytest's count of what failed, which ranks above the lines with only a
    failure word (``runner_reports.COUNTED_VERDICT``), so a big run's kept lines say how many
    of its tests failed."""
    assert "3 failed, 9 passed, 3 warnings, 9 rerun in 1.34s =====" in unwrapped(WRAPPED_PYTEST)
    call = terminal("python -m pytest tests/test_browser.py -v")
    kept = failure_lines(call, ToolResultBlock(call.id, WRAPPED_PYTEST), 4)
    assert "3 failed, 9 passed, 3 warnings, 9 rerun in 1.34s" in kept
