"""The lines of an output nobody flagged failed that say the work it asked for did not happen.

``failures`` judges a result failed from its exit code, its error flag or a line only a failing
program prints; a failure that exits 0 (a script printing the gateway error page it fetched, a
command whose glob matched nothing) passes it. Microcompact keeps such a line of a result when
it clears it, so an unrecognised failure is not lost silently; and a search tool's answer that
nothing matched, so the agent does not look again for what is not there.
"""

from __future__ import annotations

import re

from contextwarden.model import ToolUseBlock
from contextwarden.summarizers.commands import shows_text
from contextwarden.summarizers.failure_marks import HTTP_ERROR_HEADING, SHELL_DID_NOT_RUN
from contextwarden.summarizers.outputs import STREAM_PREFIX
from contextwarden.summarizers.tools import CONTENT_KINDS, file_ops, is_shell, shell_command
from contextwarden.toolnames import canonical

_MARKUP = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")
"""An HTML or XML tag: an error page's ``<title>``, a harness's ``<output>`` wrapper."""
_LINE_NUMBER = re.compile(r"^\s*\d+(?:\u2192|\t)", re.M)
"""The number a file viewer (Claude Code's Read: ``   3→``, ``cat -n``) puts before each line."""
READ_KIND = "Read"
_SEARCH_KINDS = CONTENT_KINDS - {READ_KIND}
_FOUND_NOTHING = re.compile(r"No (?:files|matches) found\b")
"""How a search tool answers that nothing matched, as its whole result: Gemini CLI's glob (``No
files found matching pattern "**/*.png" within /w``) and search_file_content (``No matches
found for pattern …``), Claude Code's and OpenCode's Glob and Grep (``No files found``, ``No
matches found``). English only, as these tools word it."""
_SAVED_OUTPUT = (".log", ".out", ".output", ".err")
"""A file with one of these endings holds a program's output (a CI log, a background task's
output Claude Code saves): read back, it is output, not source."""


def shows_output(call: ToolUseBlock | None) -> bool:
    """True when the result of ``call`` is a program's output: a shell command's (not one that
    only shows existing text: ``cat``, ``rg``, whose page template or log holds such lines as
    text) or a saved output file read back. Anything else (a file read, an edit's echo of the
    code it wrote, a to-do list) is the work's subject, not a run of it."""
    if call is None:
        return False
    if is_shell(call):
        command = shell_command(call)
        return command is not None and not shows_text(command)
    if canonical(call.name) != READ_KIND:
        return False
    paths = [op.path for op in file_ops(call)]
    return bool(paths) and all(p.endswith(_SAVED_OUTPUT) for p in paths)


def readable_lines(text: str) -> list[str]:
    """The lines of ``text`` as a person reads them: tags, a viewer's line numbers and a
    harness's stream names taken off, blank lines dropped."""
    text = STREAM_PREFIX.sub("", _LINE_NUMBER.sub("", text))
    lines = (" ".join(_MARKUP.sub(" ", line).split()) for line in text.splitlines())
    return [line for line in lines if line]


def failure_like_lines(text: str, limit: int, chars: int) -> tuple[str, ...]:
    """Up to ``limit`` lines of a program's output that say the work it asked for did not
    happen, each within ``chars`` (a longer one by its head and ``…``): an HTTP error page's
    heading (``HTTP_ERROR_HEADING``: the gateway's ``504 Gateway Time-out`` a script printed),
    then the shell's own line that a command did not run (``SHELL_DID_NOT_RUN``: zsh's ``no
    matches found``). A program's own error lines (``Error: …``, an OS error message) are not
    kept: its exit 0 says it handled them, as ``failures`` reads it, and keeping them moved
    later compactions at +0.64 % modeled cost on fit set 7 for no fact kept. A line a kept one
    holds says nothing new."""
    lines = readable_lines(text)
    found = [line for line in lines if HTTP_ERROR_HEADING.match(line)]
    found += [line for line in lines if SHELL_DID_NOT_RUN.match(line)]
    kept: list[str] = []
    for line in found:
        if len(kept) >= limit:
            break
        clipped = _clip(line, chars)
        if not any(clipped in other or other in clipped for other in kept):
            kept.append(clipped)
    return tuple(kept)


def unflagged_lines(
    call: ToolUseBlock | None, text: str, limit: int, chars: int
) -> tuple[str, ...]:
    """What a cleared result nobody flagged failed keeps: of a program's output
    (``shows_output``), its lines saying the work did not happen (``failure_like_lines``); of a
    search that matched nothing, its answer saying so (``_FOUND_NOTHING``), so the agent does not
    search again for what is not there; nothing of anything else."""
    if limit <= 0 or call is None:
        return ()
    if canonical(call.name) in _SEARCH_KINDS:
        answer = text.strip()
        said = "\n" not in answer and _FOUND_NOTHING.match(answer) is not None
        return (_clip(answer, chars),) if said else ()
    return failure_like_lines(text, limit, chars) if shows_output(call) else ()


def _clip(line: str, chars: int) -> str:
    """``line`` within ``chars``: a longer one by its head and ``…``."""
    return line if len(line) <= chars else line[: chars - 1] + "…"
