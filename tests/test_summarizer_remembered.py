"""Readings of a text are worked out once per process and remembered by everything they read:
an equal text is not read again, and one read with other flags, or for another call, is."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers import failure_marks, failures, outputs
from contextwarden.summarizers.remembered import Remembered

CallsTo = Callable[[object, str], list[Any]]
"""The ``calls_to`` fixture (conftest.py)."""


def _fresh(text: str) -> str:
    """``text`` made unique, so no other test's reading of it is remembered already."""
    return f"{text} {uuid.uuid4().hex}"


def test_an_equal_text_is_read_once() -> None:
    read: list[str] = []

    def shout(text: str, loud: bool) -> str:
        read.append(text)
        return text.upper() if loud else text

    remembered = Remembered(shout)
    text = _fresh("disk full")
    copy = "".join(list(text))  # another object, the same text
    assert copy is not text
    assert remembered(text, True) == remembered(copy, True) == text.upper()
    assert read == [text]


def test_every_argument_is_part_of_what_is_remembered() -> None:
    remembered = Remembered(lambda text, flag, command: (text, flag, command))
    text = _fresh("exit 1")
    values = {remembered(text, flag, cmd) for flag in (True, False) for cmd in (None, "None")}
    assert values == {(text, flag, cmd) for flag in (True, False) for cmd in (None, "None")}


def test_the_least_recently_used_reading_is_forgotten_first() -> None:
    read: list[str] = []
    remembered = Remembered(lambda text: read.append(text) or text, size=2)
    a, b, c = _fresh("a"), _fresh("b"), _fresh("c")
    for text in (a, b, a, c, a, b):
        remembered(text)
    assert read == [a, b, c, b]  # c pushed b out, a was used since


def test_a_result_is_judged_once_whichever_copy_of_it_is_read(judged: list[str]) -> None:
    call = ToolUseBlock("t1", "Bash", {"command": "make build"})
    text = _fresh("make: *** [build] Error 2\nExit code 2")
    first = failures.result_failure(call, ToolResultBlock("t1", text, is_error=True))
    again = failures.result_failure(call, ToolResultBlock("t1", "".join(list(text)), True))
    assert first == again == "make: *** [build] Error 2"
    assert judged == [text]


def test_the_same_output_is_judged_with_the_call_it_answers() -> None:
    """grep's exit status 1 says "nothing found"; make's says it failed (``failure_excerpt``).
    The output is the same text: what is remembered for one call is not the other's, whichever
    is judged first."""
    output = "Exit code 1"
    for make_first in (True, False):
        grep = ToolUseBlock("t1", "Bash", {"command": f"grep -rn {_fresh('needle')} src"})
        make = ToolUseBlock("t2", "Bash", {"command": f"make {_fresh('target')}"})
        calls = (make, grep) if make_first else (grep, make)
        judged = [failures.result_failure(c, ToolResultBlock(c.id, output)) for c in calls]
        assert judged == ([output, None] if make_first else [None, output])


def test_an_output_is_searched_for_a_failure_mark_once(calls_to: CallsTo) -> None:
    """``marks_a_failure`` scans every line of an output with each mark's pattern; a result is
    asked again at each compaction (and for each call that could have made it)."""
    # go_trace: the last mark looked for when none before matched
    searched = calls_to(failure_marks, "go_trace")
    text = _fresh("   Compiling demo v0.1.0 (/src/demo)\n    Finished `dev` profile in 0.52s")
    copy = "".join(list(text))
    assert not failure_marks.marks_a_failure(text)
    assert not failure_marks.marks_a_failure(copy)
    assert searched == [text]


def test_an_output_s_exit_code_is_read_once(calls_to: CallsTo) -> None:
    """Codex's JSON result is read as the program's output (``program_output``) to find its
    exit code; an equal result asked again is not read again."""
    read = calls_to(outputs, "program_output")
    said = _fresh("make: *** [build] Error 2")
    text = f'{{"output":"{said}\\n","metadata":{{"exit_code":2,"duration_seconds":0.4}}}}'
    assert outputs.exit_status(text) == outputs.exit_status("".join(list(text))) == 2
    assert read == [text]
