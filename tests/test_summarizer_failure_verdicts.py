"""Rust's libtest count of passing tests, Jest's configuration errors, systemctl's missing unit
after a search that found nothing, and an HTTP error page a background command's output returns:
each output is written from the tool's documented format (Rust's libtest report, Jest's
``jest-validate`` messages, systemctl's ``status``, nginx's error page, Claude Code's
TaskOutput), with the shape of outputs agents met; and outputs that only look like these are not
taken for failures."""

from __future__ import annotations

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failure_ranks import COUNT_RANK, TELLING_RANK, line_rank
from contextwarden.summarizers.failures import failure_excerpt, failure_lines, result_failure

CARGO_DOCTEST = (
    "running 3 tests\n"
    "test parser::tests::empty ... ok\n"
    "test parser::tests::nested ... ok\n"
    "test parser::tests::quoted ... ok\n\n"
    "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; "
    "finished in 0.01s\n\n"
    "   Doc-tests mylib\n\n"
    "running 1 test\n"
    "test src/lib.rs - parse (line 12) ... FAILED\n\n"
    "failures:\n\n"
    "---- src/lib.rs - parse (line 12) stdout ----\n"
    "error[E0425]: cannot find function `parse_all` in crate `mylib`\n"
    " --> src/lib.rs:14:7\n\n"
    "error: aborting due to 1 previous error\n\n"
    "failures:\n    src/lib.rs - parse (line 12)\n\n"
    "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; "
    "finished in 0.10s\n\n"
    "error: doctest failed, to rerun pass `--doc`\n"
)
JEST_VALIDATION = (
    "> web@1.0.0 test\n> jest --config=jest.config.js\n\n"
    "\u25cf Validation Error:\n\n"
    "  Watch plugin jest-watch-typeahead/filename cannot be found. Make sure the watchPlugins "
    "configuration option points to an existing node module.\n\n"
    "  Configuration Documentation:\n  https://jestjs.io/docs/configuration\n"
)
JEST_WARNING = (
    "\u25cf Validation Warning:\n\n"
    '  Unknown option "testURL" with value "http://localhost" was found.\n'
    "  This is probably a typing mistake. Fixing it will remove this message.\n\n"
    "PASS  src/app.test.ts\nTests:       3 passed, 3 total\n"
)
SYSTEMCTL = (
    "Exit code 1\n"
    "Unit apache2.service could not be found.\n---\n"
    "Unit nginx.service could not be found.\n---\n"
)
SYSTEMCTL_COMMAND = (
    "systemctl status apache2 | head -5; echo '---'; systemctl status nginx | head -5; "
    "echo '---'; ps aux | grep -E 'apache|nginx' | grep -v grep"
)
GATEWAY_PAGE = (
    "<retrieval_status>success</retrieval_status>\n\n<task_id>b7d1</task_id>\n\n"
    "<task_type>local_bash</task_type>\n\n<status>completed</status>\n\n"
    "<exit_code>0</exit_code>\n\n<output>\n<html>\n"
    "<head><title>504 Gateway Time-out</title></head>\n<body>\n"
    "<center><h1>504 Gateway Time-out</h1></center>\n"
    "<hr><center>nginx/1.24.0 (Ubuntu)</center>\n</body>\n</html>\n</output>"
)


def _shell(command: str) -> ToolUseBlock:
    return ToolUseBlock(id="c1", name="Bash", input={"command": command})


def test_a_cargo_runs_count_of_passing_units_is_not_a_failure_line() -> None:
    call = _shell("cargo test")
    result = ToolResultBlock(tool_use_id="c1", content=f"Exit code: 101\n{CARGO_DOCTEST}")
    lines = failure_lines(call, result, 6)
    assert lines[0].startswith("error[E0425]: cannot find function `parse_all`")
    assert any(line.startswith("test result: FAILED. 0 passed; 1 failed;") for line in lines)
    assert not any("test result: ok." in line for line in lines)
    assert line_rank("test result: ok. 3 passed; 0 failed; 0 ignored") is None


