"""Failures with no error flag and no telling exit code: a tool's own message saying it failed
(Codex's ``apply_patch``, OpenHands' editor, a notebook cell's traceback), a program's output
piped into a pager (the pager's exit code 0 is shown), an HTTP client's refused request. Outputs
are real ones from the project's corpus, trimmed; file contents and search hits stay no failure."""

from __future__ import annotations

import pytest

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failures import failure_excerpt, failure_lines, result_failure

PATCH_FAILED = (
    "apply_patch verification failed: Failed to find expected lines in "
    "/home/entity/projects/EntityProcess/agentv/packages/core/src/evaluation/yaml-parser.ts:\n"
    "  const evalCases = await loadCases(parsed);\n"
)
EDITOR_FAILED = (
    "ERROR:\nNo replacement was performed, old_str `DEF(idseqsingle);` did not appear verbatim "
    "in /workspace/ponylang__ponyc__0.1/src/libponyc/ast/parser.c."
)
NOTEBOOK_CELL = (
    "---------------------------------------------------------------------------\n"
    "KeyError                                  Traceback (most recent call last)\n"
    "Cell In[3], line 1\n----> 1 df['indexes'].sum()\n"
    "KeyError: 'indexes'"
)
PAGED_TRACEBACK = (
    "<returncode>0</returncode>\n<output>\nTraceback (most recent call last):\n"
    '  File "/testbed/debug.py", line 3, in <module>\n'
    "    from sqlfluff.dialects import dialect_selector\n"
    "ImportError: cannot import name 'dialect_selector' from 'sqlfluff.dialects'\n</output>"
)
CUT_TRACEBACK = (
    "<returncode>0</returncode>\n<output>\nTraceback (most recent call last):\n"
    '  File "/opt/miniconda3/bin/sqlfluff", line 33, in <module>\n'
    '  File "/testbed/src/sqlfluff/core/linter/linter.py", line 30, in <module>\n</output>'
)


def _call(name: str, **args: str) -> ToolUseBlock:
    return ToolUseBlock(id="c1", name=name, input=args)


def _failure(call: ToolUseBlock, text: str) -> str | None:
    return result_failure(call, ToolResultBlock(tool_use_id="c1", content=text))


@pytest.mark.parametrize(
    ("call", "text", "excerpt"),
    [
        (_call("apply_patch", input="*** Begin Patch"), PATCH_FAILED, PATCH_FAILED.splitlines()[0]),
        (
            _call("str_replace_editor", command="str_replace", path="parser.c"),
            EDITOR_FAILED,
            "ERROR: No replacement was performed, old_str `DEF(idseqsingle);` did not appear "
            "verbatim in /workspace/ponylang__ponyc__0.1/src/libponyc/ast/parser.c.",
        ),
        (
            _call("Edit", file_path="README.md"),
            "String to replace not found in file.\nString: ## Files Created",
            "String to replace not found in file.",
        ),
        (_call("run_ipython", code="df['indexes'].sum()"), NOTEBOOK_CELL, "KeyError: 'indexes'"),
        (  # Jupyter's colours
            _call("execute_cell", cell="df['indexes'].sum()"),
            NOTEBOOK_CELL.replace("KeyError", "\x1b[0;31mKeyError\x1b[0m"),
            "KeyError: 'indexes'",
        ),
    ],
)
def test_a_tool_saying_it_failed_without_a_flag(
    call: ToolUseBlock, text: str, excerpt: str
) -> None:
    assert _failure(call, text) == excerpt


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (_call("Read", file_path="errors.md"), "Error: the first line of a file about errors"),
        (_call("Grep", pattern="failed"), "src/a.ts:3: failed to parse"),
        (
            _call("Edit", file_path="prompts/shared/output-format-error.md"),
            "The file /x/prompts/shared/output-format-error.md has been updated successfully.",
        ),
        (_call("apply_patch", input="*** Begin Patch"), "Success. Updated the following files:"),
        (  # Gemini CLI's reader of several files, which no tool table lists
            _call("read_many_files", paths="logs/*.log"),
            "--- logs/run.log ---\nstarting\nloading config\n" + PAGED_TRACEBACK,
        ),
    ],
)
def test_contents_and_successes_are_not_failures(call: ToolUseBlock, text: str) -> None:
    assert _failure(call, text) is None


@pytest.mark.parametrize(
    ("command", "excerpt"),
    [
        (
            "cd /testbed && python debug.py 2>&1 | head -100",
            "ImportError: cannot import name 'dialect_selector' from 'sqlfluff.dialects'",
        ),
        (
            "cd /testbed && sqlfluff fix test.sql --force 2>&1 | head -20",
            'File "/testbed/src/sqlfluff/core/linter/linter.py", line 30, in <module>',
        ),
    ],
)
def test_a_pager_does_not_hide_a_traceback(command: str, excerpt: str) -> None:
    text = PAGED_TRACEBACK if "debug" in command else CUT_TRACEBACK
    assert failure_excerpt(text, is_error=False, shell=True, command=command) == excerpt
    # its own exit code 0: the program printed the traceback itself (``traceback.print_exc()``),
    # a failure when the output ends with it whole, and handled when the pager cut it
    printed = excerpt if text is PAGED_TRACEBACK else None
    unpaged = command.rsplit("|", 1)[0]
    assert failure_excerpt(text, is_error=False, shell=True, command=unpaged) == printed
    piped = f"set -o pipefail; {command}"  # the code shown is the program's
    assert failure_excerpt(text, is_error=False, shell=True, command=piped) == printed


