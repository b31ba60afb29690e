"""Codex's code mode read as the tool calls its scripts make: which nested tools an ``exec``
script called with what input, and what its answer says of the script (completed or thrown).

In code mode (``codex-rs/core/src/tools/code_mode/``, ``codex-rs/code-mode/``) the model has one
free-form tool, ``exec``, whose input is JavaScript; every other tool is a function on a global
``tools`` object (``description.md``: ``await tools.exec_command({"cmd": "…", "workdir":
"…"})``, ``tools.apply_patch(patch)``, ``tools.update_plan({plan: […]})``). A nested
``exec_command`` resolves to ``{chunk_id, wall_time_seconds, exit_code, session_id,
original_token_count, output}`` (``ExecCommandToolOutput::code_mode_result`` in
``codex-rs/core/src/tools/context.rs``) and the script shows what it passes to ``text()``, one
content item each. The answer (``mod.rs``, ``prepend_script_status``) opens ``Script completed``
(or ``Script failed``, ``Script terminated``, ``Script running with cell ID N``), then ``Wall
time 0.1 seconds`` and ``Output:``; a script that threw ends with ``Script error:`` and the
error's text (``handle_runtime_response``), a nested tool's error included: a tool that fails
rejects its promise with its message (``runtime/module_loader.rs``, ``resolve_tool_response``).

A call that only waits is read as the call it waits on: a ``wait`` as the script whose answer
named its cell, and a unified exec ``write_stdin`` poll (``codex-rs/core/src/tools/handlers/
unified_exec.rs``: ``session_id``, ``chars``; direct, or ``tools.write_stdin`` in a script) as the
call whose answer named its session, ``Process running with session ID N`` in the text
``ExecCommandToolOutput`` formats (``codex-rs/core/src/tools/context.rs``) or the ``session_id``
of its ``code_mode_result``. The poll's answer is the rest of that command's output, and its
exit code once the process exited.

A call's input is read only where the script writes it as a literal (JSON, or a JavaScript
object literal with bare keys and single quotes), a template literal with no substitution, or a
name a ``const``/``let``/``var`` gave such a literal; any other argument is read as no input, the
tool's name still known.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.model import FrozenDict, Message, ToolUseBlock, freeze
from contextwarden.summarizers.remembered import Remembered
from contextwarden.toolnames import base_name

CODE_MODE_TOOL = "exec"
"""Code mode's one tool (``PUBLIC_TOOL_NAME`` in ``codex-rs/code-mode``)."""
SCRIPT_KEY = "input"
"""Where Codex's loader keeps a free-form tool's input (``formats.codex_items``)."""
WAIT_TOOL = "wait"
"""Code mode's tool that waits on a script still running (``cell_id``), answered with what the
script showed since, under the same header as a script's answer."""

