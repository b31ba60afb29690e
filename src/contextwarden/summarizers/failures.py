"""Recognising a failed tool call from its result: the error flag, exit codes, error-looking output.

A result is a failure when the tool flagged it (``is_error``), when it shows a non-zero exit code,
or — for shell tools, whose output is a program's — when it holds a Python traceback, a line
starting with ``error:``/``fatal:``, or a line a compiler, linter, test runner or package
manager prints for a failure (``failure_marks``: an output piped through ``tail`` loses its
exit code, not these lines). A visible exit code 0 wins over error-looking text (the
command handled its own error), unless it is not the program's: the command masked it
(``|| true``, ``; echo $?``), piped the output into a pager (``| tail -20``) or shows another
run's log (``gh run view --log``); or unless the program printed its error and stopped there
(its last line an error line, or a whole traceback last: ``traceback.print_exc()``), or the
shell could not run one of the line's words (``bash: line 1: val: command not found``), a failed
step that a later command's exit code 0 does not undo. A run filtered through a search
(``pytest | grep Error``, ``commands.filters_a_run``) failed when an exception line is left: the
filter dropped the traceback's header and the verdict. An HTTP client's 4xx/5xx reply is a
failure whatever its exit code (``curl`` exits 0 on a 404). A tool that is not a shell and
returns no file's contents (an edit, a patch, a notebook cell, an MCP call) fails when its
message opens by saying so (Codex's ``apply_patch verification failed:`` carries no flag) or
holds a traceback. File contents and search hits are never scanned: a file may well say
"error:"; a read whose harness answered in the file's place that it did not read it (Copilot
CLI's ``File too large to read at once``) failed. ``cargo clippy`` fails on the lints it warns
of (``toolchain_marks``), though it exits 0. The excerpt is the line that says what failed (an
error line, a marked failure, an exception, then in a program's output any line with a failure
word; the shell's own line when it could not run a word), the first line only when none does.
A command's result that Codex gives as a JSON object (``{"exit_code":1,"output":"…"}``) is read
as its exit code and its output's lines (``program_output``). What the harness put around the
output is read in ``outputs``, what the command line says of it (paged, masked, a log viewer, a
word the shell could not run) in ``commands``.
A call the person refused (``rejections.is_rejection``) is flagged like a failure, but it is a
decision.
"""

from __future__ import annotations

import re

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.commands import (
    LOG_PREFIX,
    LOG_VIEWER,
    MASKED_EXIT,
    answers_no,
    filters_a_run,
    hides_failure,
    shell_refused,
    shows_text,
)
from contextwarden.summarizers.diagnostics import error_diagnostics
from contextwarden.summarizers.failure_marks import (
    ERROR_LINE,
    EXCEPTION_LINE,
    HTTP_ERROR_HEADING,
    RUNNER_MARK,
    TELLING,
    marks_a_failure,
)
from contextwarden.summarizers.failure_ranks import MARKED_RANKS, TRAILER_RANK, ranked_lines
from contextwarden.summarizers.log_levels import logged_errors, viewed_errors
from contextwarden.summarizers.outputs import (
    EXIT_RES,
    FRAME_LINE,
    READ_REFUSED,
    STREAM_PREFIX,
    TOOL_ERROR_TAG,
    harness_message,
    is_status_line,
    program_output,
    shown_status,
)
from contextwarden.summarizers.rejections import refusal
from contextwarden.summarizers.runner_reports import failing_tests
from contextwarden.summarizers.sentences import clipped
from contextwarden.summarizers.shell_wrappers import unwrapped_command
from contextwarden.summarizers.terminal_wrap import unwrapped
from contextwarden.summarizers.toolchain_marks import clippy_warning, go_panicked_in
from contextwarden.summarizers.tools import CONTENT_KINDS, is_shell, shell_command
from contextwarden.toolnames import canonical

