"""CI and release tools' failed runs, as an agent's shell shows them piped through ``tail`` (the
exit code lost) or with an exit code 0 that is not the run's: the line that names what failed is
recognised, judged a failure and ranked first. Each output is written in the tool's documented
layout: TAP 14 (testanything.org), vstest's console logger, Rust's libtest, MSBuild's canonical
diagnostic format, cli/go-gh's ``HTTPError`` and cli/cli's ``gh run view``."""

from __future__ import annotations

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failure_marks import marks_a_failure
from contextwarden.summarizers.failure_ranks import ranked_lines
from contextwarden.summarizers.failures import failure_lines, result_failure


def _excerpt(command: str, output: str) -> str | None:
    call = ToolUseBlock(id="c1", name="Bash", input={"command": command})
    return result_failure(call, ToolResultBlock(tool_use_id="c1", content=output))


BATS_TAP = (
    "1..3\n"
    "ok 1 a hook runs\n"
    "not ok 2 a bad config is refused\n"
    "# (in test file test/config.bats, line 12)\n"
    "#   `run_hook bad' failed\n"
    "ok 3 a hook is skipped # skip no git\n"
)


def test_a_tap_not_ok_is_the_failed_test() -> None:
    assert _excerpt("bats test/ 2>&1 | tail -20", BATS_TAP) == "not ok 2 a bad config is refused"


def test_a_tap_not_ok_that_a_directive_excuses_is_no_failure() -> None:
    excused = "1..2\nok 1 a\nnot ok 2 b # TODO not written yet\n"
    assert not marks_a_failure(excused)
    assert not marks_a_failure("1..1\nnot ok 1 c # SKIP no network\n")


DOTNET_TEST = (
    "  Failed NumWords.Tests.ConverterTests.Converts_zero [12 ms]\n"
    "  Error Message:\n"
    "   Assert.Equal() Failure: Strings differ\n"
    "  Stack Trace:\n"
    "     at NumWords.Tests.ConverterTests.Converts_zero() in /src/ConverterTests.cs:line 15\n"
    "\n"
    "Failed!  - Failed:     1, Passed:    20, Skipped:     0, Total:    21, Duration: 45 ms"
    " - NumWords.Tests.dll (net8.0)\n"
)


def test_dotnet_tests_failed_test_is_named_first() -> None:
    assert _excerpt("dotnet test 2>&1 | tail -30", DOTNET_TEST) == (
        "Failed NumWords.Tests.ConverterTests.Converts_zero [12 ms]"
    )
    verdict = DOTNET_TEST.splitlines()[-1]
    assert ranked_lines(DOTNET_TEST)[-1] == (6, verdict)  # the verdict alone, last


def test_a_passed_dotnet_run_is_no_failure() -> None:
    passed = (
        "Passed!  - Failed:     0, Passed:    21, Skipped:     0, Total:    21, Duration: 40 ms"
    )
    assert _excerpt("dotnet test 2>&1 | tail -3", passed) is None


def test_libtests_failed_verdict_marks_a_failure() -> None:
    filtered = (
        "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out;"
        " finished in 0.00s\n"
    )
    assert marks_a_failure(filtered)
    assert not marks_a_failure(filtered.replace("FAILED.", "ok.").replace("1 failed", "0 failed"))


def test_msbuilds_error_whose_origin_is_a_project_file() -> None:
    restore = (
        "  Determining projects to restore...\n"
        "/src/NumWords/NumWords.csproj : error NU1101: Unable to find package Foo.Bar. No"
        " packages exist with this id in source(s): nuget.org\n"
        "  Failed to restore /src/NumWords/NumWords.csproj (in 1.2 sec).\n"
    )
    assert _excerpt("dotnet restore 2>&1 | tail", restore) == restore.splitlines()[1]


def test_ghs_api_error_is_a_failure() -> None:
    refused = (
        "HTTP 422: Validation Failed (https://api.github.com/repos/o/r/releases)\n"
        "Release.tag_name already exists\n"
    )
    command = "gh release create v1.2.0 --notes x 2>&1 | tail"
    assert _excerpt(command, refused) == refused.splitlines()[0]


GH_RUN_VIEW = (
    "X main CI · 123\n"
    "Triggered via push about 5 minutes ago\n"
    "\n"
    "JOBS\n"
    "X test (ubuntu-latest) in 1m2s (ID 2)\n"
    "  ✓ Set up job\n"
    "  X Run cargo test\n"
    "\n"
    "ANNOTATIONS\n"
    "! Failed to restore: Cache service responded with 400\n"
    "test (ubuntu-latest): .github#5\n"
    "\n"
    "X Process completed with exit code 101.\n"
    "test (ubuntu-latest): .github#20\n"
)


def test_gh_run_views_failure_annotation_comes_before_its_warning() -> None:
    assert _excerpt("gh run view 123 | head -60", GH_RUN_VIEW) == (
        "X Process completed with exit code 101."
    )


def test_gh_run_view_exits_0_on_a_failed_run() -> None:
    shown = "Process exited with code 0\nOutput:\n" + GH_RUN_VIEW
    call = ToolUseBlock(id="c1", name="exec_command", input={"cmd": "gh run view 123"})
    result = ToolResultBlock(tool_use_id="c1", content=shown)
    lines = failure_lines(call, result, 3)
    assert lines[0] == "X Process completed with exit code 101."
    assert not any(line.startswith("! Failed to restore") for line in lines)


def test_a_run_with_only_warnings_is_no_failure() -> None:
    warned = GH_RUN_VIEW.replace("X ", "✓ ").split("\n✓ Process")[0]
    assert _excerpt("gh run watch 123", warned) is None


def test_msbuilds_canonical_errors_with_spaced_colons_or_no_code() -> None:
    spaced = "C:\\dir1\\strings.resx(2) : error BC30188: Declaration expected.\n"
    uncoded = (
        "/usr/share/dotnet/sdk/8.0.100/NuGet.targets(156,5): error : Unable to load the service"
        " index for source https://api.nuget.org/v3/index.json.\n"
    )
    for output in (spaced, uncoded):
        assert _excerpt("dotnet build 2>&1 | tail", "  Restoring...\n" + output) == output.strip()


def test_a_workflow_commands_error_is_an_error_line() -> None:
    printed = "checking...\n::error file=src/main.rs,line=10,title=lint::unused variable `x`\n"
    assert _excerpt("bash scripts/ci-lint.sh 2>&1 | tail", printed) == printed.splitlines()[1]