_NESTED = re.compile(r"\btools\.([A-Za-z_$][\w$]*)\s*\(\s*")
_DECLARATION = re.compile(r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*")
_COLON = re.compile(r"\s*:")
_HEADER = re.compile(
    r"\AScript (?P<status>completed|failed|terminated|running with cell ID \S+)\n"
    r"Wall time [\d.]+ seconds\nOutput:\n"
)
"""What Codex puts before a script's output (``format_script_status``,
``prepend_script_status``)."""
SCRIPT_ERROR = "Script error:\n"
"""What Codex puts before the error of a script that threw (``handle_runtime_response``)."""
_RUNNING = re.compile(r"\AScript running with cell ID (?P<cell>\S+)\n")
"""The answer of a script that went on running (``format_script_status``): its cell ID is what a
later ``wait`` names."""
POLL_TOOL = "write_stdin"
"""Unified exec's tool that writes to (or, with ``chars: ""``, only polls) a process still running
(``session_id``), answered with its output since and, once it exited, its exit code."""
_SESSION_LINE = "Process running with session ID "
"""The line of a unified exec answer whose process still runs (``ExecCommandToolOutput``):
the session ID is what a later ``write_stdin`` names."""
_SESSION_NAMED = re.compile(
    rf"{re.escape(_SESSION_LINE)}(?P<line>-?[0-9]+)\n|\"session_id\":(?P<json>-?[0-9]+),"
)
"""An answer naming a process still running by its session ID: Codex's ``Process running
with session ID N`` line, or the ``"session_id":N`` a script showed of a nested
``exec_command``'s result object (``JSON.stringify``)."""
_BARE_KEY = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass(frozen=True, slots=True)
class ScriptAnswer:
    """A code-mode script's answer: what it showed, and what it threw (or "")."""

    shown: str
    error: str


def is_script(block: ToolUseBlock) -> bool:
    """``block`` is a code-mode ``exec`` call: its input a script."""
    return base_name(block.name) == CODE_MODE_TOOL and isinstance(
        block.input.get(SCRIPT_KEY) if isinstance(block.input, Mapping) else None, str
    )


def nested_calls(block: ToolUseBlock) -> tuple[ToolUseBlock, ...]:
    """The tool calls a code-mode script makes, in the order its text names them, each with the
    script call's id (empty when ``block`` is no script)."""
    if not is_script(block):
        return ()
    return tuple(
        ToolUseBlock(block.id, name, args) for name, args in _calls_of(block.input[SCRIPT_KEY])
    )


def _read_calls(script: str) -> tuple[tuple[str, FrozenDict], ...]:
    """Each ``tools.<name>(…)`` call in ``script``: its name and its literal input (``_literal``;
    {} when none is a literal, or when the script has spent its ``SCAN_PER_CHAR`` budget)."""
    declared = _declarations(script)
    budget = SCAN_PER_CHAR * len(script) + SCAN_FLOOR
    read: dict[int, Any] = {}  # a literal's start: its value (a declaration named twice)
    calls = []
    for found in _NESTED.finditer(script):
        at = _literal_at(script, found.end(), found.start(), declared)
        if at is not None and at not in read and budget > 0:
            read[at], end = _literal(script, at, min(len(script), at + budget))
            budget -= max(end - at, 1)
        value = read.get(at) if at is not None else None
        if isinstance(value, str):
            value = {SCRIPT_KEY: value}  # a free-form tool's input (``tools.apply_patch(patch)``)
        try:
            frozen = freeze(value if isinstance(value, dict) else {})
        except FormatError:  # nested deeper than any real input
            frozen = FrozenDict()
        calls.append((found.group(1), frozen))
    return tuple(calls)


_calls_of = Remembered(_read_calls)
"""A script is read at every question asked of its call (is it a shell, which command, which
files): once is enough."""

SCAN_PER_CHAR = 4
"""Characters the literals of one script may be scanned for, per character of the script (and
``SCAN_FLOOR`` more): a real script's literals are read once each, within one pass; a hostile
one (a thousand calls each opening a literal that never closes) is not read once per call."""
SCAN_FLOOR = 65_536


def _declarations(script: str) -> dict[str, list[int]]:
    """Where each name a ``const``/``let``/``var`` declares is given its value, in order."""
    found: dict[str, list[int]] = {}
    for declared in _DECLARATION.finditer(script):
        found.setdefault(declared.group(1), []).append(declared.end())
    return found


def _literal_at(script: str, at: int, before: int, declared: dict[str, list[int]]) -> int | None:
    """Where the literal a call passes starts: at ``script[at:]``, or, for a name, the value its
    last declaration before ``before`` gave it; None for a name never declared there."""
    name = _BARE_KEY.match(script, at)
    if name is None:
        return at
    ends = declared.get(name.group(0), [])
    last = bisect_left(ends, before + 1) - 1
    return ends[last] if last >= 0 else None


def _literal(script: str, at: int, stop: int) -> tuple[Any, int]:
    """The JSON, JavaScript object or template literal at ``script[at:stop]``, or None, and where
    its reading stopped."""
    if script.startswith("`", at):
        end = _string_end(script, at, stop)
        if end < 0:
            return None, stop
        body = script[at + 1 : end]
        return (None if "${" in body else _unescaped(body)), end + 1
    if script.startswith(("{", "[", '"'), at):
        try:
            value, used = json.JSONDecoder().raw_decode(script[at:stop])
            return value, at + used
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to parse
            pass
    as_json, end = _as_json(script, at, stop)
    try:
        return (json.loads(as_json) if as_json is not None else None), end
    except (ValueError, RecursionError):
        return None, end


def _as_json(script: str, at: int, stop: int) -> tuple[str | None, int]:
    """The JavaScript object or array literal at ``script[at:stop]`` written as JSON (bare keys
    quoted, single-quoted and plain template strings double-quoted, trailing commas dropped), or
    None when it holds anything else (a name, a call, a substitution); and where reading stopped."""
    if not script.startswith(("{", "["), at):
        return None, at
    out: list[str] = []
    last = ""  # the last part written that is not white space
    depth, i = 0, at
    while i < stop:
        ch = script[i]
        if ch in "\"'`":
            end = _string_end(script, i, stop)
            text = script[i + 1 : end]
            if end < 0 or (ch == "`" and "${" in text):
                return None, (stop if end < 0 else end)
            last = script[i : end + 1] if ch == '"' else json.dumps(_unescaped(text))
            out.append(last)
            i = end + 1
            continue
        key = _BARE_KEY.match(script, i) if last in ("{", ",") else None
        if key is not None and _COLON.match(script, key.end(), stop):
            last = json.dumps(key.group(0))
            out.append(last)
            i = key.end()
            continue
        if ch in "}]":
            while out and (out[-1].isspace() or out[-1] == ","):
                out.pop()
            depth -= 1
        elif ch in "{[":
            depth += 1
        out.append(ch)
        if not ch.isspace():
            last = ch
        i += 1
        if depth == 0:
            return "".join(out), i
    return None, i


def _string_end(script: str, at: int, stop: int) -> int:
    """Where the string literal opening at ``script[at]`` closes before ``stop``, or -1 (a quoted
    string does not go past its line; a template literal may)."""
    i = at + 1
    while i < stop:
        if script[i] == "\\":
            i += 2
            continue
        if script[i] == script[at]:
            return i
        if script[i] == "\n" and script[at] != "`":
            return -1
        i += 1
    return -1


_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _unescaped(text: str) -> str:
    """The characters a single-quoted or template string literal's text stands for."""

    def one(found: re.Match[str]) -> str:
        code = found.group(1)
        if code[0] in "ux" and len(code) > 1:
            return chr(int(code[1:], 16))
        return _ESCAPES.get(code, code)

    return _ESCAPE.sub(one, text)


def script_answer(text: str) -> ScriptAnswer | None:
    """What a code-mode answer says (``_HEADER``, then the output, a thrown script's error
    after ``SCRIPT_ERROR``), or None when ``text`` is no such answer."""
    header = _HEADER.match(text)
    if header is None:
        return None
    body = text[header.end() :]
    error = ""
    if header.group("status") == "failed":
        cut = body.rfind(SCRIPT_ERROR)
        if cut >= 0:
            body, error = body[:cut], body[cut + len(SCRIPT_ERROR) :]
    return ScriptAnswer(body.strip("\n"), error.strip())


def script_error(text: str) -> str:
    """What a code-mode script threw (``Script failed``, then its error after ``SCRIPT_ERROR``:
    ``SyntaxError: …``, a nested tool's message), or ""."""
    answer = script_answer(text)
    return answer.error if answer is not None else ""


def thrown_error(text: str) -> str | None:
    """The first line of ``script_error``, or None when the script threw nothing."""
    return next((line.strip() for line in script_error(text).splitlines() if line.strip()), None)


Origins = dict[str, list[tuple[int, ToolUseBlock]]]
"""A cell or session (as its answer writes it) → the messages whose answers named it, each with
the call it answered, in message order (a message's first such answer only)."""


class WaitedCalls:
    """What the calls of ``messages`` wait on, the answers naming a cell or a session read once
    (at the first call that waits) and looked up by bisection: each poll read every earlier
    answer again, minutes for a session that polled one process thousands of times."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self._messages = messages
        self._origins: tuple[Origins, Origins] | None = None

    def judged(self, index: int, call: ToolUseBlock) -> ToolUseBlock:
        """``call`` (in ``messages[index]``) read as what it waits on: a ``wait`` as the script
        whose answer named its ``cell_id`` (``Script running with cell ID N``), a
        ``write_stdin`` poll (a direct call, or a script that only polls) as the call whose
        answer named its ``session_id`` (``_polled``), the latest such answer before it. Its
        answer is the rest of that call's output, so it is judged with that call's commands
        (its own id kept); else ``call`` itself."""
        cell = call.input.get("cell_id") if isinstance(call.input, Mapping) else None
        waited = call
        if base_name(call.name) == WAIT_TOOL and isinstance(cell, str):
            script = _latest(self._named()[0], cell, index)
            waited = call if script is None else ToolUseBlock(call.id, script.name, script.input)
        session = _polled(waited)
        origin = None if session is None else _latest(self._named()[1], str(session), index)
        return waited if origin is None else ToolUseBlock(call.id, origin.name, origin.input)

    def _named(self) -> tuple[Origins, Origins]:
        """The scripts each running cell's answer named, and the calls (no polls) each
        session's answer named."""
        if self._origins is None:
            cells: Origins = {}
            sessions: Origins = {}
            for at in range(1, len(self._messages)):
                uses = self._messages[at - 1].tool_uses
                calls = {use.id: use for use in uses}
                scripts = {use.id: use for use in uses if is_script(use)}
                for result in self._messages[at].tool_results if calls else ():
                    running = _RUNNING.match(result.text)
                    script = scripts.get(result.tool_use_id)
                    if running is not None and script is not None:
                        _name(cells, running.group("cell"), at, script)
                    origin = calls.get(result.tool_use_id)
                    if origin is not None and _polled(origin) is None:
                        for found in _SESSION_NAMED.finditer(result.text):
                            _name(sessions, found.group("line") or found.group("json"), at, origin)
            self._origins = (cells, sessions)
        return self._origins


def _name(origins: Origins, key: str, at: int, call: ToolUseBlock) -> None:
    """Record that message ``at`` named ``key`` in the answer to ``call``, unless an earlier
    answer of that message did."""
    places = origins.setdefault(key, [])
    if not places or places[-1][0] != at:
        places.append((at, call))


def _latest(origins: Origins, key: str, index: int) -> ToolUseBlock | None:
    """The call whose answer named ``key`` last at or before message ``index``, or None."""
    places = origins.get(key, [])
    found = bisect_right(places, index, key=lambda place: place[0])
    return places[found - 1][1] if found else None


def _polled(call: ToolUseBlock) -> int | None:
    """The ``session_id`` that ``call`` polls: a ``write_stdin`` call's, or the one every
    ``tools.write_stdin`` of a script that calls nothing else names; None when it polls none."""
    polls = nested_calls(call) if is_script(call) else (call,)
    sessions = {
        poll.input.get("session_id") if base_name(poll.name) == POLL_TOOL else None
        for poll in polls
    }
    session = sessions.pop() if len(sessions) == 1 else None
    return session if isinstance(session, int) and not isinstance(session, bool) else None
