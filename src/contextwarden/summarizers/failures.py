"""Recognising a failed tool call from its result: the error flag, exit codes, error-looking output.

A result is a failure when the tool flagged it (``is_error``), when it shows a non-zero exit code,
or — for shell tools, whose output is a program's — when it holds a Python traceback, a line
starting with ``error:``/``fatal:``, or a line a compiler, linter, test runner or package
manager prints for a failure (``failure_marks``: an output piped through ``tail`` loses its
exit code, not these lines). A visible exit code 0 wins over error-looking text (the
command handled its own error), unless it is not the program's: the command masked it
(``|| true``, ``; echo $?``), piped the output into a pager (``| tail -20``) or shows another
run's log (``gh run view --log``); or unless the program printed its error and stopped there
(its last line an error line, or a whole traceback last: ``traceback.print_exc()``;
``error_endings``), or the
shell could not run one of the line's words (``bash: line 1: val: command not found``), a failed
step that a later command's exit code 0 does not undo; a step's code the command printed after
a label (``echo "exit: $?"``, ``Write-Host "exit=$LASTEXITCODE"``) shows it as plainly
(``commands.echoed_status``). A run filtered through a search
(``pytest | grep Error``, ``commands.filters_a_run``) failed when an exception line is left: the
filter dropped the traceback's header and the verdict. An HTTP client's 4xx/5xx reply is a
failure whatever its exit code (``curl`` exits 0 on a 404). A tool that is not a shell and
returns no file's contents (an edit, a patch, a notebook cell, an MCP call) fails when its message
opens by saying so (Codex's ``apply_patch verification failed:`` carries no flag) or holds a
traceback, or when it holds aider's report that a reply's edit blocks did not match
(``formats.aider_output.failed_edits``: its count, then the heading naming each block's file). File
contents and search hits are never scanned: a file may well say "error:"; a read whose harness
answered in the file's place that it did not read it (Copilot CLI's ``File too large to read at
once``) failed, as did any call whose output that harness kept back (``Output too large to read at
once``). ``cargo clippy`` fails on the lints it warns of (``toolchain_marks``), though it exits 0.
The excerpt is the line that says what failed (an error line, a marked failure, an exception, then
in a program's output any line with a failure word; the shell's own line when it could not run a
word), the first line only when none does.
A command's result that Codex gives as a JSON object (``{"exit_code":1,"output":"…"}``) is read
as its exit code and its output's lines (``program_output``). What the harness put around the
output is read in ``outputs``, what the command line says of it (paged, masked, a log viewer, a
word the shell could not run) in ``commands``, which of its lines to quote in ``failure_quotes``.
A call the person refused (``rejections.is_rejection``) is flagged like a failure, but it is a
decision.
"""

from __future__ import annotations

import re
from itertools import pairwise

from contextwarden.formats.aider_output import failed_edits
from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.code_mode import script_error, thrown_error
from contextwarden.summarizers.commands import (
    LOG_PREFIX,
    LOG_VIEWER,
    MASKED_EXIT,
    STEP_FAILED,
    answers_no,
    echoed_status,
    failed_job_log,
    filters_a_run,
    hides_failure,
    piped_stage_error,
    shell_refused,
    shows_text,
)
from contextwarden.summarizers.diagnostics import error_diagnostics
from contextwarden.summarizers.error_endings import stopped_at_error
from contextwarden.summarizers.failure_marks import (
    ERROR_LINE,
    EXCEPTION_LINE,
    HTTP_ERROR_HEADING,
    marks_a_failure,
    tells,
)
from contextwarden.summarizers.failure_quotes import (
    as_printed,
    clip,
    further_lines,
    last_traceback,
    most_telling_line,
)
from contextwarden.summarizers.failure_ranks import MARKED_RANKS, line_rank
from contextwarden.summarizers.log_levels import logged_errors, viewed_errors
from contextwarden.summarizers.outputs import (
    FRAME_LINE,
    OUTPUT_WITHHELD,
    READ_REFUSED,
    READ_UNCHANGED,
    harness_message,
    is_status_line,
    shown_status,
    unstarted,
    without,
)
from contextwarden.summarizers.rejections import refusal
from contextwarden.summarizers.remembered import Remembered
from contextwarden.summarizers.task_runners import failed_task
from contextwarden.summarizers.toolchain_marks import clippy_warning
from contextwarden.summarizers.tools import CONTENT_KINDS, is_shell, shell_command
from contextwarden.toolnames import canonical

