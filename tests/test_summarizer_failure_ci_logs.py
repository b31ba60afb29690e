"""A GitHub Actions job's log with a failed step is a failed run's output however the agent got
it (``gh api …/jobs/ID/logs`` saved and read with ``sed``, searched with ``rg -n``): the runner
writes ``##[error]Process completed with exit code N.`` after the step's output, each line after
its timestamp. The step's last line before it is the excerpt; npm's ``npm error code`` line
carries the summary and detail npm prints under it. The log is written here in the runner's and
npm's layouts."""

from __future__ import annotations

from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers import StructuredSummarizer
from contextwarden.summarizers.facts import MAX_ERROR_LINES, extract_facts
from contextwarden.summarizers.failures import failure_lines, result_failure

JOB_LOG = (
    "2026-03-02T10:00:01.1000000Z ##[group]Run bun run publish:next\n"
    "2026-03-02T10:00:01.1000001Z ##[endgroup]\n"
    "2026-03-02T10:00:03.2000000Z npm warn publish npm auto-corrected some errors in your "
    "package.json when publishing.\n"
    "2026-03-02T10:00:05.4000000Z npm error code E404\n"
    "2026-03-02T10:00:05.4000001Z npm error 404 Not Found - PUT https://registry.npmjs.org/"
    "@acme%2fcore - Not found\n"
    "2026-03-02T10:00:05.4000002Z npm error 404\n"
    "2026-03-02T10:00:05.4000003Z npm error 404  The requested resource '@acme/core@2.0.0' "
    "could not be found or you do not have permission to access it.\n"
    "2026-03-02T10:00:05.4000004Z npm error 404\n"
    "2026-03-02T10:00:05.4000005Z npm error 404 Note that you can also install from a\n"
    "2026-03-02T10:00:05.4000006Z npm error A complete log of this run can be found in: "
    "/home/runner/.npm/_logs/debug-0.log\n"
    "2026-03-02T10:00:05.5000000Z Failed to publish @acme/core@2.0.0\n"
    '2026-03-02T10:00:05.5000001Z error: script "publish:next" exited with code 1\n'
    "2026-03-02T10:00:05.5000002Z ##[error]Process completed with exit code 1.\n"
    "2026-03-02T10:00:05.7000000Z Post job cleanup.\n"
)


def _shell(command: str) -> ToolUseBlock:
    return ToolUseBlock(id="c1", name="exec_command", input={"cmd": command})


def _result(text: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id="c1", content=text)


def test_a_saved_job_log_read_back_failed_with_its_step() -> None:
    call = _shell("sed -n '1,200p' /tmp/ci/job-1.log")
    result = _result("Process exited with code 0\nOutput:\n" + JOB_LOG)
    assert result_failure(call, result) == 'error: script "publish:next" exited with code 1'
    lines = failure_lines(call, result, 4)
    npm = next(line for line in lines if line.startswith("npm error code E404"))
    assert "npm error 404 Not Found - PUT https://registry.npmjs.org/@acme%2fcore" in npm
    assert "The requested resource '@acme/core@2.0.0' could not be found" in npm
    assert "Note that you can also install" not in npm  # npm's advice, a third group


def test_a_search_of_the_log_with_line_numbers_reads_the_same() -> None:
    call = _shell('rg -n "error|Process completed" /tmp/ci/job-1.log')
    found = "".join(
        f"{n}:{line}\n" for n, line in enumerate(JOB_LOG.splitlines(), 1) if "error" in line
    )
    assert result_failure(call, _result(found)) == (
        'error: script "publish:next" exited with code 1'
    )


def test_a_log_whose_steps_passed_is_text() -> None:
    passed = JOB_LOG.replace("##[error]Process completed with exit code 1.", "Done.")
    shown = _result("Process exited with code 0\nOutput:\n" + passed)
    assert result_failure(_shell("sed -n '1,200p' /tmp/ci/job-1.log"), shown) is None


def test_the_runners_line_echoed_by_a_script_is_no_log() -> None:
    text = (
        'Process exited with code 0\nOutput:\necho "##[error]Process completed with exit code 1."'
    )
    assert result_failure(_shell("cat notes.txt"), _result(text)) is None


def test_npm_code_line_says_what_the_code_means() -> None:
    output = "Exit code 1\n" + "\n".join(
        line.split("Z ", 1)[1] for line in JOB_LOG.splitlines() if "npm error" in line
    )
    lines = failure_lines(_shell("npm publish --tag next"), _result(output), 2)
    assert lines[0].startswith("npm error code E404 npm error 404 Not Found - PUT ")
    assert lines[0].endswith("do not have permission to access it.")


def test_npm_message_ends_at_its_debug_logs_path() -> None:
    output = (
        "npm error code ENEEDAUTH\n"
        "npm error need auth This command requires you to be logged in\n"
        "npm error A complete log of this run can be found in: /home/me/.npm/_logs/debug-0.log\n"
        "Exit code: 1"
    )
    excerpt = result_failure(_shell("npm publish"), _result(output))
    assert excerpt == (
        "npm error code ENEEDAUTH npm error need auth This command requires you to be logged in"
    )


def _job_log_session() -> list[Message]:
    """A failed job's log, saved and read back: a test job with seven tests failing, each its
    own failure, then the step's runner line."""
    tests = ("parse", "render", "export", "import", "resize", "encode", "decode")
    lines = [
        f"2026-03-02T10:00:0{n}.1000000Z FAILED tests/test_img.py::test_{t} - ValueError: {t}"
        for n, t in enumerate(tests)
    ]
    lines.append("2026-03-02T10:00:09.2000000Z ##[error]Process completed with exit code 1.")
    call = _shell("sed -n '1,200p' ci/job.log")
    return [
        Message.user("Why did CI fail?"),
        Message("assistant", (call,)),
        Message("user", (_result("\n".join(lines)),)),
    ]


def test_a_failed_jobs_log_gives_the_summary_more_of_its_failures() -> None:
    """A CI job's log holds many failures, not one program's: its error keeps two lines past
    the four further lines of any other output, and a summary with room shows them."""
    (error,) = extract_facts(_job_log_session()).errors
    assert len(error.more) > MAX_ERROR_LINES
    summary = StructuredSummarizer().summarize(_job_log_session())
    errors = summary.sections[4]
    assert "ValueError: import" in errors
    assert "ValueError: resize" in errors
