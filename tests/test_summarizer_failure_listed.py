"""Failures an exit code or a browser's log hides.

A ``;`` list exits with its last command's status (POSIX "Sequential Lists"; PowerShell's ``;``
the same), so git's ``CONFLICT (content): Merge conflict in <path>`` from ``git merge b; git log``
is shown under exit code 0: a failure line an earlier step printed still makes the result
failed. Outputs are written in git's documented wording, in the framing Codex gives a result.
A step's exit code the command prints after a label (``echo "exit: $?"``) is that step's too.

Chromium's log lines (base/logging: ``[pid:tid:MMDD/HHMMSS.micro:LEVEL:file(line)] message``,
``file:line`` in newer builds) that the VS Code extension test host prints above Mocha's report
rank after every line of the run's own: they are what a failure line is chosen from only when
nothing else failed.
"""

from __future__ import annotations

import pytest

from contextwarden.summarizers.failure_quotes import further_lines
from contextwarden.summarizers.failures import failure_excerpt

CONFLICT = "CONFLICT (content): Merge conflict in docs/log.md"
MERGED = (
    "Exit code: 0\nAuto-merging docs/log.md\n"
    f"{CONFLICT}\n"
    "Automatic merge failed; fix conflicts and then commit the result.\n"
    "d341995 Land the review verdict\n0c3bfcb Port the harness"
)
CERTIFICATE = (
    "[35346:0410/160412.435203:ERROR:net/cert/internal/trust_store_mac.cc:807] "
    "Error parsing certificate:"
)
VSCODE_TEST = (
    "Exit code: 1\n"
    "[1234:5678:0410/160411.000001:ERROR:gpu_init.cc(426)] Passthrough is not supported\n"
    f"{CERTIFICATE}\n"
    "ERROR: Failed parsing extensions\n\n"
    "  Parser\n"
    "    \u2714 reads a session\n"
    "    1) strips the wrapper\n"
    "  1 passing (5ms)\n"
    "  1 failing\n\n"
    "  1) Parser\n"
    "       strips the wrapper:\n\n"
    "      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n"
    "+ actual - expected\n\n"
    "1 test failed."
)


@pytest.mark.parametrize(
    ("command", "text", "excerpt"),
    [
        ('git merge --no-ff feature -m "Merge; round 2"; git log --oneline -2', MERGED, CONFLICT),
        (  # PowerShell: set-up first, the failed step in the middle
            "cd C:\\repo; git pull origin topic; git status --short",
            "Exit code: 0\nfatal: couldn't find remote ref topic\n M src/app.ts",
            "fatal: couldn't find remote ref topic",
        ),
        (  # git diff --check exits non-zero on a conflict marker left in (git-diff(1))
            "git diff --check docs/log.md; git status --short",
            "Exit code: 0\ndocs/log.md:142: leftover conflict marker\n M docs/log.md",
            "docs/log.md:142: leftover conflict marker",
        ),
    ],
)
def test_an_earlier_step_of_a_list_failed(command: str, text: str, excerpt: str) -> None:
    assert failure_excerpt(text, is_error=False, shell=True, command=command) == excerpt


@pytest.mark.parametrize(
    ("command", "text"),
    [
        ("cd docs; cat notes.md", "Exit code: 0\nerror: the old parser\nIt was replaced."),
        (  # the ``;`` is Python's, in a quoted word
            'python -c "import app; app.check()"',
            "Exit code: 0\nerror: retrying once\nchecked 3 files",
        ),
        (  # the failure is handled: the alternative ran
            "git fetch origin || echo offline; git status --short",
            "Exit code: 0\nfatal: unable to access 'https://x/': Could not resolve host\n"
            "offline\n M src/app.ts",
        ),
        (  # PowerShell: only a variable set before the step whose exit code is shown
            "$log = 'C:\\logs\\run.log'; Get-Content $log -Tail 2 | ForEach-Object { $n = $_; $n }",
            "Exit code: 0\nfatal: the remote end hung up\nretried and pushed",
        ),
        (  # a test runner paged: the pager's exit code, and the run passed
            "cd app; npm test 2>&1 | tail -3",
            "Exit code: 0\n  12 passing (40ms)\n  0 failing",
        ),
    ],
)
def test_a_list_whose_earlier_steps_did_not_fail(command: str, text: str) -> None:
    assert failure_excerpt(text, is_error=False, shell=True, command=command) is None


def test_chromium_log_lines_rank_after_the_runs_own() -> None:
    excerpt = failure_excerpt(VSCODE_TEST, is_error=False, shell=True, command="pnpm test")
    assert excerpt.startswith("AssertionError [ERR_ASSERTION]: Expected values")
    further = further_lines(VSCODE_TEST, excerpt, 2)
    assert further == ("1 failing: 1) strips the wrapper", "1 test failed.")


def test_chromium_log_lines_are_the_failure_when_nothing_else_failed() -> None:
    text = f"Exit code: 1\n{CERTIFICATE}\nERROR: Failed parsing extensions\n"
    excerpt = failure_excerpt(text, is_error=False, shell=True, command="npx vscode-test")
    assert excerpt == CERTIFICATE
    assert further_lines(text, excerpt, 3) == ("ERROR: Failed parsing extensions",)


@pytest.mark.parametrize("command", ["| ; git status", "2>/dev/null; ls", ";;;", "|| ; x"])
def test_a_malformed_list_is_read_without_error(command: str) -> None:
    """A command line an agent wrote is not always valid shell: a step with no program in it is
    skipped, not an index error in the summarizer."""
    text = "Exit code: 0\nerror: nothing here\n"
    assert failure_excerpt(text, is_error=False, shell=True, command=command) in (
        None,
        "error: nothing here",
    )


def test_a_steps_exit_code_the_command_echoed_is_that_steps() -> None:
    """``$?`` (POSIX) and ``$LASTEXITCODE`` (PowerShell) hold the last command's exit code: a
    command that prints it after a label shows that step's status, though the echo exits 0 and
    the harness shows that; printed as 0, the step did not fail."""
    hook = "'{}' | sh -c 'exec entire hooks claude-code pre-task'"
    output = (
        "failed to capture pre-task state: tool_use_id is required\n"
        "exit=%d\n<shellId: 25 completed with exit code 0>"
    )
    command = f'{hook}; Write-Host "exit=$LASTEXITCODE"'
    assert failure_excerpt(output % 1, is_error=False, shell=True, command=command) == (
        "failed to capture pre-task state: tool_use_id is required"
    )
    assert failure_excerpt(output % 0, is_error=False, shell=True, command=command) is None
    commit = 'git commit -m wip 2>&1; echo "exit: $?"'
    shown = "bug: pre-commit's script is installed in migration mode\nexit: 1"
    assert failure_excerpt(shown, is_error=False, shell=True, command=commit) is not None
    unlabelled = f"{hook}; echo $?"  # a bare number may be any line of the output
    assert failure_excerpt(output % 1, is_error=False, shell=True, command=unlabelled) is None
