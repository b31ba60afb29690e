"""A shell output whose exit code was lost (piped through ``tail``) still fails when a compiler,
linter, test runner or package manager printed its failure line; the marked lines are kept."""

from __future__ import annotations

import pytest

from contextwarden.summarizers.failure_quotes import further_lines
from contextwarden.summarizers.failures import failure_excerpt

BIOME = (
    "$ biome check --error-on-warnings\n"
    "  \u00d7 Formatter would have printed the following content:\n"
    "  \u00d7 The imports and exports are not sorted.\n"
    "Found 2 errors."
)


@pytest.mark.parametrize(
    ("output", "excerpt"),
    [
        (
            "> tsc -b\nsrc/main.tsx(15,12): error TS2352: Conversion of type",
            "src/main.tsx(15,12): error TS2352: Conversion of type",
        ),
        (
            "app.py:3: error: Name 'x' is not defined\nFound 1 error in 1 file",
            "app.py:3: error: Name 'x' is not defined",
        ),
        ("(pass) parser > reads\n(fail) parser > writes [0.4ms]", "(fail) parser > writes [0.4ms]"),
        ("cat: illegal option -- A\nusage: cat [-belnstuv] [file ...]", "cat: illegal option -- A"),
        (
            "Scope: all 6 projects\n\u2009ERR_PNPM_OUTDATED_LOCKFILE\u2009 Cannot install",
            "ERR_PNPM_OUTDATED_LOCKFILE\u2009 Cannot install",
        ),
        (BIOME, "\u00d7 Formatter would have printed the following content:"),
    ],
)
def test_a_failure_line_without_an_exit_code(output: str, excerpt: str) -> None:
    assert failure_excerpt(output, is_error=False, shell=True) == excerpt


@pytest.mark.parametrize(
    "output",
    [
        "src/app.py:12:    error = compute()\nsrc/app.py:30:    return error",  # grep hits
        "Found 0 errors. Watching for file changes.",
        "All 1290 tests pass (0 fail).",
    ],
)
def test_output_that_only_mentions_errors_is_not_a_failure(output: str) -> None:
    assert failure_excerpt(output, is_error=False, shell=True) is None


def test_the_marked_lines_are_further_lines() -> None:
    excerpt = failure_excerpt(BIOME, is_error=False, shell=True)
    assert excerpt is not None
    assert "\u00d7 The imports and exports are not sorted." in further_lines(BIOME, excerpt, 3)


def test_a_command_echoed_before_it_ran_is_no_failure_line() -> None:
    # bun (and yarn) echo a package script before running it; its flag says "error"
    output = BIOME + '\nerror: script "lint" exited with code 1'
    lines = further_lines(output, "Found 2 errors.", 5)
    assert "$ biome check --error-on-warnings" not in lines
    assert 'error: script "lint" exited with code 1' in lines


# pnpm audit prints one table per advisory at or above --audit-level, most severe first, its
# first row the severity and the title (plugin-commands-audit's renderAdvisoryTable), and exits 1
PNPM_AUDIT = """\
\u250c\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u252c\u2500\u2500\u2500\u2500\u2510
\u2502 critical \u2502 Prototype Pollution in lodash              \u2502
\u251c\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u253c\u2500\u2500\u2500\u2500\u2524
\u2502 Package  \u2502 lodash                                     \u2502
\u2502 Vulnerable versions \u2502 <4.17.12                        \u2502
\u2502 More info \u2502 https://github.com/advisories/GHSA-jf85-cpcp-j695 \u2502
\u2514\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2534\u2500\u2500\u2500\u2500\u2518
\u250c\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u252c\u2500\u2500\u2500\u2500\u2510
\u2502 high     \u2502 Undici: Malicious WebSocket 64-bit length \u2502
\u2502          \u2502 overflows parser and crashes the client    \u2502
\u251c\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u253c\u2500\u2500\u2500\u2500\u2524
\u2502 Package  \u2502 undici                                     \u2502
\u2514\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2534\u2500\u2500\u2500\u2500\u2518
2 vulnerabilities found
Severity: 1 high | 1 critical
"""


def test_each_advisory_pnpm_audit_lists_is_a_failure_line() -> None:
    excerpt = failure_excerpt(PNPM_AUDIT, is_error=True, shell=True)
    assert excerpt == "\u2502 critical \u2502 Prototype Pollution in lodash              \u2502"
    lines = further_lines(PNPM_AUDIT, excerpt, 3)
    assert lines[0] == "\u2502 high     \u2502 Undici: Malicious WebSocket 64-bit length \u2502"
    # the rows under a title say what is affected, not what failed
    assert not any("Package" in line or "More info" in line for line in lines)
