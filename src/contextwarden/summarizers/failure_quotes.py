"""The lines a failed output is quoted by: the most telling one, then further ones, each clipped.

``failures`` decides whether a result failed; this room reads its output as the program printed
it (colours off, a harness's stream names dropped, rows a terminal broke joined), picks the line
that says what failed (an exception after a traceback, then ``failure_ranks``' order), and the
further lines a summary and microcompact keep, each within ``EXCERPT_CHARS``.
"""

from __future__ import annotations

import re

from contextwarden.summarizers.diagnostics import error_diagnostics
from contextwarden.summarizers.failure_marks import EXCEPTION_LINE, RUNNER_MARK
from contextwarden.summarizers.failure_ranks import (
    MARKED_RANKS,
    TELLING_RANK,
    TRAILER_RANK,
    line_rank,
    ranked_lines,
)
from contextwarden.summarizers.json_text import json_text
from contextwarden.summarizers.outputs import (
    EXIT_RES,
    FRAME_LINE,
    STREAM_MARK,
    STREAM_PREFIX,
    TOOL_ERROR_TAG,
    is_status_line,
    program_output,
    without,
)
from contextwarden.summarizers.runner_reports import failing_tests
from contextwarden.summarizers.sentences import clipped
from contextwarden.summarizers.terminal_wrap import unwrapped
from contextwarden.summarizers.toolchain_marks import go_panicked_in