@pytest.mark.parametrize(
    "command",
    [
        'rg -n "error:" packages/core/src | head -40',  # search hits
        "cat build.log | tail -20",  # a file's text
        "rg -n onRunComplete packages | sort | head",
    ],
)
def test_a_paged_search_or_file_is_not_a_failure(command: str) -> None:
    text = "Process exited with code 0\nOutput:\nsrc/a.ts:12: error: x is not defined\n"
    assert failure_excerpt(text, is_error=False, shell=True, command=command) is None


@pytest.mark.parametrize(
    ("text", "excerpt"),
    [
        (
            "HTTP/1.1 401 Unauthorized\ncontent-type: application/json\n\n"
            '{"message":"Unauthorized","statusCode":401}',
            "HTTP/1.1 401 Unauthorized",
        ),
        (
            'Process exited with code 0\nOutput:\n{\n  "message": "Not Found",\n'
            '  "documentation_url": "https://docs.github.com/rest",\n  "status": "404"\n}',
            '"message": "Not Found",',
        ),
        (
            '{"message":"Invalid OTP","error":"Bad Request","statusCode":400}',
            '{"message":"Invalid OTP","error":"Bad Request","statusCode":400}',
        ),
    ],
)
def test_an_http_client_shows_a_refused_request(text: str, excerpt: str) -> None:
    command = "curl -s -i -X POST http://localhost:3000/auth/identity/email/verify-otp"
    assert failure_excerpt(text, is_error=False, shell=True, command=command) == excerpt
    assert failure_excerpt(text, is_error=False, shell=True, command="cat reply.json") is None


@pytest.mark.parametrize(
    "text",
    [
        '{"idToken":"REDACTED","userId":"d528e2db","isNewUser":true,"error":null}',
        '{"status":"ok","uptime":12}',
        'Process exited with code 0\nOutput:\n{\n  "url": "https://api.github.com/repos/x/y/issues/386"',
    ],
)
def test_a_successful_reply_is_not_a_failure(text: str) -> None:
    command = "curl -s -X POST http://localhost:3000/auth/identity/email/verify-otp"
    assert failure_excerpt(text, is_error=False, shell=True, command=command) is None


def test_an_echo_after_the_program_masks_its_exit_code() -> None:
    text = (
        "Process exited with code 0\nOutput:\n(pass) parser > reads\n(fail) parser > writes\nexit=1"
    )
    masked = 'bun test; echo "exit=$?"'
    assert failure_excerpt(text, is_error=False, shell=True, command=masked) == (
        "(fail) parser > writes"
    )
    chained = "bun test && echo done"  # echo ran only because the tests passed
    assert failure_excerpt(text, is_error=False, shell=True, command=chained) is None


SCRIPT_CAUGHT = (
    "<returncode>0</returncode>\n<output>\nTesting the fix...\n"
    "   Error: name 'modpath_from_file_with_callback' is not defined\n</output>"
)


def test_a_script_that_prints_its_error_and_exits_0_failed() -> None:
    command = "cd /testbed && python test_fix.py"
    assert failure_excerpt(SCRIPT_CAUGHT, is_error=False, shell=True, command=command) == (
        "Error: name 'modpath_from_file_with_callback' is not defined"
    )


@pytest.mark.parametrize(
    ("command", "text"),
    [
        (  # an error it recovered from, then its success
            "npm run deploy",
            "Exit code: 0\nError: connection reset, retrying (1/3)\nUploading 12 files\n"
            "Uploaded 12 files\nDeployed to https://example.test in 4.2s",
        ),
        ("cat notes.md", "Exit code: 0\n# Notes\nError: a line of the notes"),
        ("rg -n 'Error:' src", "Exit code: 0\nsrc/cli.ts:12:Error: usage"),
    ],
)
def test_an_error_line_not_at_the_end_of_a_run_or_in_a_file_is_not_a_failure(
    command: str, text: str
) -> None:
    assert failure_excerpt(text, is_error=False, shell=True, command=command) is None


def _gemini(output: str, code: str) -> str:
    """What Gemini CLI's run_shell_command returns the model (its shell tool's fields)."""
    return (
        f"Command: npm test\nDirectory: (root)\nOutput: {output}\nError: (none)\n"
        f"Exit Code: {code}\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4242"
    )


def test_gemini_cli_shell_fields_are_not_failures() -> None:
    call = _call("run_shell_command", command="npm test")
    assert _failure(call, _gemini("12 passed", "0")) is None
    assert _failure(call, _gemini("(empty)", "(none)")) is None
    failed = _gemini("FAIL src/parser.test.ts\n  1 failed, 11 passed", "1")
    assert _failure(call, failed) == "FAIL src/parser.test.ts"


@pytest.mark.parametrize(
    ("text", "excerpt"),
    [
        (  # Claude Code from 2.1.86 (anthropics/claude-code#60684)
            "Wasted call \u2014 file unchanged since your last Read. Refer to that earlier "
            "tool_result instead.",
            "Wasted call \u2014 file unchanged since your last Read.",
        ),
        (  # its earlier wording (FILE_UNCHANGED_STUB)
            "File unchanged since last read. The content from the earlier Read tool_result in "
            "this conversation is still current \u2014 refer to that instead of re-reading.",
            "File unchanged since last read.",
        ),
    ],
)
def test_a_read_deduplicated_by_its_harness_read_nothing(text: str, excerpt: str) -> None:
    """Claude Code answers a re-read of a file its tools did not change with a notice, no error
    flag: the content is only in an earlier result, which compaction may have cleared."""
    read = _call("Read", file_path="docs/RESTORE-DB.md")
    assert failure_lines(read, ToolResultBlock(read.id, text), 4) == (excerpt,)
    shell = _call("Bash", command="cat notes.md")  # a file that says so is what it says
    assert failure_lines(shell, ToolResultBlock(shell.id, text), 4) == ()