def test_a_cargo_runs_count_of_its_failure_is_among_the_few_lines_kept() -> None:
    # microcompact keeps four lines (``cleared_error_lines``): libtest's count says how much of
    # the doc-tests failed, which cargo's verdict after it does not
    call = _shell("cargo test")
    result = ToolResultBlock(tool_use_id="c1", content=f"Exit code: 101\n{CARGO_DOCTEST}")
    lines = failure_lines(call, result, 4)
    assert (
        "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; "
        "finished in 0.10s" in lines
    )
    assert line_rank("test result: FAILED. 0 passed; 1 failed; 0 ignored") == COUNT_RANK
    assert line_rank("test result: FAILED. 3 passed; 0 failed; 0 ignored") != COUNT_RANK


def test_a_jest_configuration_error_is_a_failure_without_an_exit_code() -> None:
    excerpt = failure_excerpt(JEST_VALIDATION, is_error=False, shell=True, command="npm test")
    assert excerpt is not None
    assert "Watch plugin jest-watch-typeahead/filename cannot be found." in excerpt


# jest-config's error for a project with two configurations (resolveConfigPath's message)
JEST_TWO_CONFIGS = (
    "> web@1.0.0 test\n> jest src/app.test.ts\n\n"
    "\u25cf Multiple configurations found:\n\n"
    "    * /home/dev/web/jest.config.js\n"
    "    * `jest` key in /home/dev/web/package.json\n\n"
    "  Implicit config resolution does not allow multiple configuration files.\n"
    "  Either remove unused config files or select one explicitly with `--config`.\n\n"
    "  Configuration Documentation:\n  https://jestjs.io/docs/configuration\n"
)


def test_two_jest_configurations_are_a_failure_that_says_why() -> None:
    """No test ran: the heading with the first file it found, then the message under the list,
    whose words (``does not allow``) say what failed."""
    call = ToolUseBlock("text-call-9-0", "run_terminal_cmd", {"command": "npm test"})
    assert failure_lines(call, ToolResultBlock(call.id, JEST_TWO_CONFIGS), 4) == (
        "\u25cf Multiple configurations found: * /home/dev/web/jest.config.js",
        "Implicit config resolution does not allow multiple configuration files.",
    )


def test_a_jest_configuration_warning_is_not_a_failure() -> None:
    assert failure_excerpt(JEST_WARNING, is_error=False, shell=True, command="npm test") is None


def test_a_missing_unit_fails_a_step_before_a_search_that_found_nothing() -> None:
    excerpt = failure_excerpt(SYSTEMCTL, is_error=True, shell=True, command=SYSTEMCTL_COMMAND)
    assert excerpt == "Unit apache2.service could not be found."
    # systemctl's own line when a verb fails on a unit names the unit and why
    refused = "Failed to restart nginx.service: Unit nginx.service not found."
    assert line_rank(refused) == TELLING_RANK
    assert line_rank("Failed to fetch updates from the mirror") != TELLING_RANK


def test_a_search_that_found_nothing_is_still_no_failure() -> None:
    output = "Exit code 1\n"
    assert failure_excerpt(output, is_error=True, shell=True, command="grep -rn x src/") is None
    listed = "Exit code 1\nnginx.service loaded active running\n"
    command = "systemctl list-units | grep apache"
    assert failure_excerpt(listed, is_error=True, shell=True, command=command) is None


def test_a_background_commands_gateway_error_page_is_a_failure() -> None:
    call = ToolUseBlock(id="t1", name="TaskOutput", input={"task_id": "b7d1"})
    result = ToolResultBlock(tool_use_id="t1", content=GATEWAY_PAGE)
    assert result_failure(call, result) == "<head><title>504 Gateway Time-out</title></head>"
    served = GATEWAY_PAGE.replace("504 Gateway Time-out", "Welcome to nginx!")
    assert result_failure(call, ToolResultBlock(tool_use_id="t1", content=served)) is None


def test_a_diff_alone_shows_its_lines_whatever_they_say() -> None:
    differing = "Exit code 1\n3c3\n< cp: cannot stat 'a': No such file or directory\n---\n> ok\n"
    assert (
        failure_excerpt(differing, is_error=True, shell=True, command="diff old.log new.log")
        is None
    )
