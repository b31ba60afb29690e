"""The lines of an output nobody flagged failed that still read like a failure.

``failures`` judges a result failed from its exit code, its error flag or a line only a failing
program prints; a failure that exits 0 (``curl`` fetching a gateway's error page, ``gh auth
status``, ``journalctl`` showing a unit that could not start) passes it. Microcompact keeps these
few lines of such a result when it clears it, so an unrecognised failure is not lost silently.
"""

from __future__ import annotations

import re

from contextwarden.model import ToolUseBlock
from contextwarden.summarizers.commands import shows_text
from contextwarden.summarizers.failure_marks import (
    ERROR_LINE,
    HTTP_ERROR_HEADING,
    line_rank,
    marks_a_failure,
)
from contextwarden.summarizers.outputs import STREAM_PREFIX
from contextwarden.summarizers.tools import file_ops, is_shell, shell_command
from contextwarden.toolnames import canonical

_MARKUP = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")
"""An HTML or XML tag: an error page's ``<title>``, a harness's ``<output>`` wrapper."""
_LINE_NUMBER = re.compile(r"^\s*\d+(?:\u2192|\t)", re.M)
"""The number a file viewer (Claude Code's Read: ``   3→``, ``cat -n``) puts before each line."""
READ_KIND = "Read"
_SAVED_OUTPUT = (".log", ".out", ".output", ".err")
"""A file with one of these endings holds a program's output (a CI log, a background task's
output Claude Code saves): read back, it is output, not source."""


def output_kind(call: ToolUseBlock | None) -> str | None:
    """What the result of ``call`` is, for reading failure lines in it: ``"output"`` a shell
    command's (or a saved output file read back), ``"contents"`` existing text a shell command
    showed (``cat``, ``rg``: source names errors by the hundred, ``return fmt.Errorf("failed
    to …")``), None anything else (a file read, an edit's echo of the code it wrote, a to-do
    list: their failure words are the work's subject, not a failure)."""
    if call is None:
        return None
    if is_shell(call):
        command = shell_command(call)
        return "contents" if command is None or shows_text(command) else "output"
    if canonical(call.name) != READ_KIND:
        return None
    paths = [op.path for op in file_ops(call)]
    return "output" if paths and all(p.endswith(_SAVED_OUTPUT) for p in paths) else None


def readable_lines(text: str) -> list[str]:
    """The lines of ``text`` as a person reads them: tags, a viewer's line numbers and a
    harness's stream names taken off, blank lines dropped."""
    text = STREAM_PREFIX.sub("", _LINE_NUMBER.sub("", text))
    lines = (" ".join(_MARKUP.sub(" ", line).split()) for line in text.splitlines())
    return [line for line in lines if line]


def failure_like_lines(
    text: str, limit: int, chars: int, *, output: bool = True
) -> tuple[str, ...]:
    """Up to ``limit`` lines of ``text`` that read most like a failure, each within ``chars``
    (a longer one by its head and ``…``): an HTTP error page's heading, then, in order, each
    line only a failing program prints (``failure_marks.marks_a_failure``: an error prefix, a
    located error, an OS error message, a verdict). Of text a command showed (not ``output``)
    only a line with an error prefix counts (``npm error …`` in a CI log read back): source
    names errors in every form. A line with a failure word alone is not kept: a commit subject,
    a diff's comment or an issue's text says "fail" and "can't" of the work. A line a kept one
    holds says nothing new."""
    lines = readable_lines(text)
    found = [line for line in lines if HTTP_ERROR_HEADING.match(line)]
    marked = marks_a_failure if output else ERROR_LINE.match
    found += [line for line in lines if marked(line) and line_rank(line) is not None]
    kept: list[str] = []
    for line in found:
        if len(kept) >= limit:
            break
        clipped = line if len(line) <= chars else line[: chars - 1] + "…"
        if not any(clipped in other or other in clipped for other in kept):
            kept.append(clipped)
    return tuple(kept)
