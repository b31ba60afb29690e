"""A tool's JSON whose string values are logs is read as the logs' lines where failures are judged
and quoted (``json_text``): the gh-fix-ci skill's ``inspect_pr_checks.py --json`` prints
``json.dumps({"pr": …, "results": […]}, indent=2)`` and exits 1 when a check failed, each failed
job's ``logSnippet`` and ``logTail`` from ``gh api /repos/R/actions/jobs/ID/logs`` (a timestamp
before each line; openai/skills, ``skills/.curated/gh-fix-ci/scripts/inspect_pr_checks.py``).
As stored, each log is one long line of JSON."""

from __future__ import annotations

import json

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failure_quotes import as_printed
from contextwarden.summarizers.failures import failure_lines
from contextwarden.summarizers.json_text import json_text

RUSTC = (
    "\x1b[1m\x1b[91merror[E0432]\x1b[0m\x1b[1m: unresolved import "
    "`chacha20poly1305::aead::OsRng`\x1b[0m"
)


def job_log(lines: int, at: int) -> str:
    """A job's log as GitHub's API gives it: ``lines`` compile lines, rustc's error at ``at``,
    then the runner's failed step."""
    body = [f"\x1b[1m\x1b[92m   Compiling\x1b[0m crate{n} v0.{n}.0" for n in range(lines)]
    body[at:at] = [RUSTC, 'error: could not compile `mise` (bin "mise") due to 1 previous error']
    body.append("##[error]Process completed with exit code 101.")
    return "\n".join(
        f"2026-07-11T12:21:{n % 60:02d}.2635370Z {line}" for n, line in enumerate(body)
    )


def inspect_output(lines: int = 40, at: int = 20) -> str:
    result = {
        "name": "unit-macos",
        "detailsUrl": "https://github.com/o/r/actions/runs/29152451133/job/86544022235",
        "runId": "29152451133",
        "jobId": "86544022235",
        "status": "ok",
        "run": {"conclusion": "failure", "headBranch": "renovate/x", "workflowName": "test"},
        "logSnippet": job_log(lines, at),
        "logTail": job_log(lines, at),
    }
    return json.dumps({"pr": "10907", "results": [result]}, indent=2)


def call_and_result(output: str) -> tuple[ToolUseBlock, ToolResultBlock]:
    command = "python3 scripts/inspect_pr_checks.py --repo . --pr 10907 --json"
    call = ToolUseBlock(id="c1", name="exec_command", input={"cmd": command})
    return call, ToolResultBlock(tool_use_id="c1", content=f"Exit code: 1\n{output}")


def test_a_log_inside_json_is_quoted_by_its_error_line() -> None:
    call, result = call_and_result(inspect_output())
    lines = failure_lines(call, result, 4)
    assert lines[0] == "error[E0432]: unresolved import `chacha20poly1305::aead::OsRng`"
    assert "##[error]Process completed with exit code 101." in lines


def test_json_text_reads_values_as_lines_after_the_harness_lines() -> None:
    header = "Script completed\nWall time 3.9 seconds\nOutput:\n\n"
    read = json_text(header + inspect_output(4, 2))
    assert read.startswith(header + "pr: 10907\nname: unit-macos\n")
    assert "conclusion: failure\n" in read
    assert "logTail:\n\x1b[1m\x1b[92m   Compiling\x1b[0m crate0 v0.0.0\n" in read
    assert f"\n{RUSTC}\n" in read  # the timestamps a job log's lines open with are taken off


def test_text_that_holds_no_log_in_json_is_unchanged() -> None:
    one_line = json.dumps({"name": "unit", "conclusion": "failure"}, indent=2)
    not_json = 'echo "a\\nb"\n{ not json }'
    assert json_text(one_line) == one_line
    assert json_text(not_json) == not_json
    cut = inspect_output()[:-40]  # a document cut short does not parse
    assert json_text(cut) == cut


def test_a_colour_code_in_caret_notation_is_taken_off() -> None:
    shown = "^[[1m^[[91merror[E0432]^[[0m^[[1m: unresolved imports `rmcp::model::Content`^[[0m"
    assert as_printed(shown) == "error[E0432]: unresolved imports `rmcp::model::Content`"