EXCERPT_CHARS = 300
"""Longest error excerpt kept per failure."""
ENDING_LINES = 1
"""An output whose exit code 0 is shown still failed when one of its last this-many lines is an
error line (``Error: name 'x' is not defined``): where a program that gives up says why. Three
lines also took in exploratory scripts' caught errors, and the unresolved errors they added
pushed decisions out of the summary on the fit sessions."""
OPENING_LINES = 3
"""Lines of a tool's own message (not a shell's) where a traceback says the tool failed."""

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]\x0f?")
"""A terminal's colour code, with the shift-in (``\\x0f``) terminfo's ``sgr0`` writes after the
reset on some terminals (``\\E[m\\017``, as rustfmt's coloured diff prints it)."""
_FIELD_PREFIX = re.compile(r"^(?:Output|Stdout|Stderr): (?=\S)", re.M)
"""Gemini CLI's shell tool puts its output after a field name (``Output: FAIL src/a.test.ts``)."""
_EMPTY_FIELD = re.compile(
    r"^(?:Error|Output|Stdout|Stderr|Signal|Background PIDs|Process Group PGID): "
    r"\((?:none|empty)\)\n?",
    re.M,
)
"""… and says ``Error: (none)`` when nothing failed: a field, not an error line."""
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):?\s*$", re.M)
"""Python's, and IPython's in a notebook cell (``NameError   Traceback (most recent call
last)``, no colon)."""
_FRAME = re.compile(r'^\s*File "[^"]+", line \d+.*$', re.M)
_TOOL_FAILURE = re.compile(
    r"^(?:[\w.-]+ )?(?:verification |validation )?failed\b"  # apply_patch verification failed:
    r"|^(?:failed|unable|cannot|can't|could not|no such|invalid)\b"
    r"|^[\w.]+ must (?:be|not|have|contain)\b"  # an argument refused: "timeout_ms must be …"
    r"|\bnot found in (?:the )?file\b|\bto replace (?:was )?not found\b"  # an edit's old text
    # Claude Code's Edit and Write refusing a file not read, or changed, since its last Read
    r"|^File has not been read yet\b|^File has been (?:unexpectedly )?modified since read\b",
    re.I,
)
"""How a tool that is not a shell (an edit, a patch, a notebook cell, an MCP call) says it failed
on its first line when its harness sets no error flag (Codex's ``apply_patch``)."""
_HTTP_FAILURE = re.compile(
    r"^<? ?HTTP/[\d.]+ [45]\d\d\b"  # curl -i / -v: the status line of a refused request
    r'|^\{[^\n]{0,300}?"error"\s*:\s*["{]'  # a JSON reply naming its error
    r'|^(?:\{[^\n]{0,300}?|\s*)"status(?:Code|_code)?"\s*:\s*"?[45]\d\d\b'  # or its status
    rf"|{HTTP_ERROR_HEADING.pattern}",  # or its error page: <title>504 Gateway Time-out</title>
    re.M,
)
_HTTP_CLIENT = re.compile(r"(?:^|[|;&(]\s*|\s)(?:curl|wget|http|https|xh)\s")
"""A client that exits 0 on an HTTP 4xx/5xx (``curl`` without ``-f``): its body says it failed."""
_STEPS = re.compile(r"&&|\|\||[;|\n]")
"""Where a command line runs one more step: a list (``;``, ``&&``, ``||``, a new line) or a pipe."""
_PASSED_LINE = re.compile(r"\.{3,}\s*(?:\(no files to check\))?(?:Passed|Skipped)$")
"""pre-commit's line for a hook that passed or had nothing to check (``ruff.....Passed``): when
no line says what failed, not the one to quote either."""


def failure_excerpt(
    text: str, *, is_error: bool, shell: bool, command: str | None = None, speaks: bool = False
) -> str | None:
    """A short line saying what went wrong, or None when the result is not a failure.

    Exit status 1 of a command whose last program only searches or compares (``grep``, ``rg``,
    ``diff``, ``test``…) means "nothing found" or "different", not failure. ``speaks``: the
    output is a tool's own message (an edit, a patch, a notebook cell, an MCP call), not a file's
    contents or search hits, so its first line saying it failed (``_TOOL_FAILURE``) or a
    traceback is a failure even with no error flag.
    """
    # a coloured traceback or test run says the same without colour
    text = _as_printed(text)
    if command is not None:  # ``ssh host 'pytest'`` fails as ``pytest`` does
        command = unwrapped_command(command)
    text = _EMPTY_FIELD.sub("", _FIELD_PREFIX.sub("", text))
    status = shown_status(text)
    if status == 1 and command is not None and answers_no(command):
        if not _step_failed(text, command):
            return None
    failed = is_error or (status is not None and status != 0)
    if command is not None and LOG_VIEWER.search(command):
        text = LOG_PREFIX.sub("", text)
    if not failed and shell and (status is None or hides_failure(command)):
        failed = _says_it_failed(text)
    viewed = command is not None and LOG_VIEWER.search(command) is not None  # a log's tail
    if not failed and shell and command is not None and (filters_a_run(command) or viewed):
        failed = _says_it_failed(text) or EXCEPTION_LINE.search(text) is not None
    logged = logged_errors(text) if viewed and not failed and shell else ()
    if logged:  # a log viewer's run: what the service it watches logged failed
        return _clip(logged[0])
    if not failed and shell and status == 0 and command is not None:
        failed = not shows_text(MASKED_EXIT.sub("", command)) and (
            _ends_in_error(text) or _ends_in_traceback(text)
        )
    if not failed and shell and command is not None:
        refused = shell_refused(text, command) or clippy_warning(text, command)
        if refused is not None:
            return _clip(refused)
    if not failed and shell and command is not None and _HTTP_CLIENT.search(command):
        failed = _HTTP_FAILURE.search(text) is not None  # curl exits 0 on a 404
    refused = refusal(text) if not failed and (shell or speaks) else None
    if refused is not None:  # a harness that flags no refusal (VS Code's Skip), not a file
        return _clip(refused)
    if not failed and speaks:
        errors = error_diagnostics(text)  # an editor's problems: the code does not build
        if errors:
            return _clip(errors[0])
        failed = _tool_says_it_failed(text)
    if not failed:
        return None
    return _most_telling_line(harness_message(text), status, shell=shell)


