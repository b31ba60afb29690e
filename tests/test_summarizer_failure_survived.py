"""Failures a program printed and survived: a command line whose exit code 0 is shown still failed
when the shell could not run one of its words, or when the output ends in a whole Python
traceback a script printed (``traceback.print_exc()``) before exiting 0. Outputs are written for
these tests in the documented wording of bash (``bash: line N: X: command not found``, the Bash
Reference Manual's "Command Search and Execution"), dash (``sh: 1: X: not found``), zsh
(``zsh:1: command not found: X``, ``zsh:1: no matches found: x*`` under its default ``NOMATCH``
option; ``(eval):1:`` when run through ``eval``), bash's ``failglob`` and CPython's
``traceback`` module, in the framing mini-swe-agent, Codex and Claude Code give a command's
result; outputs that merely show such text, or an error handled and gone past, must stay no
failure."""

from __future__ import annotations

import pytest

from contextwarden.summarizers.failures import failure_excerpt

BACKQUOTED = (
    "<returncode>0</returncode>\n<output>\nbash: line 1: val: command not found\n"
    "Found _convert_value method\nUpdated _convert_value method\n</output>"
)
"""A ``python3 -c "…"`` whose code held `` `val` `` in a docstring: bash ran it as a command
substitution, then Python ran the mangled code and exited 0."""
PRINTED_TRACEBACK = (
    "<returncode>0</returncode>\n<output>\nTrying to save...\n"
    "Error while saving: a bytes-like object is required, not 'list'\n"
    "Traceback (most recent call last):\n"
    '  File "/testbed/repro.py", line 14, in <module>\n'
    "    ds.save_as(path)\n"
    '  File "/testbed/pkg/writer.py", line 284, in write_value\n'
    "    fp.write(cast(bytes, elem.value))\n"
    "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "TypeError: a bytes-like object is required, not 'list'\n\n</output>"
)
"""A reproduction script's ``except Exception: traceback.print_exc()``: exit 0, the error last."""


@pytest.mark.parametrize(
    ("command", "text", "excerpt"),
    [
        (
            'cd /testbed && python3 -c "\ndef f(val):\n    """Convert `val`."""\n"',
            BACKQUOTED,
            "bash: line 1: val: command not found",
        ),
        (  # zsh ran the search with the backquoted word gone
            'rg -n "instead of `workers` set --workers" docs',
            "Exit code: 0\nzsh:1: command not found: workers\ndocs/cli.md:12:Set --workers",
            "zsh:1: command not found: workers",
        ),
        (  # zsh run through eval, as Claude Code runs a command
            "python3.12 --version; python3 --version",
            "Process exited with code 0\nOutput:\n(eval):1: command not found: python3.12\n"
            "Python 3.9.6",
            "(eval):1: command not found: python3.12",
        ),
        (  # dash, a failed step of a multi-command line
            "pyton --version; echo done",
            "Exit code: 0\nsh: 1: pyton: not found\ndone",
            "sh: 1: pyton: not found",
        ),
        (  # zsh's NOMATCH: the glob matched nothing, so rg never ran; head's exit 0 is shown
            "rg -n 'contextualTitle' node_modules/@types node_modules/vscode* | head -n 60",
            "Exit code: 0\nWall time: 0 seconds\nOutput:\nzsh:1: no matches found: "
            "node_modules/vscode*\n",
            "zsh:1: no matches found: node_modules/vscode*",
        ),
        (  # the same through eval, the glob an unquoted option's value
            'grep -rln "GitID" --include=*.go . | grep -v _test.go | head -30',
            "(eval):1: no matches found: --include=*.go",
            "(eval):1: no matches found: --include=*.go",
        ),
        (  # bash under failglob
            "ls src/*.rs",
            "Exit code: 0\nbash: no match: src/*.rs",
            "bash: no match: src/*.rs",
        ),
        (
            "python repro.py",
            PRINTED_TRACEBACK,
            "TypeError: a bytes-like object is required, not 'list'",
        ),
    ],
)
def test_a_failure_the_command_line_survived(command: str, text: str, excerpt: str) -> None:
    assert failure_excerpt(text, is_error=False, shell=True, command=command) == excerpt


@pytest.mark.parametrize(
    ("command", "text"),
    [
        (  # a test suite that passes and logs error lines
            "python -m pytest tests/test_retry.py -q",
            "Exit code: 0\n------------------------------ Captured log call -------\n"
            "ERROR    app.retry:retry.py:41 Error: connection reset, retrying\n"
            "3 passed in 0.12s",
        ),
        (  # a documentation example printing the exception it expects, then going on
            "python examples/validate.py",
            "<returncode>0</returncode>\n<output>\nTraceback (most recent call last):\n"
            '  File "examples/validate.py", line 8, in <module>\n'
            "    check(-1)\n"
            "ValueError: x must be positive\n"
            "The example above shows the error a negative value raises.\n</output>",
        ),
        (  # search hits and a log shown, holding the shell's lines
            "grep -rn 'command not found' ci/",
            "Exit code: 0\nci/build.log:88:bash: line 1: jq: command not found",
        ),
        ("cat ci/build.log", "Exit code: 0\nbash: line 1: jq: command not found\nBuild done"),
        (  # a file shown that quotes zsh's line for a glob the command does not hold
            "cat docs/shell.md",
            "Exit code: 0\nzsh:1: no matches found: *.go\n",
        ),
        (  # a step the line handles: the alternative ran
            "gawk --version || awk --version",
            "Exit code: 0\n(eval):1: command not found: gawk\nawk version 20200816",
        ),
        ("ruff check src", "Exit code: 0\nAll checks passed!\nFound 0 errors."),
        ("npx eslint src", "Exit code: 0\n\u2714 0 errors, 0 warnings"),
        (  # bash's locale warning in a container: a warning, the command ran
            "python -m pytest -q",
            "Exit code: 0\nbash: warning: setlocale: LC_ALL: cannot change locale (en_US.UTF-8)\n"
            "12 passed in 1.02s",
        ),
    ],
)
def test_a_handled_error_or_text_shown_is_no_failure(command: str, text: str) -> None:
    assert failure_excerpt(text, is_error=False, shell=True, command=command) is None
