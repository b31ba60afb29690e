"""An editor's diagnostics as a tool reports them: which of them are errors, in their own words.

An agent asks its editor for the problems it shows on a file (Cursor's ``read_lints``, whose
reply is JSON: ``{"linterErrorsByFile": [{"errors": [{"message": …, "severity":
"DIAGNOSTIC_SEVERITY_ERROR"}]}]}``). No exit code and no error flag say the code is broken: a
diagnostic of error severity does, and its message is the line that says what (``Cannot find
module './x' or its corresponding type declarations.``). Warnings and hints are advice, not a
failure. ``failures`` asks here for a tool's own message (never a file's contents).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

_ERROR_NAME = r"(?:DIAGNOSTIC_SEVERITY_)?error"
"""How an editor names the error severity (LSP's ``Error``, Cursor's
``DIAGNOSTIC_SEVERITY_ERROR``)."""
_ERROR_SEVERITY = re.compile(rf'"severity"\s*:\s*"{_ERROR_NAME}"', re.I)
"""An error-severity diagnostic's field: only a reply holding one is parsed."""
_IS_ERROR = re.compile(_ERROR_NAME, re.I)
_JSON_START = re.compile(r"^[{\[]", re.M)
"""Where a JSON value may start: a line opening with ``{`` or ``[`` (a reply, or the fenced
JSON an export shows it in)."""
_DECODER = json.JSONDecoder()


def error_diagnostics(text: str) -> list[str]:
    """The messages of the error-severity diagnostics the JSON in ``text`` lists, in order,
    each once; empty when it lists none (a reply of warnings, or no JSON at all)."""
    if _ERROR_SEVERITY.search(text) is None:
        return []
    found: list[str] = []
    try:
        for value in _json_values(text):
            for message in _error_messages(value):
                if message not in found:
                    found.append(message)
    except RecursionError:  # JSON nested too deeply to parse or to walk: what was read so far
        pass
    return found


def _json_values(text: str) -> Iterator[object]:
    """Each JSON value that starts a line of ``text`` and decodes whole from there."""
    end = 0
    for start in _JSON_START.finditer(text):
        if start.start() < end:
            continue  # inside a value already read
        try:
            value, end = _DECODER.raw_decode(text, start.start())
        except ValueError:
            continue
        yield value


def _error_messages(value: object) -> Iterator[str]:
    """The ``message`` of every object under ``value`` whose ``severity`` says error."""
    if isinstance(value, list):
        for item in value:
            yield from _error_messages(item)
    elif isinstance(value, dict):
        message, severity = value.get("message"), value.get("severity")
        if isinstance(message, str) and isinstance(severity, str) and message.strip():
            if _IS_ERROR.fullmatch(severity):
                yield message.strip()
        for item in value.values():
            if isinstance(item, (list, dict)):
                yield from _error_messages(item)
