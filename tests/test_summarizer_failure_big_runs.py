"""The few lines kept of a big failed run: Biome's diagnostics named by file even when they have
no line (a file the formatter would change, one too large to check), its formatter's diff never
quoted as the failure; pytest's count of what failed kept before a line with only a failure
word; the shell's warning that explains its syntax error. Each output is written from the
tool's documented format (Biome's ``PrintHeader`` in ``biome_diagnostics/src/display.rs`` and
its formatter diff, pytest's ``-v`` progress, short test summary and ``summary_stats`` line,
bash's here-document warning from ``parse.y``), with the shape of outputs agents met."""

from __future__ import annotations

import pytest

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failure_ranks import COUNT_RANK, WORD_RANK, line_rank
from contextwarden.summarizers.failures import failure_lines

RULE = "\u2501" * 12
BIOME = (
    "$ biome check --error-on-warnings\n"
    f" at web/src/Progress.tsx:60:2 lint/correctness/useExhaustiveDependencies  FIXABLE  {RULE}\n\n"
    "  ! This hook specifies more dependencies than necessary: logs.\n\n"
    "    59 \u2502 \t// Auto-scroll log to bottom\n"
    "  > 60 \u2502 \tuseEffect(() => {\n\n"
    f" at web/src/Tab.tsx format {RULE}\n\n"
    "  \u00d7 Formatter would have printed the following content:\n\n"
    "    221 221 \u2502   \t\t| number\n"
    "    222     \u2502 - \t\t| undefined;\n"
    "        222 \u2502 + \t\t| undefined\n\n"
    f" at src/engine.ts format {RULE}\n\n"
    "  \u00d7 Formatter would have printed the following content:\n\n"
    "     80  80 \u2502   \n"
    "     81     \u2502 - \tconst hasPlan = totalBatches !== undefined;\n\n"
    "Checked 269 files in 95ms. No fixes applied.\nFound 3 errors.\nFound 1 warning.\n"
    f"check {RULE}\n\n"
    "  \u00d7 Some warnings were emitted while running checks.\n\n"
    'error: script "lint" exited with code 1\n'
)
BIOME_TOO_LARGE = (
    "> app@0.3.0 check\n> biome check\n\n"
    f".cache/session.json check {RULE}\n\n"
    "  i The size of the file is 1.5 MiB, which exceeds the configured maximum of 1.0 MiB for "
    "this project.\n"
    "    Use the `files.maxSize` configuration to change the maximum size of files processed.\n\n"
    f"src/model.ts format {RULE}\n\n"
    "  \u00d7 Formatter would have printed the following content:\n\n"
    "    230 230 \u2502   ): Projection {\n\n"
    f"tests/model.test.ts:65:17 lint/nursery/noUselessUndefined  FIXABLE  {RULE}\n\n"
    "  \u00d7 Don't use unnecessary undefined.\n\n"
    "Checked 612 files in 767ms. No fixes applied.\nFound 2 errors.\n"
    f"check {RULE}\n\n"
    "  \u00d7 Some errors were emitted while running checks.\n"
)
PYTEST_VERBOSE = (
    "collected 5 items\n\n"
    "tests/test_resolve.py::TestUnit::test_success FAILED                    [ 20%]\n"
    "tests/test_resolve.py::TestUnit::test_rejected FAILED                   [ 40%]\n"
    "tests/test_resolve.py::TestUnit::test_low FAILED                        [ 60%]\n"
    "tests/test_resolve.py::TestE2E::test_batch PASSED                       [ 80%]\n"
    "tests/test_resolve.py::TestE2E::test_audit FAILED                       [100%]\n\n"
    "=================================== FAILURES ===================================\n"
    "___________________________ TestUnit.test_success ____________________________\n\n"
    "    def test_success(self):\n"
    ">       with patch('app.resolver.ChatModel'):\n"
    "E       AttributeError: <module 'app.resolver'> does not have the attribute 'ChatModel'\n\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_resolve.py::TestUnit::test_success - AttributeError: <module 'app.res...\n"
    "FAILED tests/test_resolve.py::TestUnit::test_rejected - AttributeError: <module 'app.re...\n"
    "FAILED tests/test_resolve.py::TestUnit::test_low - AttributeError: <module 'app.resolve...\n"
    "FAILED tests/test_resolve.py::TestE2E::test_audit - AttributeError: <module 'app.resol...\n"
    "========================= 4 failed, 1 passed in 1.00s ==========================\n"
)
HEREDOC = (
    "bash: line 7: warning: here-document at line 1 delimited by end-of-file (wanted `EOF')\n"
    "bash: -c: line 8: syntax error: unexpected end of file from `{' command on line 1\n"
)


