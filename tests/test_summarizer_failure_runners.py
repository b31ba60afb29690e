"""Failures that JavaScript runtimes and test runners, Biome, the shells and an export's framing
print in their own wording: each output below was written from the tool's documented format (the
Node.js "Errors" page, Jest's and Playwright's reporters, Biome's "Diagnostics" reference, bash's,
dash's and BWK awk's messages, Claude Code's Edit tool, SpecStory's Markdown export), with the
same shape as outputs agents met; and outputs that only look like failures are not taken for
them."""

from __future__ import annotations

import pytest

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failure_quotes import further_lines
from contextwarden.summarizers.failure_ranks import TELLING_RANK, TRAILER_RANK, line_rank
from contextwarden.summarizers.failures import failure_excerpt, failure_lines, result_failure

NODE_UNCAUGHT = (
    "> api@1.0.0 dev\n> tsx watch src/server.ts\n\n"
    "node:internal/modules/run_main:107\n    triggerUncaughtException(\n    ^\n\n"
    "Error [TransformError]: \n"
    "You installed esbuild for another platform than the one you're currently using.\n"
    "This won't work because esbuild is written with native code and needs to\n"
    "install a platform-specific binary executable.\n"
    "    at validateBinaryVersion (/w/node_modules/esbuild/lib/main.js:2:1)\n\n"
    "Node.js v22.3.0\n"
)
PLAYWRIGHT = (
    "Running 3 tests using 2 workers\n\n"
    "  1) [chromium] \u203a tests/chat.spec.ts:12:7 \u203a Chat \u203a sends a message \n\n"
    "    Error: expect(locator).toBeVisible() failed\n\n"
    "    Locator:  locator('textarea').first()\n"
    "    Received: <element(s) not found>\n\n"
    "      11 |   const input = page.locator('textarea').first();\n"
    "    > 12 |   await expect(input).toBeVisible();\n"
    "         |                       ^\n\n"
    "  2) [chromium] \u203a tests/chat.spec.ts:30:7 \u203a Chat \u203a keeps history \n\n"
    "    Error: expect(locator).toBeVisible() failed\n\n"
    "  3) [chromium] \u203a tests/setup.spec.ts:8:7 \u203a Setup \u203a creates a conversation \n\n"
    "    Error: Failed to create conversation: 500\n\n"
    "       at fixtures/setup.ts:40\n\n"
    "  3 failed\n"
    "    [chromium] \u203a tests/chat.spec.ts:12:7 \u203a Chat \u203a sends a message \n"
    "  4 passed (12.1s)\n"
)
BIOME = (
    "src/hooks/manager.ts:355:2 lint/complexity/noExcessiveCognitiveComplexity "
    "\u2501\u2501\u2501\u2501\u2501\u2501\n\n"
    "  ! Excessive complexity of 18 detected (max: 15).\n\n"
    "    354 \u2502 \t */\n  > 355 \u2502 \tloadHooks(): void {\n\n"
    "src/hooks/executor.ts:797:5 lint/style/useBlockStatements  FIXABLE  "
    "\u2501\u2501\u2501\u2501\u2501\u2501\n\n"
    "  \u00d7 Block statements are preferred in this position.\n\n"
    "src/hooks/executor.ts:862:2 parse \u2501\u2501\u2501\u2501\u2501\u2501\n\n"
    "  \u00d7 Expected a statement but instead found '.'.\n\n"
    "Checked 650 files in 836ms. No fixes applied.\nFound 2 errors.\nFound 1 warning.\n"
    "check \u2501\u2501\u2501\u2501\u2501\u2501\n\n"
    "  \u00d7 Some errors were emitted while running checks.\n"
)
JEST = (
    "PASS tests/api/chat.test.ts\n"
    "  \u25cf Console\n\n"
    "    console.error\n"
    "      Error: Error: getaddrinfo ENOTFOUND db.example.test\n\n"
    "      at Object.<anonymous> (lib/db.ts:12:11)\n\n"
    "FAIL tests/integration/tracing.test.ts\n"
    "  \u25cf Tracing \u203a sends a trace on each message\n\n"
    "    ReferenceError: fetch is not defined\n\n"
    "      28 |     // create a conversation, with an invalid id first\n"
    "    > 30 |     const r = await fetch(`${URL}/api/conversations`);\n\n"
    "  \u25cf Tracing \u203a keeps the metadata\n\n"
    "    ReferenceError: fetch is not defined\n\n"
    "Tests:       2 failed, 3 passed, 5 total\n"
)


def shell(output: str, command: str = "npm test") -> tuple[str, ...]:
    call = ToolUseBlock(id="s1", name="Bash", input={"command": command})
    return failure_lines(call, ToolResultBlock(tool_use_id="s1", content=output), 4)


def test_node_prints_an_uncaught_error_with_its_code() -> None:
    """``Error [CODE]: message`` (esbuild's message on the next line) is a failure: a dev
    server that died shows no exit code, only this."""
    assert shell(NODE_UNCAUGHT, "npm run dev")[0] == (
        "Error [TransformError]: You installed esbuild for another platform than the one "
        "you're currently using."
    )
    missing = "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /w/a.js"
    assert failure_excerpt(missing, is_error=False, shell=True) == missing


