"""Task runners' and Go linters' failed runs piped through ``tail``, the exit code lost: the
runner's verdict makes the output a failure, and the lines quoted are the failing task's. Each
output is written in the tool's layout from its source: mise's task prefix and verdict
(jdx/mise, ``Task::prefix``, ``exit_if_failed``), go-task's ``TaskRunError``, yarn 1's
``commandFailedWithCode``, pnpm's ELIFECYCLE, golangci-lint's ``printIssue``, cmd/go's
``TooNewError``, go/types' ``TooNew`` and govulncheck's ``errGoVersionMismatch``."""

from __future__ import annotations

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failure_marks import marks_a_failure
from contextwarden.summarizers.failure_ranks import TRAILER_RANK, WORD_RANK, line_rank
from contextwarden.summarizers.failures import failure_lines, result_failure


def _call(command: str) -> ToolUseBlock:
    return ToolUseBlock(id="c1", name="Bash", input={"command": command})


def _excerpt(command: str, output: str) -> str | None:
    return result_failure(_call(command), ToolResultBlock(tool_use_id="c1", content=output))


def _lines(command: str, output: str, limit: int = 4) -> tuple[str, ...]:
    result = ToolResultBlock(tool_use_id="c1", content=output)
    return failure_lines(_call(command), result, limit)


MISE_FORMAT_FAILED = (
    "[lint:fmt] $ ~/src/app/mise-tasks/lint/fmt\n"
    "[test] $ go test ./...\n"
    "[lint:fmt] Files not formatted:\n"
    "[lint:fmt] \n"
    "[lint:fmt] server/handler.go\n"
    "[test] ok  \texample.com/app/server\t0.412s\n"
    "[test] Finished in 1.20s\n"
    "Finished in 1.21s\n"
    "[lint:fmt] ERROR task failed\n"
)


def test_a_mise_task_that_failed_is_quoted_by_what_it_printed() -> None:
    """The failing task's first line, after its prefix: not its echoed script, not a sibling's."""
    command = "mise run check 2>&1 | tail -20"
    assert _excerpt(command, MISE_FORMAT_FAILED) == "[lint:fmt] Files not formatted:"


def test_a_passed_mise_run_is_no_failure() -> None:
    passed = MISE_FORMAT_FAILED.replace("[lint:fmt] ERROR task failed\n", "").replace(
        "Files not formatted:", "All files formatted."
    )
    assert _excerpt("mise run check 2>&1 | tail -20", passed) is None


MISE_LINT_FAILED = (
    "[lint:go] golangci-lint has version 2.1.0 built with go1.24.2\n"
    "[test] ok  \texample.com/app/store\t0.9s\n"
    "[lint:go] store/cache.go:41:2: ineffectual assignment to err (ineffassign)\n"
    "[lint:go] \terr = c.flush()\n"
    "[lint:go] \t^\n"
    "[lint:go] store/db.go:88:10: ST1005: error strings should not end with punctuation"
    " (staticcheck)\n"
    "[lint:go] 2 issues:\n"
    "[lint:go] * ineffassign: 1\n"
    "[lint:go] * staticcheck: 1\n"
    "Finished in 2.3s\n"
    "[lint:go] ERROR task failed\n"
)


def test_golangci_lint_issues_in_a_failed_mise_task_are_its_failure_lines() -> None:
    lines = _lines("mise run lint 2>&1 | tail -15", MISE_LINT_FAILED)
    assert lines[:2] == (
        "[lint:go] store/db.go:88:10: ST1005: error strings should not end with punctuation"
        " (staticcheck)",
        "[lint:go] store/cache.go:41:2: ineffectual assignment to err (ineffassign)",
    )
    assert not any(line.startswith("[test]") for line in lines)


GOVULNCHECK_TOO_OLD = (
    "[lint:vuln] govulncheck: Loading packages failed, possibly due to a mismatch between the"
    " Go version\n"
    "[lint:vuln] used to build govulncheck and the Go version on PATH. Consider rebuilding\n"
    "[lint:vuln] govulncheck with the current Go version.\n"
    "[lint:vuln] \n"
    "[lint:vuln] There are errors with the provided package patterns:\n"
    "[lint:vuln] \n"
    "[lint:vuln] /home/u/app/main.go:3:1: package requires newer Go version go1.25"
    " (application built with go1.24)\n"
    "[lint:vuln] \n"
    "Finished in 0.8s\n"
    "[lint:vuln] ERROR task failed\n"
)


def test_a_go_too_new_for_govulncheck_keeps_both_its_lines() -> None:
    lines = _lines("mise run check 2>&1 | tail -40", GOVULNCHECK_TOO_OLD)
    assert lines[0] == (
        "[lint:vuln] /home/u/app/main.go:3:1: package requires newer Go version go1.25"
        " (application built with go1.24)"
    )
    assert lines[1].startswith("[lint:vuln] govulncheck: Loading packages failed")


def test_a_go_toolchain_too_old_is_a_failure_on_its_own() -> None:
    too_old = "go: go.mod requires go >= 1.25.0 (running go 1.24.2; GOTOOLCHAIN=local)\n"
    assert _excerpt("go build ./... 2>&1 | tail -5", too_old) == too_old.strip()
    located = (
        "main.go:3:1: package requires newer Go version go1.25 (application built with go1.24)"
    )
    assert marks_a_failure(located)


def test_package_managers_verdicts_fail_a_run_and_rank_last() -> None:
    verdicts = (
        "error Command failed with exit code 2.",  # yarn 1
        " ELIFECYCLE  Command failed with exit code 1.",  # pnpm
    )
    for verdict in verdicts:
        assert marks_a_failure(f"building\n{verdict}\n"), verdict
        assert line_rank(verdict) == TRAILER_RANK, verdict


def test_a_task_runners_line_naming_the_failed_task_fails_a_run() -> None:
    """mise's and go-task's verdict names the task: it ranks by its words, before a bare
    ``FAIL``, and is quoted when nothing else of the task is left."""
    for verdict in ('task: Failed to run task "build": exit status 1', "[build] ERROR task failed"):
        assert marks_a_failure(f"building\n{verdict}\n"), verdict
        assert line_rank(verdict) == WORD_RANK, verdict
    assert _excerpt("mise run build 2>&1 | tail -1", "[build] ERROR task failed\n") == (
        "[build] ERROR task failed"
    )
