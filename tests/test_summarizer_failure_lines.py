"""The excerpt of a failure is the line that says what failed, not the output's first line."""

# ruff: noqa: RUF001 (CJK colons and Cyrillic text on purpose)

from __future__ import annotations

import pytest

from contextwarden.summarizers.failures import failure_excerpt

NPM_PUBLISH = (
    "\U0001f4e6 Publishing agentv@4.40.1\n"
    "npm notice Publishing to https://registry.npmjs.org/ with tag latest\n"
    "npm error code ENEEDAUTH\n"
    "npm error need auth This command requires you to be logged in\n"
    "Exit code: 1"
)


@pytest.mark.parametrize(
    ("output", "excerpt"),
    [
        (NPM_PUBLISH, "npm error code ENEEDAUTH"),
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
