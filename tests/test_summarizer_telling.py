"""Whether an output holds a telling line (``failure_marks.tells``) is what ``TELLING`` says of
it, its parts looked for one at a time."""

from __future__ import annotations

import time

import pytest

from contextwarden.summarizers.failure_marks import TELLING, tells

OUTPUTS = [
    "src/app.ts(12,5): error TS2352: Conversion of type 'A' to type 'B' may be a mistake.",
    "Compiling...\n/usr/bin/ld: main.o: in function `main':\nmain.c:(.text+0x1e): undefined "
    "reference to `helper'\ncollect2: error: ld returned 1 exit status",
    "'pnpm' is not recognized as an internal or external command,\noperable program or batch file.",
    "cp: cannot stat 'dist/app.js': No such file or directory",
    "make: *** [build] Error 2",
    "Checked 14 files in 3ms. No fixes applied.",
    "the docs say undefined references to symbols are resolved by the linker",
    "error: is not recognized as valid",
]


@pytest.mark.parametrize("output", OUTPUTS)
def test_an_output_tells_as_the_pattern_says(output: str) -> None:
    assert tells(output) is (TELLING.search(output) is not None)


def test_the_outputs_hold_both_kinds() -> None:
    # the cases above are not all one answer
    assert {tells(output) for output in OUTPUTS} == {True, False}


def test_a_long_line_is_looked_through_in_linear_time() -> None:
    line = "a" * 100_000 + " undefined referenc"
    started = time.perf_counter()
    assert not tells(line)
    assert not tells("\n".join([line] * 3))
    assert time.perf_counter() - started < 2.0