OPENING_LINES = 3
"""Lines of a tool's own message (not a shell's) where a traceback says the tool failed."""

_FIELD_PREFIX = re.compile(r"^(?:Output|Stdout|Stderr): (?=\S)", re.M)
"""Gemini CLI's shell tool puts its output after a field name (``Output: FAIL src/a.test.ts``)."""
_FIELD_MARKS = ("Output: ", "Stdout: ", "Stderr: ")
"""What every ``_FIELD_PREFIX`` holds (``outputs.without``)."""
_EMPTY_FIELD = re.compile(
    r"^(?:Error|Output|Stdout|Stderr|Signal|Background PIDs|Process Group PGID): "
    r"\((?:none|empty)\)\n?",
    re.M,
)
"""… and says ``Error: (none)`` when nothing failed: a field, not an error line."""
_EMPTY_MARK = ": ("
"""What every ``_EMPTY_FIELD`` holds."""
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
_VALIDATION_REPLY = re.compile(
    r'^\{\s*"detail"\s*:\s*\[\s*\{[^\n]*"loc"\s*:\s*\[[^\n]*"msg"\s*:.*', re.M
)
"""FastAPI's reply to a request its validation refused (422, ``RequestValidationError``, as
https://fastapi.tiangolo.com/tutorial/handling-errors/ shows it): ``{"detail":[{"type":
"missing","loc":["body","x"],"msg":"Field required",…}]}``, one object per field, naming what
was wrong; the line is the excerpt, not the bare status a script printed before it."""
_HTTP_CLIENT = re.compile(
    r"(?:^|[|;&(]\s*|\s)(?:curl|wget|http|https|xh)\s"
    r"|\b(?:from|import(?:\s+[\w.]+\s*,)*)\s+(?:httpx|requests|aiohttp|urllib3)\b"  # a script
)
"""A client that exits 0 on an HTTP 4xx/5xx (``curl`` without ``-f``; a ``python -c`` script
with httpx or requests, which raise on none unless asked): its body says it failed."""
_STEPS = re.compile(r"&&|\|\||[;|\n]")
"""Where a command line runs one more step: a list (``;``, ``&&``, ``||``, a new line) or a pipe."""


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
    text = as_printed(text)
    text = without(_EMPTY_FIELD, without(_FIELD_PREFIX, text, *_FIELD_MARKS), _EMPTY_MARK)
    status = shown_status(text)
    echoed = echoed_status(text, command) if command is not None and shell else None
    status = echoed or status  # the step it echoed failed, whatever the echo's own code
    if status == 1 and command is not None and answers_no(command):
        if not _step_failed(text, command):
            return None
    job_failed = shell and command is not None and _printed_job_log(text, command)
    failed = is_error or (status is not None and status != 0) or job_failed
    if job_failed or (command is not None and LOG_VIEWER.search(command)):
        text = LOG_PREFIX.sub("", text)
    last_word = _step_last_word(text) if job_failed else None
    if last_word is not None:
        return clip(last_word)
    if not failed and shell and (status is None or hides_failure(command)):
        failed = _says_it_failed(text)
    viewed = command is not None and LOG_VIEWER.search(command) is not None  # a log's tail
    if not failed and shell and command is not None and (filters_a_run(command) or viewed):
        failed = _says_it_failed(text) or EXCEPTION_LINE.search(text) is not None
    logged = logged_errors(text) if viewed and not failed and shell else ()
    if logged:  # a log viewer's run: what the service it watches logged failed
        return clip(logged[0])
    if not failed and shell and status == 0 and command is not None:
        failed = not shows_text(MASKED_EXIT.sub("", command)) and stopped_at_error(text)
    if not failed and shell and command is not None:
        refused = (
            shell_refused(text, command)
            or clippy_warning(text, command)
            or piped_stage_error(text, command)
        )
        if refused is not None:
            return clip(refused)
    if not failed and shell and command is not None and _HTTP_CLIENT.search(command):
        refused_reply = _VALIDATION_REPLY.search(text)
        if refused_reply is not None:
            return clip(refused_reply.group(0))
        failed = _HTTP_FAILURE.search(text) is not None  # curl exits 0 on a 404
    refused = refusal(text) if not failed and (shell or speaks) else None
    if refused is not None:  # a harness that flags no refusal (VS Code's Skip), not a file
        return clip(refused)
    if not failed and speaks:
        errors = error_diagnostics(text)  # an editor's problems: the code does not build
        if errors:
            return clip(errors[0])
        failed = _tool_says_it_failed(text)
    if not failed:
        return None
    output = harness_message(text)
    task = failed_task(output) if shell else None
    if task is not None:  # a task runner's run: what the failing task printed says why
        return clip(task.quoted(most_telling_line(task.output, status, shell=shell)))
    return most_telling_line(output, status, shell=shell)