def shell(output: str, command: str) -> tuple[str, ...]:
    call = ToolUseBlock(id="s1", name="Bash", input={"command": command})
    return failure_lines(call, ToolResultBlock(tool_use_id="s1", content=output, is_error=True), 4)


def test_biome_names_each_file_not_the_formatters_diff() -> None:
    """A header with no line (``format``) is a header too, ``at `` before it or not; the
    formatter's message introduces code, which is not joined to it."""
    kept = shell(BIOME, "bun run lint")
    assert kept[0] == (
        "at web/src/Progress.tsx:60:2 lint/correctness/useExhaustiveDependencies  FIXABLE ! "
        "This hook specifies more dependencies than necessary: logs."
    )
    assert (
        "at web/src/Tab.tsx format \u00d7 Formatter would have printed the following content:"
        in (kept)
    )
    assert not any("\u2502" in line for line in kept)  # no line of the diff


def test_biome_keeps_the_file_it_could_not_check() -> None:
    kept = shell(BIOME_TOO_LARGE, "npm run check")
    assert kept[0] == (
        ".cache/session.json check i The size of the file is 1.5 MiB, which exceeds the "
        "configured maximum of 1.0 MiB for this project."
    )
    assert (
        "tests/model.test.ts:65:17 lint/nursery/noUselessUndefined  FIXABLE \u00d7 Don't use "
        in (" ".join(kept))
    )
    assert not any(line.startswith("check ") for line in kept)  # the run's summary header


def test_pytest_keeps_the_count_of_failures_before_a_line_with_only_a_failure_word() -> None:
    """Four lines of a run where four tests failed: the first, why, how many, then the ``-v``
    progress line (a probe may quote a test in that form)."""
    kept = shell(PYTEST_VERBOSE, "uv run pytest tests/test_resolve.py -v")
    assert kept == (
        "FAILED tests/test_resolve.py::TestUnit::test_success - AttributeError: <module "
        "'app.res...",
        "E       AttributeError: <module 'app.resolver'> does not have the attribute 'ChatModel'",
        "4 failed, 1 passed in 1.00s",
        "tests/test_resolve.py::TestUnit::test_success FAILED                    [ 20%]",
    )


@pytest.mark.parametrize(
    "line",
    [
        "========================= 4 failed, 1 passed in 1.00s ==========================",
        "3 failed, 9 passed, 3 warnings, 9 rerun in 12.31s",
        "= 2 errors in 0.50s =",
        "== 12 failed, 1 error in 3.10s (0:00:03) ==",
    ],
)
def test_a_runs_count_of_what_failed_ranks_above_a_failure_word(line: str) -> None:
    assert line_rank(line) == COUNT_RANK


def test_a_count_with_nothing_failed_is_no_failure_line() -> None:
    assert line_rank("============ 5 passed in 0.10s ============") is None


def test_one_failed_test_is_told_by_its_own_line_not_the_count() -> None:
    assert line_rank("=========== 1 failed, 3 rerun in 4.83s ===========") == WORD_RANK


def test_the_shells_warning_explains_its_syntax_error() -> None:
    kept = shell(HEREDOC, "cat >> ~/.ssh/config <<EOF\nHost x\nEOF\n")
    assert kept == (HEREDOC.splitlines()[1], HEREDOC.splitlines()[0])
    assert line_rank(HEREDOC.splitlines()[0]) == WORD_RANK