def _as_printed(text: str) -> str:
    """``text`` as the program printed it: a JSON result read as its output
    (``program_output``), colours and the stream a harness names before a line taken off, rows
    a terminal broke at its width joined again (``terminal_wrap``)."""
    return unwrapped(STREAM_PREFIX.sub("", _ANSI.sub("", program_output(text))))


def result_failure(call: ToolUseBlock | None, result: ToolResultBlock) -> str | None:
    """``failure_excerpt`` of ``result``, read with the call it answers (None: call not found).

    The one place a tool result is judged failed: the summary's facts and microcompact's kept
    lines both ask here, so what a summary calls an error is what a cleared result keeps.
    """
    shell = call is not None and is_shell(call)
    if not shell and READ_REFUSED.match(result.text):  # the harness's words, not the file's
        return _clip(result.text.strip().splitlines()[0])
    command = shell_command(call) if call is not None else None
    speaks = call is not None and not shell and canonical(call.name) not in CONTENT_KINDS
    return failure_excerpt(
        result.text, is_error=result.is_error, shell=shell, command=command, speaks=speaks
    )


def failure_lines(
    call: ToolUseBlock | None, result: ToolResultBlock, limit: int
) -> tuple[str, ...]:
    """Up to ``limit`` lines saying what went wrong: the excerpt first, then further error lines.

    Empty when the result is not a failure. Each line is clipped to ``EXCERPT_CHARS``.
    """
    excerpt = result_failure(call, result)
    if excerpt is None or limit <= 0:
        return ()
    return (excerpt, *more_lines(call, result, excerpt, limit - 1))


def more_lines(
    call: ToolUseBlock | None, result: ToolResultBlock, excerpt: str, limit: int
) -> tuple[str, ...]:
    """``further_lines`` of a failed result; none after a log viewer's excerpt when it is the
    first entry its service logged as an error (``log_levels``) and no traceback says where:
    a session watches a log again and again, and each view's other entries repeat or follow
    from that one."""
    shell = call is not None and is_shell(call)
    printed = _as_printed(result.text)
    if call is not None and shell and _last_traceback(printed) is None:
        if viewed_errors(printed, shell_command(call)):
            return ()
    return further_lines(result.text, excerpt, limit, shell=shell)


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
    text = TOOL_ERROR_TAG.sub("", _as_printed(text))
    diagnosed = [] if shell else error_diagnostics(text)
    lines = diagnosed or [*failing_tests(text), *(line for _, line in ranked_lines(text))]
    if not shell and not diagnosed:
        lines += _lines_after(text.splitlines(), excerpt)
    found: list[str] = []
    for line in lines:
        kept = _clip(line)
        if len(found) >= limit:
            break
        said = RUNNER_MARK.sub("", kept) in excerpt  # pytest's E-line, as its summary said it
        # a line a kept one holds (a diagnostic's message, kept with its header) says nothing new
        told = any(kept in other for other in found)
        if not told and not said and excerpt.rstrip("…") not in kept:
            found.append(kept)
    return tuple(found)


def _lines_after(lines: list[str], excerpt: str) -> list[str]:
    """The non-blank line after the first of ``lines`` that ``excerpt`` quotes (none: ``[]``)."""
    for i, line in enumerate(lines):
        if line.strip() and excerpt.startswith(_clip(line).rstrip("…")):
            following = (n.strip() for n in lines[i + 1 :])
            return [n for n in following if n and not FRAME_LINE.match(n)][:1]
    return []


