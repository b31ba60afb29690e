"""A VS Code Copilot step as SpecStory's VS Code extension writes it, read back as the call the
agent made: the tool's input, what the tool returned, and whether it failed.

The extension (``<!-- vscode Session … -->`` files, late 2025) writes each of the chat's
``toolInvocationSerialized`` parts as a ``<tool-use>`` block holding up to three labelled
```` ```json ```` fences and a status line, as in DakineMI/tree-sitter-languages-rs's
``.specstory/history`` (MIT)::

    Parameters:      the part's ``toolSpecificData`` (a terminal: ``commandLine.original``,
                     ``terminalCommandState.exitCode``, ``terminalCommandOutput.text``);
                     for other tools what the extension kept of the input (``file_path``)
    Additional data: ``{"vscodeToolId": "run_in_terminal", "isHidden": false}``
    Result:          ``invocationMessage``, ``pastTenseMessage``, ``isConfirmed``, ``content``,
                     ``textEditContent``, ``toolCallResult``
    Status: **completed**

Stored so, the call's input was empty and its result the whole JSON: the command, its output
and its exit code were strings inside strings (``\\r\\n``, ``\\u001b[91m``, ``&amp;&amp;``),
where neither the summary nor failure recognition reads them. Cursor's steps have the same
labels with other fields (no ``vscodeToolId``) and are left as they are.

A terminal call becomes ``{"command": original}`` (what the agent sent; a command the user or
VS Code edited before it ran is kept with the other fields) answered by ``Exit code: N`` (the
form ``summarizers/failures.py`` reads) over the output as the model got it: VS Code's
``run_in_terminal`` hands the model the terminal buffer's text, where colour codes are drawn, not
written, and a ``\\r`` rewrites its line; the stored ``text`` keeps the raw stream (with the
escape codes) so the chat view can replay it in colour. A step of another tool keeps its
Parameters as its input and answers with the Result's ``content`` (the text the chat showed,
an edit's new text) or, when empty, the step's own past-tense line (``Read [](file:///…)``).
Every string is HTML-unescaped (the extension writes ``&amp;``, ``&#96;``, ``&gt;`` inside the
JSON). Fields not read into the call stay, unchanged, in ``VscodeStep.kept``.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from contextwarden.formats.specstory_steps import Part, parts_of

_PARAMETERS, _ADDITIONAL, _RESULT = "Parameters:", "Additional data:", "Result:"
_STATUS = re.compile(r"^Status: \*\*(?P<status>[^*]+)\*\*$")
_TOOL_ID = "vscodeToolId"
"""The Additional data field only VS Code's steps carry (the tool's id in VS Code)."""
_TERMINAL = "terminal"
"""The ``kind`` of a terminal call's ``toolSpecificData``."""
_TERMINAL_CODES = re.compile(
    r"\x1b(?:\[(?P<csi>[0-9;?]*)(?P<final>[ -/]*[@-~])"  # CSI
    r"|\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC, to BEL or ST
    r"|[()][0-9A-Za-z])"  # charset
)
"""What a terminal draws rather than prints: CSI sequences (colours; ``\\x1b[8C`` moves the
cursor 8 columns on, drawn as 8 blanks), OSC sequences (titles, VS Code's shell-integration
``633;`` marks) and charset switches."""
_FILE_LINK = re.compile(r"\[[^\]]*\]\(file://(?P<path>[^)#\s]+)(?:#[^)]*)?\)")
"""VS Code's reference to a file in a step's line: ``[](file:///w/a.rs#1-1)``."""
_DRIVE = re.compile(r"^/[A-Za-z]:/")
"""A Windows path as a file URI spells it (``/e:/x``): the drive comes first."""


@dataclass(frozen=True, slots=True)
class VscodeStep:
    """A VS Code step read back: the call's input, its answer, and every field not read."""

    tool_input: dict[str, Any]
    output: str
    failed: bool
    kept: dict[str, Any]
    """The step's JSON fields not read into the call, under ``parameters``, ``additional``,
    ``result``, and its ``status``."""