def result_failure(call: ToolUseBlock | None, result: ToolResultBlock) -> str | None:
    """``failure_excerpt`` of ``result``, read with the call it answers (None: call not found).

    The one place a tool result is judged failed: the summary's facts and microcompact's kept
    lines both ask here, so what a summary calls an error is what a cleared result keeps.
    """
    shell = call is not None and is_shell(call)
    command = shell_command(call) if call is not None else None
    speaks = call is not None and not shell and canonical(call.name) not in CONTENT_KINDS
    return _judged(result.text, result.is_error, shell, command, speaks)


def _judge(text: str, is_error: bool, shell: bool, command: str | None, speaks: bool) -> str | None:
    """``result_failure`` of an output, read with what it takes of the call."""
    thrown = thrown_error(text)
    if thrown is not None:  # a code-mode script stopped there, whatever it had shown
        return clip(unstarted(thrown) or thrown)
    refused = unstarted(text) if shell else None
    if refused is not None:  # no command ran: there is no output to read
        return clip(refused)
    answered = _harness_answer(text, shell=shell)
    if answered is not None:
        return answered
    edits = failed_edits(text) if speaks else ()
    if edits:  # aider's report that it could not apply a reply's edit blocks
        return edits[0]
    return failure_excerpt(text, is_error=is_error, shell=shell, command=command, speaks=speaks)


_judged = Remembered(_judge)
"""A result is judged again at every compaction of its session (the loss report reads every
message from the first one changed; microcompact, the ones it clears): once is enough."""


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
    """``further_lines`` of a failed result; none after the excerpt of a service's log viewer
    (``docker logs``, ``journalctl``) when it is the first entry its service logged as an error
    (``log_levels``) and no traceback says where: a session watches a log again and again, and
    each view's other entries repeat or follow from that one (a CI run's log is no service's).
    A failed CI job's log a command printed (``_printed_job_log``) is read without its
    timestamps, so its lines rank by what they say."""
    shell = call is not None and is_shell(call)
    speaks = call is not None and not shell and canonical(call.name) not in CONTENT_KINDS
    command = shell_command(call) if call is not None and shell else None
    return _further(result.text, excerpt, limit, shell, command, speaks)


