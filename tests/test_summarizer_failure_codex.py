"""Failures as Codex sessions show them: a command's result given as a JSON object is read as the
program's exit code and output lines; a GitHub Actions log's ``##[error]``, pnpm's bracketed
``[ERR_PNPM_…]`` code and a tool refusing an argument are failure lines. The outputs are real ones
from Codex rollouts of chikachow/cyspbot (MIT; ``benchmarks/fresh_probes3``, sessions
``0d-ea03077ace0d``, ``2c-ee170305c92c``, ``38-f34522128a38``), trimmed; the older ``shell``
shape (``{"output": …, "metadata": {"exit_code": …}}``) is written here in that shape."""

from __future__ import annotations

import json

from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.failures import (
    failure_excerpt,
    failure_lines,
    result_failure,
)
from contextwarden.summarizers.outputs import exit_status, program_output
from contextwarden.summarizers.tools import shell_command

HEADER = "Script completed\nWall time 0.1 seconds\nOutput:\n\n"
LOCKED = HEADER + json.dumps(
    {
        "chunk_id": "c605b9",
        "wall_time_seconds": 0,
        "exit_code": 128,
        "original_token_count": 23,
        "output": "fatal: Unable to create '/Users/cysp/src/cyspbot/.git/index.lock': "
        "Operation not permitted\n",
    },
    separators=(",", ":"),
)
TYPECHECK = HEADER + json.dumps(
    {
        "chunk_id": "c43c55",
        "exit_code": 2,
        "output": "Checking formatting...\n\nAll matched files use the correct format.\n"
        "packages/oidc-issuer-google-service-account/test/issuer.test.ts(45,11): error TS2375: "
        "Type '{ azp: string; }' is not assignable to type 'Claims'.\n"
        "src/a.ts(3,1): error TS2304: Cannot find name 'x'.\n",
    },
    separators=(",", ":"),
)
OLD_SHELL = json.dumps(
    {
        "output": "\n FAIL  test/issuer.test.ts > resolves issuers\n"
        "      Tests  1 failed | 2 passed\n",
        "metadata": {"exit_code": 1, "duration_seconds": 2.4},
    }
)


def _exec(text: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id="c1", content=text)


def _call(name: str = "exec") -> ToolUseBlock:
    return ToolUseBlock(id="c1", name=name, input={"input": "await tools.exec_command({})"})


def test_the_exit_code_and_the_lines_of_a_json_result_are_read() -> None:
    assert exit_status(LOCKED) == 128
    assert result_failure(_call(), _exec(LOCKED)) == (
        "fatal: Unable to create '/Users/cysp/src/cyspbot/.git/index.lock': Operation not permitted"
    )
    assert program_output(OLD_SHELL).splitlines()[:3] == [
        "Exit code: 1",
        "",
        " FAIL  test/issuer.test.ts > resolves issuers",
    ]


def test_each_failure_line_of_a_json_result_is_its_own_line() -> None:
    lines = failure_lines(_call(), _exec(TYPECHECK), 3)
    assert lines[0].startswith(
        "packages/oidc-issuer-google-service-account/test/issuer.test.ts(45,11): error TS2375"
    )
    assert lines[1] == "src/a.ts(3,1): error TS2304: Cannot find name 'x'."
    shell = ToolUseBlock(id="c1", name="shell", input={"command": ["bash", "-lc", "pnpm test"]})
    assert failure_lines(shell, _exec(OLD_SHELL), 2) == (
        "FAIL  test/issuer.test.ts > resolves issuers",
        "Tests  1 failed | 2 passed",
    )


def test_a_json_result_that_exited_0_or_is_no_command_result_is_left_as_it_is() -> None:
    passed = json.dumps({"output": "error: none of this matters\n", "exit_code": 0})
    assert result_failure(_call(), _exec(passed)) is None
    for text in (
        '{"error": "not a command result", "status": 1}',
        '{"output": "x", "exit_code": true}',
        '{"output": "cut off',
        "plain output\n",
    ):
        assert program_output(text) == text


GH_FAILED_LOG = (
    "production\tUNKNOWN STEP\t2026-06-05T13:57:33.5730179Z \u26a0\ufe0f Wrangler not found or "
    "version is incompatible. Installing...\n"
    "production\tUNKNOWN STEP\t2026-06-05T13:57:33.5771509Z ##[error]Unable to locate executable "
    "file: pnpm.\n"
)
PNPM_NO_TTY = (
    "Process exited with code 1\nOutput:\n"
    '[WARN] The "pnpm" field in package.json is no longer read by pnpm.\n'
    "Scope: all 7 workspace projects\n"
    "[ERR_PNPM_ABORTED_REMOVE_MODULES_DIR_NO_TTY] Aborted removal of modules directory due to no "
    "TTY\n"
    "[ERROR] Command failed with exit code 1: node wrangler types --check\n"
)


def test_a_github_actions_error_annotation_is_an_error_line() -> None:
    command = "gh run view 27019182616 --job 79742159888 --log-failed"
    assert failure_excerpt(GH_FAILED_LOG, is_error=False, shell=True, command=command) == (
        "##[error]Unable to locate executable file: pnpm."
    )
    passed = GH_FAILED_LOG.replace("##[error]", "")
    assert failure_excerpt(passed, is_error=False, shell=True, command=command) is None


def test_a_bracketed_error_code_is_what_failed() -> None:
    excerpt = failure_excerpt(PNPM_NO_TTY, is_error=False, shell=True, command="pnpm run check")
    assert excerpt == (
        "[ERR_PNPM_ABORTED_REMOVE_MODULES_DIR_NO_TTY] Aborted removal of modules directory due "
        "to no TTY"
    )


def test_a_tool_refusing_an_argument_failed() -> None:
    wait = ToolUseBlock(id="c1", name="collaboration__wait_agent", input={"timeout_ms": 1000})
    refused = _exec("timeout_ms must be at least 10000")
    assert result_failure(wait, refused) == "timeout_ms must be at least 10000"
    assert result_failure(wait, _exec("agent finished: the timeout must be raised")) is None


def test_a_codex_scripts_shell_command_is_its_errors_target() -> None:
    def script(cmd: str) -> ToolUseBlock:
        args = json.dumps({"cmd": cmd, "workdir": "/Users/cysp/src/cyspbot"})
        return ToolUseBlock(
            id="c1", name="exec", input={"input": f"const r = await tools.exec_command({args});"}
        )

    locked = Message("user", (_exec(LOCKED),))
    done = Message("user", (ToolResultBlock(tool_use_id="c1", content="Script completed\n"),))
    messages = [Message.user("Commit it."), Message("assistant", (script("git add a.ts"),))]
    messages += [locked, Message("assistant", (script("cd /r && git add a.ts 2>&1"),)), done]
    (error,) = extract_facts(messages).errors
    assert error.target == "git add a.ts" and error.fixed  # the rerun of the same command
    search = ToolUseBlock(id="w", name="exec", input={"input": "await tools.web__run({q: 'x'})"})
    assert shell_command(search) is None