def vscode_step(body: list[str]) -> VscodeStep | None:
    """The call a ``<tool-use>`` block's lines record, or None when it is not a VS Code step
    (no Additional data naming a ``vscodeToolId``) or a labelled fence is not JSON."""
    if not any(_TOOL_ID in line for line in body):
        return None  # another agent's step: not parsed to find that out
    sections, status = _sections(parts_of(body) or [])
    additional = sections.get(_ADDITIONAL)
    if not isinstance(additional, dict) or _TOOL_ID not in additional:
        return None
    parameters = _unescaped(sections.get(_PARAMETERS, {}))
    result = _unescaped(sections.get(_RESULT, {}))
    if not isinstance(parameters, dict) or not isinstance(result, dict):
        return None
    kept: dict[str, Any] = {"additional": additional}
    if status:
        kept["status"] = status
    if parameters.get("kind") == _TERMINAL:
        tool_input, output, failed = _terminal(parameters)
        output = output or _shown(result)  # no output kept: what the step said it did
    else:
        tool_input, output, failed = dict(parameters), _shown(result), False
        parameters = {}
    if parameters:
        kept["parameters"] = parameters
    if result:
        kept["result"] = result
    return VscodeStep(tool_input, output, failed, kept)


def linked_file(text: str) -> str | None:
    """The file a VS Code step's line refers to (``Reading [](file:///w/a.rs#1-1), lines 1 to
    50`` → ``/w/a.rs``; ``file:///e%3A/x`` → ``e:/x``), or None."""
    found = _FILE_LINK.search(text)
    if found is None:
        return None
    path = unquote(found["path"])
    return path[1:] if _DRIVE.match(path) else path


def _sections(parts: list[Part]) -> tuple[dict[str, Any], str | None]:
    """Each labelled JSON fence by its label, and the status line's word."""
    sections: dict[str, Any] = {}
    status = None
    for number, part in enumerate(parts):
        if part.info is not None:
            continue
        text = part.lines[0].strip()
        said = _STATUS.match(text)
        following = parts[number + 1] if number + 1 < len(parts) else None
        if said:
            status = said["status"]
        elif text in (_PARAMETERS, _ADDITIONAL, _RESULT) and following and following.info == "json":
            try:
                sections[text] = json.loads(following.inner)
            except ValueError:
                return {}, status  # not JSON: not a step this module knows
    return sections, status


def _terminal(parameters: dict[str, Any]) -> tuple[dict[str, Any], str, bool]:
    """A terminal call: the command sent, ``Exit code: N`` over the output, and whether the
    code is non-zero; the fields read are taken out of ``parameters``."""
    command_line = parameters.pop("commandLine", None)
    state = parameters.pop("terminalCommandState", None)
    shown = parameters.pop("terminalCommandOutput", None)
    tool_input: dict[str, Any] = {}
    if isinstance(command_line, dict) and isinstance(command_line.get("original"), str):
        tool_input["command"] = command_line.pop("original")
    if command_line:
        parameters["commandLine"] = command_line  # toolEdited, userEdited: kept
    code = state.pop("exitCode", None) if isinstance(state, dict) else None
    if state:
        parameters["terminalCommandState"] = state  # timestamp, duration
    text = shown.pop("text", None) if isinstance(shown, dict) else None
    if shown:
        parameters["terminalCommandOutput"] = shown  # lineCount, truncated
    lines = [f"Exit code: {code}"] if isinstance(code, int) else []
    if isinstance(text, str):
        lines.append(as_drawn(text))
    failed = isinstance(code, int) and code != 0
    return tool_input, "\n".join(lines), failed


def as_drawn(text: str) -> str:
    """Terminal output as the terminal shows it: escape codes drawn, not kept, and each line
    what its last ``\\r`` left (``50%\\r100%`` → ``100%``)."""
    plain = _TERMINAL_CODES.sub(_drawn, text).replace("\r\n", "\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in plain.split("\n")).rstrip()


def _drawn(code: re.Match[str]) -> str:
    """What an escape code leaves on the line: blanks for a cursor move forward, else nothing."""
    if code["final"] != "C":
        return ""
    return " " * int(code["csi"]) if code["csi"].isdigit() else " "


def _shown(result: dict[str, Any]) -> str:
    """What a non-terminal step answered: its ``toolCallResult`` when kept, else its ``content``,
    else its past-tense line; the field read is taken out of ``result``."""
    returned = result.pop("toolCallResult", None)
    if returned is not None:  # what the tool gave the model, when the extension kept it
        return returned if isinstance(returned, str) else json.dumps(returned, ensure_ascii=False)
    for key in ("content", "pastTenseMessage", "invocationMessage"):
        value = result.get(key)
        value = value.get("value") if isinstance(value, dict) else value
        if isinstance(value, str) and value.strip():
            if key == "content":
                del result[key]
            return value
    return ""


def _unescaped(value: Any) -> Any:
    """Every string in a JSON value with its HTML entities decoded."""
    if isinstance(value, str):
        return html.unescape(value)
    if isinstance(value, dict):
        return {key: _unescaped(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unescaped(item) for item in value]
    return value