EXCERPT_CHARS = 300
"""Longest error excerpt kept per failure."""
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]\x0f?|\^\[\[[0-9;]+m")
"""A terminal's colour code, with the shift-in (``\\x0f``) terminfo's ``sgr0`` writes after the
reset on some terminals (``\\E[m\\017``, as rustfmt's coloured diff prints it); or a colour
(SGR) code in caret notation, its escape shown as ``^[`` (``cat -v``, ``less``, a log that
passed through them)."""
_ANSI_MARKS = ("\x1b[", "^[[")
"""What every ``_ANSI`` code holds (``outputs.without``)."""
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):?\s*$", re.M)
"""Python's, and IPython's in a notebook cell (``NameError   Traceback (most recent call
last)``, no colon)."""
_FRAME = re.compile(r'^\s*File "[^"]+", line \d+.*$', re.M)
_PASSED_LINE = re.compile(r"\.{3,}\s*(?:\(no files to check\))?(?:Passed|Skipped)$")
"""pre-commit's line for a hook that passed or had nothing to check (``ruff.....Passed``): when
no line says what failed, not the one to quote either."""


def as_printed(text: str) -> str:
    """``text`` as the program printed it: a JSON result read as its output
    (``program_output``), a JSON document whose strings hold logs read as their lines
    (``json_text``), colours and the stream a harness names before a line taken off, rows a
    terminal broke at its width joined again (``terminal_wrap``)."""
    printed = json_text(program_output(text))
    plain = without(_ANSI, printed, *_ANSI_MARKS)
    return unwrapped(without(STREAM_PREFIX, plain, STREAM_MARK))


def further_lines(text: str, excerpt: str, limit: int, *, shell: bool = True) -> tuple[str, ...]:
    """Up to ``limit`` lines of a failed output, other than ``excerpt``, that say what went wrong,
    verbatim up to ``EXCERPT_CHARS``: a test run or compiler reports more than the one line a
    summary quotes first. Its failure lines come most telling first (``failure_ranks``: a
    located error before a run's verdict), after the tests a runner's report lists as failed
    (``runner_reports``); a tool's own message (not ``shell``) then gives the
    line after its excerpt, which says what it was about (``String to replace not found in
    file.``, then the string), and an editor's reply its other error diagnostics only (its
    JSON's lines are fields, not what failed). The summary and microcompact both keep these,
    so a cleared result and a summary keep the same lines."""
    text = TOOL_ERROR_TAG.sub("", as_printed(text))
    diagnosed = [] if shell else error_diagnostics(text)
    lines = diagnosed or [*failing_tests(text), *(line for _, line in ranked_lines(text))]
    if not shell and not diagnosed:
        lines += _lines_after(text.splitlines(), excerpt)
    found: list[str] = []
    for line in lines:
        kept = clip(line)
        if len(found) >= limit:
            break
        said = RUNNER_MARK.sub("", kept) in excerpt  # pytest's E-line, as its summary said it
        # a line a kept one holds (a diagnostic's message, kept with its header) says nothing new
        told = any(kept in other for other in found)
        if not told and not said and not _repeats(kept, excerpt):
            found.append(kept)
    return tuple(found)


def _repeats(line: str, excerpt: str) -> bool:
    """``line`` holds ``excerpt`` and says nothing more of the failure: not when it is a located
    diagnostic (``TELLING_RANK``) of an excerpt that names no place, as a linter reports the
    exception a traceback ended on with where it is (flake8's ``%(path)s:%(row)d:%(col)d:
    %(code)s %(text)s``: ``a.py:91:345: E999 SyntaxError: unterminated string literal``)."""
    if excerpt.rstrip("…") not in line:
        return False
    return line_rank(line) != TELLING_RANK or line_rank(excerpt) == TELLING_RANK


def _lines_after(lines: list[str], excerpt: str) -> list[str]:
    """The non-blank line after the first of ``lines`` that ``excerpt`` quotes (none: ``[]``)."""
    for i, line in enumerate(lines):
        if line.strip() and excerpt.startswith(clip(line).rstrip("…")):
            following = (n.strip() for n in lines[i + 1 :])
            return [n for n in following if n and not FRAME_LINE.match(n)][:1]
    return []


def last_traceback(text: str) -> int | None:
    """Where the last traceback of ``text`` starts, or None when it has none."""
    starts = [found.start() for found in _TRACEBACK.finditer(text)]
    return starts[-1] if starts else None


def most_telling_line(text: str, status: int | None, *, shell: bool) -> str:
    """The most telling failure line (``failure_ranks.ranked_lines``); a program's output
    (``shell``) may say what failed on any line, while another tool's error opens with its
    harness's message and what follows is often the text it echoes back, so only lines marked
    as failures count there."""
    traceback = last_traceback(text)
    if traceback is not None:
        exceptions = EXCEPTION_LINE.findall(text[traceback:])
        if exceptions:
            return clip(exceptions[-1])
    ranked = ranked_lines(text)
    marked = next((line for rank, line in ranked if rank in MARKED_RANKS), None)
    if marked is not None:
        return clip(marked)
    frames = _FRAME.findall(text[traceback:]) if traceback is not None else []
    if frames:  # a pager cut the exception off: where it was raised
        return clip(frames[-1])
    panicked_in = go_panicked_in(text)  # … or a Go program's panic line
    if panicked_in is not None:
        return clip(panicked_in)
    # another tool's line with only a failure word may be the text it echoes back
    rest = next((line for rank, line in ranked if shell or rank == TRAILER_RANK), None)
    if rest is not None:
        return clip(rest)
    for line in text.splitlines():  # nothing says what failed: the output's first line
        stripped = line.strip()
        framing = is_status_line(stripped) or FRAME_LINE.match(stripped)
        if stripped and not framing and not _PASSED_LINE.search(stripped):
            return clip(stripped)
    shown = _status_line(text)
    if shown is not None:
        return shown
    return f"exit code {status}" if status is not None else "(the tool reported an error)"


def _status_line(text: str) -> str | None:
    """The line showing the exit code of an output that printed nothing else (Claude Code's
    ``Exit code 124``, a ``timeout`` that killed a silent command), quoted as the harness wrote
    it: the words a reader searches the summary for, not our paraphrase of them."""
    for line in text.splitlines():
        stripped = line.strip()
        if any(p.search(stripped) for p in EXIT_RES):
            return clip(stripped)
    return None


def clip(line: str) -> str:
    """``line`` stripped, within ``EXCERPT_CHARS``: a longer one by its head and last clause
    (``sentences.clipped``), as a long diagnostic puts what it is about first and what was
    expected last, a type or a value quoted whole between (tsc's ``Argument of type '{ … }'
    is not assignable to parameter of type 'X'``, mypy's ``…; expected "Y"``); by its head and
    ``…`` when no clause ends it."""
    line = line.strip()
    if len(line) <= EXCERPT_CHARS:
        return line
    kept = clipped(line, EXCERPT_CHARS)
    return kept if kept != line[:EXCERPT_CHARS] else line[: EXCERPT_CHARS - 1] + "…"