def _says_it_failed(text: str) -> bool:
    """A program's output holds a line that only a failure prints (a traceback, an error line,
    a compiler's, linter's or test runner's failure mark)."""
    return _last_traceback(text) is not None or marks_a_failure(text)


def _step_failed(text: str, command: str) -> bool:
    """An output whose exit status 1 is a search's "nothing found" (``answers_no``) holds a line
    naming what failed and where (``TELLING``: ``cp: cannot stat 'x': No such file or
    directory``, systemctl's ``Unit x.service could not be found.``) and ``command`` has steps
    before the search: a search that found nothing printed nothing, so the line is an earlier
    step's, and that step failed. ``diff a b`` alone prints the lines that differ, whatever
    they say."""
    return _STEPS.search(command) is not None and TELLING.search(text) is not None


def _ends_in_error(text: str) -> bool:
    """The last ``ENDING_LINES`` lines of a program's output hold an error line: a script that
    caught its error, printed it and exited 0, or a failed step a later one hid."""
    lines = [
        line.strip()
        for line in text.splitlines()
        if line.strip()
        and not is_status_line(line.strip())
        and not any(p.search(line) for p in EXIT_RES)
    ]
    return any(ERROR_LINE.match(line) for line in lines[-ENDING_LINES:])


def _ends_in_traceback(text: str) -> bool:
    """A program's output ends with a whole Python traceback: after its last ``Traceback``
    header come only indented frames and the exception line (``TypeError: …``) last. A script
    that caught the error and printed it with ``traceback.print_exc()`` before exiting 0 stopped
    where the error was, as an uncaught one would have; a traceback followed by further output
    is one the program went on from."""
    start = _last_traceback(text)
    if start is None:
        return False
    lines = [
        line
        for line in text[start:].splitlines()[1:]
        if line.strip() and not is_status_line(line.strip())
    ]
    return (
        len(lines) > 1
        and all(line[0].isspace() for line in lines[:-1])
        and EXCEPTION_LINE.match(lines[-1]) is not None
    )


def _tool_says_it_failed(text: str) -> bool:
    """A tool's own message opens by saying it failed (``apply_patch verification failed:``,
    ``ERROR:``), with a traceback (a notebook cell's) or with an HTTP error page (a background
    command's output Claude Code's TaskOutput returns after its status lines: ``<title>504
    Gateway Time-out</title>``): a traceback further down may be text the tool shows (a log, a
    file that no tool name says it reads)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    opening = [line for line in lines if not FRAME_LINE.match(line)][:OPENING_LINES]
    shown = [line for line in lines if not is_status_line(line)][:OPENING_LINES]
    first = opening[0] if opening else ""
    return (
        _last_traceback("\n".join(opening)) is not None
        or ERROR_LINE.match(first) is not None
        or _TOOL_FAILURE.search(first) is not None
        or any(HTTP_ERROR_HEADING.match(line) for line in shown)
    )


def _last_traceback(text: str) -> int | None:
    """Where the last traceback of ``text`` starts, or None when it has none."""
    starts = [found.start() for found in _TRACEBACK.finditer(text)]
    return starts[-1] if starts else None


def _most_telling_line(text: str, status: int | None, *, shell: bool) -> str:
    """The most telling failure line (``failure_ranks.ranked_lines``); a program's output
    (``shell``) may say what failed on any line, while another tool's error opens with its
    harness's message and what follows is often the text it echoes back, so only lines marked
    as failures count there."""
    traceback = _last_traceback(text)
    if traceback is not None:
        exceptions = EXCEPTION_LINE.findall(text[traceback:])
        if exceptions:
            return _clip(exceptions[-1])
    ranked = ranked_lines(text)
    marked = next((line for rank, line in ranked if rank in MARKED_RANKS), None)
    if marked is not None:
        return _clip(marked)
    frames = _FRAME.findall(text[traceback:]) if traceback is not None else []
    if frames:  # a pager cut the exception off: where it was raised
        return _clip(frames[-1])
    panicked_in = go_panicked_in(text)  # … or a Go program's panic line
    if panicked_in is not None:
        return _clip(panicked_in)
    # another tool's line with only a failure word may be the text it echoes back
    rest = next((line for rank, line in ranked if shell or rank == TRAILER_RANK), None)
    if rest is not None:
        return _clip(rest)
    for line in text.splitlines():  # nothing says what failed: the output's first line
        stripped = line.strip()
        framing = is_status_line(stripped) or FRAME_LINE.match(stripped)
        if stripped and not framing and not _PASSED_LINE.search(stripped):
            return _clip(stripped)
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
            return _clip(stripped)
    return None


def _clip(line: str) -> str:
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