def test_playwright_keeps_each_different_reason_once() -> None:
    """Fifteen tests failing on one assertion print it fifteen times: it is kept once, so the
    test that failed otherwise (``Failed to create conversation: 500``) is kept too."""
    kept = shell(PLAYWRIGHT, "npx playwright test")
    assert kept[0] == "Error: expect(locator).toBeVisible() failed"
    assert "Error: Failed to create conversation: 500" in kept
    assert kept.count("Error: expect(locator).toBeVisible() failed") == 1
    assert line_rank("  3 failed") == TRAILER_RANK
    assert line_rank(" 0 fail") is None  # bun's count when nothing failed
    assert not any("|" in line for line in kept)  # the code frame is source, not a failure


def test_a_playwright_run_whose_exit_code_was_lost_still_failed() -> None:
    verdict = "Running 2 tests\n  1 failed\n    [chromium] \u203a a.spec.ts:3:5 \u203a a \n"
    assert failure_excerpt(verdict, is_error=False, shell=True) is not None


def test_biome_keeps_each_diagnostic_with_its_rule_and_message() -> None:
    kept = shell(BIOME, "npx biome check")
    assert kept[0] == (
        "src/hooks/manager.ts:355:2 lint/complexity/noExcessiveCognitiveComplexity ! Excessive "
        "complexity of 18 detected (max: 15)."
    )
    assert kept[1] == (
        "src/hooks/executor.ts:797:5 lint/style/useBlockStatements  FIXABLE \u00d7 Block "
        "statements are preferred in this position."
    )
    assert kept[2].startswith("src/hooks/executor.ts:862:2 parse \u00d7 Expected a statement")
    assert line_rank("  \u00d7 Some errors were emitted while running checks.") == TRAILER_RANK


def test_jest_keeps_why_tests_failed_not_what_they_logged() -> None:
    kept = shell(JEST, "npx jest")
    assert kept[:2] == (
        "FAIL tests/integration/tracing.test.ts",
        "ReferenceError: fetch is not defined",
    )
    assert kept[-1] == "Error: Error: getaddrinfo ENOTFOUND db.example.test"  # logged: last
    assert not any("invalid id" in line for line in kept)  # a code frame's comment


@pytest.mark.parametrize(
    "output",
    [
        "bash: -c: line 2: syntax error: unexpected end of file",
        "bash: line 1: syntax error near unexpected token `('",
        'sh: 1: Syntax error: "fi" unexpected',
        "awk: syntax error at source line 3\n context is\n\tmatch($0, >>> /x/, <<<\n"
        "awk: illegal statement at source line 3",
        "(eval):1: parse error near `)'",
    ],
)
def test_a_shells_or_awks_syntax_error_is_a_failure(output: str) -> None:
    excerpt = failure_excerpt(output, is_error=False, shell=True)
    assert excerpt == output.splitlines()[0]
    assert line_rank(output.splitlines()[0]) == TELLING_RANK


def test_an_exported_edit_refusal_is_a_failure() -> None:
    """SpecStory frames a tool's message (``Result:``, a code fence); Claude Code's Edit refuses
    a file not read first with no error flag surviving the export."""
    call = ToolUseBlock(id="e1", name="Edit", input={})
    result = ToolResultBlock(
        tool_use_id="e1",
        content="Result:\n\n```\n"
        "File has not been read yet. Read it first before writing to it.\n```",
    )
    assert failure_lines(call, result, 4) == (
        "File has not been read yet. Read it first before writing to it.",
    )


def test_an_exported_write_refusal_is_its_harness_message_not_the_content() -> None:
    """SpecStory shows a refused Write's content above Claude Code's ``<tool_use_error>``: the
    tag's message says what failed, not the first line of the file it was to write."""
    call = ToolUseBlock(id="w1", name="Write", input={"file_path": "notes.md"})
    result = ToolResultBlock(
        tool_use_id="w1",
        content="```markdown\n# Notes\n- [Release](release.md) - shipped, cannot roll back\n```\n\n"
        "```text\n<tool_use_error>File has not been read yet. Read it first before writing "
        "to it.</tool_use_error>\n```",
        is_error=True,
    )
    assert result_failure(call, result) == (
        "File has not been read yet. Read it first before writing to it."
    )


@pytest.mark.parametrize(
    "output",
    [
        # a passing Jest run whose code logged an error it caught
        "PASS tests/db.test.ts\n  \u25cf Console\n\n    console.error\n"
        "      Error [ERR_SOCKET]: connection reset\n\n      at lib/db.ts:3:9\n",
        # Biome finding only warnings: its header does not say a run failed
        "src/a.ts:3:1 lint/complexity/noForEach \u2501\u2501\u2501\n\n"
        "  ! Prefer for...of instead of forEach.\n\nFound 1 warning.\n",
        "Running 4 tests using 2 workers\n  3 passed (4.1s)\n  1 flaky\n",
        # grep hits quoting a syntax error and an uncaught error
        "scripts/ci.sh:12:  echo 'bash: syntax error: unexpected end of file'\n"
        "docs/errors.md:40:Error [ERR_REQUIRE_ESM]: require() of ES Module",
    ],
)
def test_what_only_looks_like_a_failure_is_not_one(output: str) -> None:
    assert failure_excerpt(output, is_error=False, shell=True, command="run | tail") is None