def _more(
    text: str, excerpt: str, limit: int, shell: bool, command: str | None, speaks: bool
) -> tuple[str, ...]:
    """``more_lines`` of an output, read with what it takes of the call."""
    if _harness_answer(text, shell=shell) is not None:  # it says it; advice follows
        return ()
    error = script_error(text)
    if error:  # a script that threw: its error says the rest (a refused command, nothing)
        return () if unstarted(error) else further_lines(error, excerpt, limit, shell=False)
    edits = failed_edits(text) if speaks else ()
    if edits:  # each failed block's heading names its file
        return edits[1 : limit + 1]
    printed = as_printed(text)
    if command is not None and last_traceback(printed) is None:
        if viewed_errors(printed, command):
            return ()
    task = failed_task(printed) if shell else None
    if task is not None:  # the failing task's lines, not its siblings'
        said = excerpt.removeprefix(task.quoted(""))
        found = further_lines(task.output, said, limit, shell=shell)
        return tuple(clip(task.quoted(line)) for line in found)
    if command is not None and _printed_job_log(text, command):
        text = LOG_PREFIX.sub("", text)
    return further_lines(text, excerpt, limit, shell=shell)


_further = Remembered(_more)
"""Read again as often as a result is judged (``_judged``)."""


def _harness_answer(text: str, *, shell: bool) -> str | None:
    """What the harness said in the output's place when the call's work did not reach the
    model, or None: Copilot CLI's output kept back (``OUTPUT_WITHHELD``, any tool's: its first
    sentence) or a file it would not read (``READ_REFUSED``, not a shell's, whose command may
    print a file that says so: its first line) or did not read again (Claude Code's
    ``READ_UNCHANGED``: its first sentence)."""
    withheld = OUTPUT_WITHHELD.match(text)
    if withheld is not None:
        return withheld.group("said")
    if not shell and READ_REFUSED.match(text):
        return clip(text.strip().splitlines()[0])
    unchanged = None if shell else READ_UNCHANGED.match(text)
    if unchanged is not None:
        return unchanged.group("said")
    return None


def _printed_job_log(text: str, command: str) -> bool:
    """``text`` is a failed GitHub Actions job's log (``commands.failed_job_log``) that a
    command printed from where it was saved or fetched (``gh api …/logs``, ``sed`` or ``rg -n``
    of a saved log), not a log viewer's (``gh run view --log``), whose run is read as its
    viewer's (``LOG_VIEWER``) and whose further lines keep their job and step names: read as a
    printed log, pytest's ``FAILED`` lines of a ``--log-failed`` gave two of their places to
    other lines (a probe of study set 5), and a script's ``❌ Tag v4.40.1 already exists``
    its place to the step's last line (one of set 19)."""
    return LOG_VIEWER.search(command) is None and failed_job_log(text)


def _step_last_word(text: str) -> str | None:
    """The line a CI job's failed step printed last, right before the runner's line that it
    failed (``commands.STEP_FAILED``), when it says a failure by its form (``failure_ranks``'
    ``MARKED_RANKS``: an error line, a located one, an exception; not a run's count or verdict):
    the runner reports the exit code of the step's script, so what that script printed last
    is what stopped it (``error: script "publish" exited with code 1``), as a program that
    gives up says why on its last line (``error_endings``); None when another line is last."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for before, line in pairwise(lines):
        if STEP_FAILED.match(line):
            return before if line_rank(before) in MARKED_RANKS else None
    return None


def _says_it_failed(text: str) -> bool:
    """A program's output holds a line that only a failure prints (a traceback, an error line,
    a compiler's, linter's or test runner's failure mark)."""
    return last_traceback(text) is not None or marks_a_failure(text)


def _step_failed(text: str, command: str) -> bool:
    """An output whose exit status 1 is a search's "nothing found" (``answers_no``) holds a line
    naming what failed and where (``TELLING``: ``cp: cannot stat 'x': No such file or
    directory``, systemctl's ``Unit x.service could not be found.``) and ``command`` has steps
    before the search: a search that found nothing printed nothing, so the line is an earlier
    step's, and that step failed. ``diff a b`` alone prints the lines that differ, whatever
    they say."""
    return _STEPS.search(command) is not None and tells(text)


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
        last_traceback("\n".join(opening)) is not None
        or ERROR_LINE.match(first) is not None
        or _TOOL_FAILURE.search(first) is not None
        or any(HTTP_ERROR_HEADING.match(line) for line in shown)
    )
