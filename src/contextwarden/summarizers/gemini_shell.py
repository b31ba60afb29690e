"""Gemini CLI's ``run_shell_command`` result read as the program's output: its harness fields
(``Command:``, ``Directory:``, ``Signal:``…) taken off, the output and a real error kept.

Gemini CLI documents the result of its shell tool (``docs/tools/shell.md``, "The tool returns
detailed information about the execution") as named fields, one after another::

    Command: <the command line, as the model wrote it, over several lines if it has them>
    Directory: <where it ran, "(root)">
    Output: <stdout and stderr, or "(empty)">
    Error: <an error of the subprocess, or "(none)">
    Exit Code: <N or "(none)">
    Signal: <N or "(none)">
    Background PIDs: <…>
    Process Group PGID: <…>

(older releases write ``Stdout:``/``Stderr:`` in place of ``Output:``). Read as it stands, the
command's own lines (a here-document's ``LogLevel ERROR``) and ``Error: (none)`` look like what
the program printed: a failure's kept lines went to them rather than to the program's.
"""

from __future__ import annotations

import re

_HEAD = re.compile(r"^Directory: .*$\n^(?:Output|Stdout): ?", re.M)
"""Where the program's output starts: the field after the directory (the command before may
run over many lines)."""
_TAIL = re.compile(
    r"^Error: (?P<error>[^\n]*)\n(?:Exit Code: (?P<code>[^\n]*)\n?)?"
    r"(?:(?:Signal|Background PIDs|Process Group PGID): [^\n]*\n?)*\Z",
    re.M,
)
"""The fields after it: the last ``Error:`` field then the exit code and process fields."""
_STDERR = re.compile(r"^Stderr: ?", re.M)
_NOTHING = frozenset({"(none)", "(empty)"})


def shell_result_output(text: str) -> str | None:
    """The program's output of ``text``, its error field and ``Exit Code: N`` when it shows
    them, when ``text`` is a ``run_shell_command`` result (it opens with ``Command:``, then
    ``Directory:`` and ``Output:`` fields, and ends with the ``Error:`` and process fields);
    None for any other text. A field saying ``(none)``/``(empty)`` is left out: nothing
    happened. The tail is found from the end, so a program that prints ``Error: …`` keeps it."""
    if not text.startswith("Command:"):
        return None
    head = _HEAD.search(text)
    tail = _TAIL.search(text, head.end()) if head is not None else None
    if head is None or tail is None:
        return None
    output = _STDERR.sub("", text[head.end() : tail.start()]).rstrip("\n")
    error, code = tail["error"].strip(), (tail["code"] or "").strip()
    kept = [field for field in (output, error) if field.strip() not in _NOTHING]
    if code.isdigit():
        kept.append(f"Exit Code: {code}")
    return "\n".join(kept)