def test_a_tool_message_quoting_a_refusal_later_is_not_one() -> None:
    call = ToolUseBlock(id="w1", name="Write", input={"file_path": "notes.md"})
    result = ToolResultBlock(
        tool_use_id="w1",
        content="Result:\n\n```\nFile created successfully at: notes.md\n"
        "File has not been read yet. Read it first before writing to it.\n```",
    )
    assert failure_lines(call, result, 4) == ()


def test_the_further_lines_do_not_repeat_a_kept_lines_part() -> None:
    excerpt = failure_excerpt(BIOME, is_error=True, shell=True)
    assert excerpt is not None
    kept = further_lines(BIOME, excerpt, 3)
    assert "\u00d7 Block statements are preferred in this position." not in kept


def test_a_hook_that_passed_is_not_what_failed() -> None:
    """pre-commit prints each hook's name and ``Passed``; when no line says what failed, the
    excerpt is the first line that is not such a status (here pre-commit's own message)."""
    output = (
        "Exit code 1\n"
        "gitleaks.................................................................Passed\n"
        "bug: pre-commit's script is installed in migration mode\n"
        "run `pre-commit install -f --hook-type commit-msg` to fix this\n"
    )
    call = ToolUseBlock(id="g1", name="Bash", input={"command": "git commit -m 'x'"})
    result = ToolResultBlock(tool_use_id="g1", content=output, is_error=True)
    assert failure_lines(call, result, 4)[0] == (
        "bug: pre-commit's script is installed in migration mode"
    )


BUN_MATCHERS = """\
src/get.test.ts:
45 |     expect(stdout.trim()).toBe('null');
                               ^
error: expect(received).toBe(expected)

Expected: "null"
Received: ""

      at <anonymous> (src/get.test.ts:45:27)
\u2717 get > prints null for --json when session not found [21.03ms]
52 |     expect(stderr || '').toContain("Session 'notfound' not found.");
                              ^
error: expect(received).toContain(expected)

Expected to contain: "Session 'notfound' not found."
Received: "error: Cannot find package 'commander' from '/w/src/cli.ts'"

      at <anonymous> (src/get.test.ts:52:26)
\u2717 get > prints human error when session not found [19.52ms]

 0 pass
 2 fail
"""
"""bun's report of two failed matchers (bun 1.2): each hint, then the values it compared."""


def test_what_a_matcher_expected_is_no_failure_what_it_received_may_be() -> None:
    excerpt = failure_excerpt(BUN_MATCHERS, is_error=False, shell=True, command="bun test")
    assert excerpt == "\u2717 get > prints null for --json when session not found [21.03ms]"
    more = further_lines(BUN_MATCHERS, excerpt, 2)
    # "not found" in the expected value is the test's text; the code printed an error instead
    assert more[1] == "Received: \"error: Cannot find package 'commander' from '/w/src/cli.ts'\""
    assert not any(line.startswith("Expected to contain") for line in more)


# An uncaught error under Node (V8's "Stack trace API" frames), then a JVM exception's frames
# (Throwable.printStackTrace): the frames' function names use failure words
NODE_FRAMES = (
    "TypeError: Cannot read properties of undefined (reading 'id')\n"
    "    at ErrorBoundary.handleError [as onError] (/w/src/boundary.js:12:9)\n"
    "    at async failSafe (/w/src/retry.js:40:3)\n"
    "    at new FailureLog (/w/src/log.js:7:11)\n"
    "    at /w/src/errors.js:3:1\n"
    "java.lang.IllegalStateException: queue closed\n"
    "\tat com.acme.ErrorQueue.push(ErrorQueue.java:42)\n"
    "\tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n"
)


def test_a_stack_frame_is_never_a_failure_line_whatever_its_function_is_called() -> None:
    """A frame says where the code was (``at ErrorBoundary.handleError (…)``), not what failed:
    it ranks nowhere, so the kept lines are the errors themselves."""
    assert all(line_rank(line) is None for line in NODE_FRAMES.splitlines() if "at " in line)
    call = ToolUseBlock("c", "Bash", {"command": "node src/app.js"})
    kept = failure_lines(call, ToolResultBlock("c", NODE_FRAMES + "Exit code 1", True), 4)
    assert kept == (
        "TypeError: Cannot read properties of undefined (reading 'id')",
        "java.lang.IllegalStateException: queue closed",
    )


@pytest.mark.timeout(10)
def test_a_long_line_that_opens_like_a_frame_is_ranked_in_linear_time() -> None:
    """A minified bundle's line after ``at `` (or a hostile one) is read once, not once per
    position: 400,000 characters took minutes when the frame's location was matched as a run."""
    assert line_rank("  at " + "a" * 400_000 + " failed") is not None  # no location: not a frame
    assert line_rank("    at f (" + "a" * 400_000 + ":1:2)") is None
