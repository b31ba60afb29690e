"""Scripts and JSON a hostile client could send through the proxy: read in bounded work, never
a RecursionError (the summary and MicroCompact read every tool call and result they are sent)."""

from __future__ import annotations

import pytest

from contextwarden.model import ToolUseBlock
from contextwarden.summarizers import code_mode
from contextwarden.summarizers.code_mode import nested_calls
from contextwarden.summarizers.diagnostics import error_diagnostics
from contextwarden.summarizers.json_text import json_text
from contextwarden.summarizers.outputs import program_output

_DEEP = "[" * 5_000 + "]" * 5_000
"""Deeper than Python's JSON parser can go (it raises RecursionError at about 1,000 levels)."""


def _script(text: str) -> ToolUseBlock:
    return ToolUseBlock("call_1", "exec", {"input": text})


def test_a_literal_nested_too_deeply_is_read_as_no_input() -> None:
    script = "tools.exec_command(" + '{"cmd":' * 300 + '"ls"' + "}" * 300 + ")"
    (call,) = nested_calls(_script(script))
    assert (call.name, dict(call.input)) == ("exec_command", {})


@pytest.mark.parametrize(
    "text",
    [
        '{"exit_code":1,"output":"make: *** [all] Error 2\\n","extra":' + _DEEP + "}",
        "Script completed\nWall time 0.1 seconds\nOutput:\n"
        '{"exit_code":1,"output":"boom\\n","extra":' + _DEEP + "}",
    ],
)
def test_an_output_nested_too_deeply_is_read_as_it_is(text: str) -> None:
    """Its JSON is left as written (a code-mode script's header aside), no exit code read."""
    read = program_output(text)
    assert read.endswith('"extra":' + _DEEP + "}") and "Exit code:" not in read


def test_a_log_in_json_nested_too_deeply_is_read_as_it_is() -> None:
    text = '{"logTail":"error: x\\nerror: y","jobs":' + _DEEP + "}"
    assert json_text(text) == text


def test_diagnostics_nested_too_deeply_are_none() -> None:
    assert error_diagnostics('{"severity": "error", "x": ' + _DEEP + "}") == []


def test_literals_that_never_close_are_scanned_within_the_script_s_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """20,000 calls each opening a string that never closes: each scan would run to the script's
    end, 20,000 times over; the script's budget stops that after a few times its length."""
    scanned: list[int] = []
    string_end = code_mode._string_end

    def counted(script: str, at: int, stop: int) -> int:
        end = string_end(script, at, stop)
        scanned.append((stop if end < 0 else end) - at)
        return end

    monkeypatch.setattr(code_mode, "_string_end", counted)
    script = "await tools.exec_command({cmd: 'ls'});\n" + "tools.exec_command({cmd: '" * 20_000
    calls = nested_calls(_script(script))
    assert len(calls) == 20_001
    assert dict(calls[0].input) == {"cmd": "ls"}
    assert sum(scanned) <= code_mode.SCAN_PER_CHAR * len(script) + code_mode.SCAN_FLOOR
