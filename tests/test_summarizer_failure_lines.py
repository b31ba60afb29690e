"""The excerpt of a failure is the line that says what failed, not the output's first line; a
command that masks its program's exit code (``|| true``) or shows another run's log is read as
if the code were lost, so the failure lines its output holds still count."""

# ruff: noqa: RUF001 (CJK colons and Cyrillic text on purpose)

from __future__ import annotations

import pytest

from contextwarden.summarizers.failure_quotes import EXCERPT_CHARS
from contextwarden.summarizers.failures import failure_excerpt

NPM_PUBLISH = (
    "\U0001f4e6 Publishing agentv@4.40.1\n"
    "npm notice Publishing to https://registry.npmjs.org/ with tag latest\n"
    "npm error code ENEEDAUTH\n"
    "npm error need auth This command requires you to be logged in\n"
    "Exit code: 1"
)
GH_LOG = (
    "release\tCheck tag\t2026-11-30T10:04:05.1234567Z Checking tags\n"
    "release\tCheck tag\t2026-11-30T10:04:06.0000000Z \u274c Tag v4.40.1 already exists\n"
    "Process exited with code 0"
)
NPM_VIEW = (
    "npm error code E404\n"
    "npm error 404 'agentv@4.40.1' is not in this registry.\n"
    "Process exited with code 0"
)


@pytest.mark.parametrize(
    ("output", "excerpt"),
    [
        # npm's code line with what the code means, the line under it (toolchain_marks)
        (
            NPM_PUBLISH,
            "npm error code ENEEDAUTH npm error need auth "
            "This command requires you to be logged in",
        ),
        ("> publish\nnpm ERR! code E403\nExit code: 1", "npm ERR! code E403"),
        (
            "=== RUN   TestMerge\npanic: assignment to entry in nil map\n\ngoroutine 7 [running]:"
            "\nExit code: 2",
            "panic: assignment to entry in nil map",
        ),
        (
            "Kompiliere main.c\nFehler: Datei nicht gefunden\nExit code: 1",
            "Fehler: Datei nicht gefunden",
        ),
        ("编译中\n错误：找不到模块\nExit code: 1", "错误：找不到模块"),
        (
            "Bundling 12 files\nBuild failed with 2 issues\nExit code: 1",
            "Build failed with 2 issues",
        ),
        ("Сборка проекта\nне удалось открыть файл\nExit code: 1", "не удалось открыть файл"),
    ],
)
def test_the_excerpt_is_the_line_that_says_what_failed(output: str, excerpt: str) -> None:
    assert failure_excerpt(output, is_error=False, shell=True) == excerpt


def test_the_first_line_when_no_line_says_what_failed() -> None:
    output = "\U0001f4e6 Publishing agentv@4.40.1\ndone in 2s\nExit code: 1"
    assert (
        failure_excerpt(output, is_error=False, shell=True) == "\U0001f4e6 Publishing agentv@4.40.1"
    )


def test_an_output_of_nothing_but_its_exit_code_is_quoted_as_the_harness_wrote_it() -> None:
    """``timeout`` killed a silent command: Claude Code's result is ``Exit code 124`` alone, and
    the summary quotes that line, not a paraphrase of it."""
    command = "timeout 5 nc -zv maps.example.org 6379 2>&1"
    excerpt = failure_excerpt("Exit code 124", is_error=True, shell=True, command=command)
    assert excerpt == "Exit code 124"


def test_a_masked_exit_code_does_not_hide_the_failure() -> None:
    command = "npm view agentv@4.40.1 version || true"
    assert failure_excerpt(NPM_VIEW, is_error=False, shell=True, command=command) == (
        "npm error code E404 npm error 404 'agentv@4.40.1' is not in this registry."
    )
    unmasked = "npm view agentv@4.40.1 version"  # its exit 0 wins unless it ends on the error
    recovered = NPM_VIEW.replace("Process exited", "using agentv@4.40.0\nProcess exited")
    assert failure_excerpt(recovered, is_error=False, shell=True, command=unmasked) is None
    assert failure_excerpt(recovered, is_error=False, shell=True, command=command) is not None


def test_a_ci_log_shows_the_failure_of_its_run() -> None:
    excerpt = failure_excerpt(GH_LOG, is_error=False, shell=True, command="gh run view 42 --log")
    assert excerpt == "\u274c Tag v4.40.1 already exists"
    assert failure_excerpt(GH_LOG, is_error=False, shell=True, command="gh run list") is None


@pytest.mark.parametrize(
    ("output", "command"),
    [
        (
            "error: the word in a file\nProcess exited with code 0",
            "grep -h error notes.txt || true",
        ),
        ("Checked 12 files\nProcess exited with code 0", "biome check . || true"),
        (
            "app\tbuild\t2026-11-30T10:04:05Z 0 errors\nProcess exited with code 0",
            "gh run view 1 --log",
        ),
    ],
)
def test_a_masked_or_logged_output_without_a_failure_line_is_not_a_failure(
    output: str, command: str
) -> None:
    assert failure_excerpt(output, is_error=False, shell=True, command=command) is None


def test_a_tool_error_is_its_first_line_not_the_text_it_echoes() -> None:
    output = (
        "Found 2 matches of the string to replace, but replace_all is false.\n"
        'String: return fmt.Errorf("failed to open %s", path)'
    )
    assert failure_excerpt(output, is_error=True, shell=False) == (
        "Found 2 matches of the string to replace, but replace_all is false."
    )


# tsc's error as a Codex session of savekirk/session-bridge shows it (MIT, commit ea93acc).
TSC_LONG = (
    "src/checkpoints/orchestration.ts(315,59): error TS2345: Argument of type '({ checkpointId: "
    "string; summary: CheckpointSummaryRecord; sessions: SessionContentRecord[]; rewindPoints: "
    "never[]; commits: CheckpointCommit[]; } | null)[]' is not assignable to parameter of type "
    "'Iterable<LoadedCheckpointRecord>'."
)


def test_a_long_failure_line_keeps_its_head_and_its_last_clause() -> None:
    """A diagnostic too long to quote whole loses the type it quotes in the middle, not what it
    is about (its location and code) nor what was expected (its last clause)."""
    excerpt = failure_excerpt(TSC_LONG, is_error=True, shell=True)
    assert excerpt is not None
    assert len(excerpt) <= EXCERPT_CHARS
    assert excerpt.startswith("src/checkpoints/orchestration.ts(315,59): error TS2345: Argument")
    assert excerpt.endswith(
        " … } | null)[]' is not assignable to parameter of type 'Iterable<LoadedCheckpointRecord>'."
    )


def test_a_long_line_with_no_last_clause_keeps_its_head() -> None:
    line = "error: " + "x" * 400
    excerpt = failure_excerpt(line, is_error=True, shell=True)
    assert excerpt == line[: EXCERPT_CHARS - 1] + "…"


def test_a_long_line_ending_in_a_link_keeps_its_head() -> None:
    """A last clause pointing to a page says where to read more, not what failed: the head,
    which holds the message, is kept instead (a Vertex AI error, in specstoryai/keyframe-blogger's
    SpecStory history, MIT)."""
    line = (
        'details = "Publisher Model `projects/gen-lang-client-0461843917/locations/us-central1/'
        "publishers/google/models/gemini-1.5-flash-002` was not found or your project does not "
        "have access to it. Please ensure you are using a valid model version. For more "
        'information, see: https://cloud.google.com/vertex-ai/generative-ai/docs/learn/model-versions"'
    )
    assert failure_excerpt(line, is_error=True, shell=True) == line[: EXCERPT_CHARS - 1] + "…"
