"""A pattern taken out of an output only where the output holds a string every match of it holds:
the same text as taking it out everywhere, for each pattern read so."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.summarizers import failure_quotes, failures
from contextwarden.summarizers.outputs import STREAM_MARK, STREAM_PREFIX, without

MARKED = [
    (failure_quotes._ANSI, failure_quotes._ANSI_MARKS),
    (STREAM_PREFIX, (STREAM_MARK,)),
    (failures._FIELD_PREFIX, failures._FIELD_MARKS),
    (failures._EMPTY_FIELD, (failures._EMPTY_MARK,)),
]
PIECES = [
    "\x1b[31m",
    "\x1b[0m\x0f",
    "^[[1;31m",
    "[stderr] ",
    "[stdout] ",
    "Output: ",
    "Stdout: ",
    "Stderr: ",
    "Error: (none)\n",
    "Output: (empty)\n",
    "Process Group PGID: (none)",
    "FAIL src/a.test.ts",
    "error: x",
    "\n",
    " ",
    "(",
    ":",
    "[",
    "^",
]
"""What the patterns take out, broken up and joined again, and what they leave."""


@pytest.mark.parametrize(
    "output",
    [
        "Command: npm test\nDirectory: (root)\nOutput: FAIL src/a.test.ts\nError: (none)\n"
        "Exit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4242",
        "\x1b[1m\x1b[31merror[E0432]\x1b[0m: unresolved import `x`\n^[[33mwarning^[[0m: unused",
        "[stderr] jq: parse error: Invalid numeric literal at line 1, column 6\n[stdout] {}",
        "Ran 3 tests in 0.2s\n\nOK",
    ],
)
def test_a_real_output_loses_what_the_pattern_takes(output: str) -> None:
    for pattern, marks in MARKED:
        assert without(pattern, output, *marks) == pattern.sub("", output)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_every_match_holds_one_of_the_pattern_s_marks(text: str) -> None:
    for pattern, marks in MARKED:
        assert without(pattern, text, *marks) == pattern.sub("", text)
        for found in re.finditer(pattern, text):
            assert any(mark in found.group(0) for mark in marks)
