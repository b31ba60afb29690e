"""Failures in a run's output that a filter cut down, a CLI's own ``Error <doing> <what>:`` line,
and bun's and Jest's reporters: each output below is written from the tool's documented format
(pytest's report and short summary, ``gh run view --log-failed``'s job/step/time columns, Node's
``console.error("Error starting server:", err)``, bun's and Jest's ``expect`` failure with its
``Expected``/``Received`` lines and its ``✓``/``✗`` marks); and outputs that only look like
failures (a log file searched, a history listed, a passing test's title) are not taken for them."""

from __future__ import annotations

import pytest

from contextwarden.summarizers.commands import filters_a_run
from contextwarden.summarizers.failure_quotes import further_lines
from contextwarden.summarizers.failure_ranks import line_rank
from contextwarden.summarizers.failures import failure_excerpt


@pytest.mark.parametrize(
    ("command", "filtered"),
    [
        ('pytest tests/ -q 2>&1 | grep -oE "PermissionError[^,]*" | head -3', True),
        ("cd /r && timeout 300 python -m pytest -q 2>&1 | grep -E 'Error|FAILED'", True),
        ("CI=1 npm test 2>&1 | rg 'expect\\('", True),
        ("gh run view --job 1 --log-failed 2>&1 | grep -E 'FAILED|assert '", True),
        ("cat test.log | grep Error", False),  # a file shown, not a run
        ("git log --oneline | grep Error", False),  # a history listed
        ("grep -rn Error src/ | head", False),  # a search
        ("pytest -q 2>&1 | tail -20", False),  # paged, not filtered
        ("pytest -q", False),
    ],
)
def test_a_run_filtered_through_a_search(command: str, filtered: bool) -> None:
    assert filters_a_run(command) is filtered


FILTERED_PYTEST = (
    "PermissionError: [WinError 5] Access is denied: 'C:\\\\Temp\\\\pytest-of-me'\n"
    "PermissionError\n"
)


def test_an_exception_a_filter_kept_is_the_run_failing() -> None:
    """The filter dropped the traceback's header and pytest's verdict: the exception line it
    kept is the only sign the run failed, and no exit code is shown."""
    command = 'python -m pytest tests/test_env.py -q 2>&1 | grep -oE "PermissionError[^,]*"'
    excerpt = failure_excerpt(FILTERED_PYTEST, is_error=False, shell=True, command=command)
    assert excerpt == "PermissionError: [WinError 5] Access is denied: 'C:\\\\Temp\\\\pytest-of-me'"


def test_the_same_lines_searched_in_a_file_are_not_a_failure() -> None:
    command = 'cat pytest.log | grep -oE "PermissionError[^,]*"'
    assert failure_excerpt(FILTERED_PYTEST, is_error=False, shell=True, command=command) is None


GH_LOG_FILTERED = (
    "test (3.12)\tRun tests\t2026-01-02T03:04:05.1000000Z "
    "tests/test_cache.py::test_expiry FAILED [ 40%]\n"
    "test (3.12)\tRun tests\t2026-01-02T03:04:06.2000000Z tests/test_cache.py:31: in test_expiry\n"
    "test (3.12)\tRun tests\t2026-01-02T03:04:06.3000000Z     assert cache.get('k') is None\n"
    "test (3.12)\tRun tests\t2026-01-02T03:04:06.4000000Z E   AssertionError: assert 'v' is None\n"
)


def test_a_failed_jobs_log_filtered_keeps_its_assertion() -> None:
    command = "gh run view --job 7 --log-failed 2>&1 | grep -E 'FAILED|assert ' | head -25"
    excerpt = failure_excerpt(GH_LOG_FILTERED, is_error=False, shell=True, command=command)
    assert excerpt == "E   AssertionError: assert 'v' is None"


@pytest.mark.parametrize(
    "line",
    [
        "Error starting server: listen EADDRINUSE: address already in use :::3000",
        "Error reading config file: ENOENT: no such file or directory, open 'app.json'",
    ],
)
def test_a_clis_own_error_line_names_what_it_was_doing(line: str) -> None:
    """Cursor's terminal shows no exit code: the CLI's line is the only sign it failed."""
    output = f"me@host app % node cli.js start\n{line}\nme@host app %\n"
    assert failure_excerpt(output, is_error=False, shell=True, command="node cli.js") == line


def test_prose_about_errors_is_no_error_line() -> None:
    output = "Error handling is described in docs/errors.md\nError codes: see below\n"
    assert failure_excerpt(output, is_error=False, shell=True, command="node cli.js") is None


BUN_TEST = (
    "bun test v1.2.10 (db2e7d7f)\n\n"
    "src/paths.test.ts:\n"
    "✓ paths > throws on an invalid name [0.31ms]\n"
    "12 |     expect(sessionDir('a')).toBe(expected);\n"
    "                               ^\n"
    "error: expect(received).toBe(expected)\n\n"
    'Expected: "/tmp/state/git/repo/a"\n'
    'Received: "/tmp/state/git/a"\n\n'
    "      at <anonymous> (/w/src/paths.test.ts:12:27)\n"
    "✗ paths > puts a session under its repo [1.20ms]\n"
    "20 |     expect(sessionDir('#8')).toBe(expected);\n"
    "error: expect(received).toBe(expected)\n\n"
    'Expected: "/tmp/state/git/repo/task#8"\n'
    'Received: "/tmp/state/git/task#8"\n\n'
    "✗ paths > names a task's session [0.90ms]\n\n"
    " 1 pass\n 2 fail\n"
)


def test_a_passing_tests_title_is_no_failure_line() -> None:
    assert line_rank("✓ paths > throws on an invalid name [0.31ms]") is None
    assert line_rank("✗ paths > puts a session under its repo [1.20ms]") is not None


def test_each_failed_assertion_keeps_the_value_it_received() -> None:
    """The matcher hint is the same for every failed ``toBe``; the values under it tell one
    failure from the other, and what the code returned is the ``Received`` line."""
    excerpt = failure_excerpt(BUN_TEST, is_error=False, shell=True, command="bun test")
    assert excerpt is not None
    lines = further_lines(BUN_TEST, excerpt, 4)
    received = [line for line in lines if line.startswith("error: expect(received)")]
    assert len(received) == 2
    assert 'Received: "/tmp/state/git/a"' in received[0]
    assert 'Received: "/tmp/state/git/task#8"' in received[1]
    assert not any("throws on an invalid name" in line for line in (excerpt, *lines))
