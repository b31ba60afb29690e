"""What a command line says of its output: whether it shows existing text, searches, masks
its exit code or echoes a step's, pages it or shows another run's log, which of its words the
shell could not run, and the command folded as a re-run's key.

``failures`` reads an output with the command that printed it; this room reads the command.
"""

from __future__ import annotations

import re

from contextwarden.summarizers.failure_marks import SHELL_PREFIX, says_what_failed
from contextwarden.summarizers.translated_marks import COMMAND_NOT_FOUND, SEPARATOR

_READERS = frozenset({"cat", "head", "tail", "nl", "less", "more", "sed", "awk", "jq", "echo"})
"""Programs that show text that exists already: a pipeline they start shows no program's run."""
_YES_NO_PROGRAMS = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "diff", "cmp", "test", "[", "[[", "git-diff"}
)
HANDLED_STEP = re.compile(r"[^;&|\n]*(?:\|[^|;&\n][^;&|\n]*)*\|\|")
"""From a word of a command to the end of its step: the step is followed by ``||``."""
_PAGED = re.compile(r"\|\s*(?:head|tail|less|more|cat|tee)\b[^|]*$")
"""A command whose last program only shows the output of the one before it (``… | tail -20``):
the exit code shown is the pager's, not that program's (unless ``set -o pipefail``)."""
MASKED_EXIT = re.compile(r"\s*(?:\|\|\s*(?:true|:|exit 0)|;\s*true|(?:\|\||;)\s*echo\b[^;&|]*)\s*$")
"""A command ending so (``npm view pkg || true``, ``bun test; echo "exit $?"``) exits 0 whatever
its program did."""
_ECHOED_STATUS = re.compile(
    r"\b(?:echo|Write-Host|Write-Output)\s+(?:-\w+\s+)?[\"']?"
    r"(?P<label>[^\"'$;|&\n]*?[A-Za-z][^\"'$;|&\n]*?)\$(?:\?|LASTEXITCODE\b)",
    re.I,
)
"""A step printing the exit code of the one before it after a label (``echo "exit: $?"``,
PowerShell's ``Write-Host "exit=$LASTEXITCODE"``): POSIX's ``$?`` and PowerShell's
``$LASTEXITCODE`` hold the last command's (a native program's) exit status, so the number the
output shows after that label is that step's, whatever the list's own exit code."""
SERVICE_LOG_VIEWER = re.compile(
    r"\b(?:docker|podman|kubectl)(?: compose)? logs\b|\bjournalctl\b"
    r"|\blogread\b"  # OpenWrt's system log (logd's ring buffer)
)
"""A command showing a running service's log, which a session watches again and again."""
LOG_VIEWER = re.compile(rf"\bgh run (?:view|watch)\b|{SERVICE_LOG_VIEWER.pattern}")
"""A command showing another run's log or status (``gh run view``, with ``--log`` or not, and
``gh run watch`` exit 0 when the run failed unless ``--exit-status``; cli/cli's ``run view``
and ``run watch`` help; ``SERVICE_LOG_VIEWER``): its own exit code says nothing of that run."""
LOG_PREFIX = re.compile(
    r"^(?:\d+[:-])?(?:[^\t\n]*\t){0,2}\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?[ \t]?",
    re.M,
)
"""The job, step and timestamp a log viewer puts before each line (``gh run view --log``; a job's
log as GitHub's API gives it has the timestamp alone), after the line number a search puts
before a line it found (``rg -n``, ``grep -n``: ``836:``)."""
_STEP_FAILED_WORDS = "##[error]Process completed with exit code "
STEP_FAILED = re.compile(rf"{re.escape(_STEP_FAILED_WORDS)}[1-9]\d*\.")
FAILED_STEP = re.compile(rf"(?:{LOG_PREFIX.pattern}){STEP_FAILED.pattern}", re.M)
"""The line the GitHub Actions runner writes into a job's log when a step's script exits
non-zero (``##[error]Process completed with exit code 1.``; ``##[error]`` is the runner's
error annotation, before which it writes each line's timestamp): the log shown, however the
agent got it (``gh run view --log``, ``gh api …/jobs/ID/logs``, a saved log read with ``sed``
or searched with ``rg -n``), is a failed run's output."""

_WRAPPERS = re.compile(r"^(?:\w+=\S*\s+|(?:timeout|time|nice|stdbuf)(?:\s+-\S+)*(?:\s+\d\S*)?\s+)+")
"""What runs a program without being it (``timeout 300 pytest``, ``CI=1 npm test``)."""
_LISTERS = frozenset({"git", "ls", "find", "ps", "env", "printenv", "printf", "pip"})
"""Programs whose output lists what exists (history, files, processes, packages), not a run."""
_LISTED = re.compile(r"&&|\|\||;|\n")
"""Where a command line's list runs its next pipeline (``&&``, ``||``, ``;``, a new line)."""
_REDIRECTS = re.compile(r"\s*(?:2>&1|2>/dev/null|>/dev/null)\s*")
_PAGERS = re.compile(r"\s*\|\s*(?:head|tail|less|cat)(?:\s+-n?\s*\d+|\s+-\d+)?\s*$")
_CD_PREFIX = re.compile(r"^\s*cd\s+[^&;|]+?\s*&&\s*")
_QUOTED = re.compile(r'"(?:\\.|[^"\\])*"|\'[^\']*\'|\{[^{}]*\}')
"""A quoted word of a command line (``-m "a; b"``, ``python -c 'x; y'``) or a block in braces
(PowerShell's ``ForEach-Object { $o = $_; … }``, sh's ``{ a; b; }``): its ``;`` is not the
line's list."""
_SETUP = frozenset({"cd", "pushd", "popd", "set", "export", "source", ".", "set-location", "sl"})
"""Steps that set up where or how the next one runs and print no failure of a program's."""
_ASSIGNMENT = re.compile(r"^\s*\$?[\w:]+\s*=")
"""A variable set (sh's ``X=1``, PowerShell's ``$log = 'C:\\…'``): set-up too."""


def failed_job_log(text: str) -> bool:
    """``text`` shows a GitHub Actions job's log with a step that failed (``FAILED_STEP``); the
    runner's words are looked for first, so an output that has none is not read line by line."""
    return _STEP_FAILED_WORDS in text and FAILED_STEP.search(text) is not None


def hides_failure(command: str | None) -> bool:
    """True when the exit code shown is not that of the program whose output this is: the
    command masks it (``|| true``), pipes it into a pager (``| tail -20``, the pager's code is
    shown) or shows another run's log. A search masked or paged so (``grep x || true``,
    ``rg x | head``) still only searches; a pager after ``cat`` shows a file."""
    if command is None:
        return False
    if LOG_VIEWER.search(command):
        return True
    unmasked = MASKED_EXIT.sub("", command)
    if unmasked != command:
        return not answers_no(unmasked)
    if runs_unchecked_step(command):
        return True
    return (
        _PAGED.search(command) is not None and "pipefail" not in command and not shows_text(command)
    )


def echoed_status(text: str, command: str) -> int | None:
    """The first non-zero exit code ``command`` printed after a label (``_ECHOED_STATUS``) that
    ``text`` shows on a line of its own (``exit=1``), or None: a step that failed, which the
    echo's own exit code 0 hides."""
    for found in _ECHOED_STATUS.finditer(command):
        label = re.escape(found.group("label").strip())
        for shown in re.finditer(rf"^\s*{label}\s*(\d+)\s*$", text, re.M):
            if int(shown.group(1)) != 0:
                return int(shown.group(1))
    return None


def runs_unchecked_step(command: str) -> bool:
    """True when a step before the last of a ``;`` list runs a program whose exit code nothing
    checks (``git merge b; git log -3``, PowerShell's ``cd x; git merge b; git log``): the list's
    exit code is its last command's (POSIX "Sequential Lists", PowerShell's ``;``), so a failure
    an earlier step printed (``CONFLICT (content): …``) is shown under exit code 0. A step that
    handles its failure (``a || b;``), only sets up the next (``cd x;``), or a list that shows a
    file's text or searches (``cd x; cat log``: the text may say anything) is not one."""
    steps = [step for step in _QUOTED.sub('""', command).split(";") if step.strip()]
    if len(steps) < 2 or any(shows_text(step) for step in steps):
        return False
    return any(_runs_a_program(step) for step in steps[:-1])


def _runs_a_program(step: str) -> bool:
    """A step of a list runs a program, not only set-up (``cd x``), and does not handle its
    failure (``a || b``)."""
    pipelines = [p for p in _LISTED.split(step) if p.strip() and not _ASSIGNMENT.match(p)]
    firsts = [programs[0].lower() for p in pipelines if (programs := _programs(p))]
    return "||" not in step and any(first not in _SETUP for first in firsts)


def shows_text(command: str) -> bool:
    """True when the last pipeline of ``command`` searches or starts with a program that only
    shows existing text (``cat f | head``, ``rg x | sort | head``)."""
    programs = _programs(_LISTED.split(command.strip())[-1])
    return bool(programs) and (
        programs[0] in _READERS or any(p in _YES_NO_PROGRAMS for p in programs)
    )


def filters_a_run(command: str) -> bool:
    """True when a pipeline of ``command`` runs a program (not one that shows or lists existing
    text) and passes its output through a search (``pytest -q 2>&1 | grep -E "Error"``, ``gh
    run view --log-failed | grep FAILED``): what is shown is that run's output, filtered, so the
    lines a failure prints may be there without the traceback's header or the run's verdict,
    and the exit code shown is the filter's."""
    for pipeline in _LISTED.split(command):
        programs = _programs(pipeline, unwrapped=True)
        if len(programs) < 2 or programs[0] in _READERS | _YES_NO_PROGRAMS | _LISTERS:
            continue
        if any(p in _YES_NO_PROGRAMS for p in programs[1:]):
            return True
    return False


def _programs(pipeline: str, *, unwrapped: bool = False) -> list[str]:
    """The program each stage of ``pipeline`` runs, by its base name; ``unwrapped``: the one a
    wrapper (``timeout 300``, ``CI=1``) runs."""
    stages = [_WRAPPERS.sub("", s.strip()) if unwrapped else s for s in pipeline.split("|")]
    return [stage.split()[0].rsplit("/", 1)[-1] for stage in stages if stage.split()]


def answers_no(command: str) -> bool:
    last = _LISTED.split(command.strip())[-1].rsplit("|", 1)[-1].split()
    return bool(last) and last[0].rsplit("/", 1)[-1] in _YES_NO_PROGRAMS


def command_key(command: str) -> str:
    """A command folded so a re-run counts as the same target.

    Leading ``cd DIR &&``, stderr/stdout redirects and a trailing ``| head``/``| tail`` pager are
    dropped and whitespace collapsed: ``cd /r && pytest -x 2>&1 | tail -20`` and ``pytest -x`` are
    the same attempt.
    """
    key = command.strip()
    while _CD_PREFIX.match(key):
        key = _CD_PREFIX.sub("", key, count=1)
    key = _REDIRECTS.sub(" ", key)
    while _PAGERS.search(key):
        key = _PAGERS.sub("", key)
    return " ".join(key.split())


SHELL_FAILURE = re.compile(
    rf"^{SHELL_PREFIX}"
    r"(?:(?:-c: )?(?:line \d+: )?(?:syntax|parse) error\b"  # bash -c, zsh
    r"|(?:command not found|no match(?:es found)?): (?P<named>.+?)"  # zsh names the word second
    rf"|(?P<word>[^:\uff1a\n]+){SEPARATOR}"
    rf"(?:command not found|not found|unbound variable|{COMMAND_NOT_FOUND})\.?)\s*$",
    re.M,
)
"""A line the shell itself prints when it cannot run a command, whatever the exit code a later
command of the line leaves: bash's ``bash: line 1: val: command not found`` (a backquoted word
in a ``python3 -c "…"`` is run as a command substitution) and ``bash: line 1: X: unbound
variable``; dash's ``sh: 1: X: not found``; zsh's ``zsh:1: command not found: X``, as
``(eval):1: …`` when an agent runs it through ``eval``; a syntax error of ``bash -c``; zsh's
``zsh:1: no matches found: node_modules/x*`` (its ``NOMATCH`` option, the default: a glob that
matched nothing is an error and the command does not run, so ``rg … x* | head`` searched
nothing whatever exit code ``head`` leaves) and bash's ``no match: x*`` under ``failglob``. Only
the shell's own prefix counts: a program quoting such a line (a log, a JSON reply) does not.
zsh's glob was once left out (on set 9 an agent repeated it across its searches, +0.86 %
modeled cost for one probe); measured again on sets 1, 3-21 it keeps set 9's and set 20's at
0.9995x and 1.0001x."""


def shell_refused(text: str, command: str) -> str | None:
    """The shell's line saying it could not run a word of ``command`` (``SHELL_FAILURE``), or
    None: a failed step, which a later command's exit code 0 does not undo. The word it names
    must be the command's own, so a log or file shown (``cat ci.log``) that holds such a line is
    no failure, and the step must not be one the command line handles (``a || b``: ``b`` runs
    when ``a`` fails: ``gawk --version || awk --version`` asked which there is); a syntax error
    names no word, and counts unless the command only shows text."""
    handled: dict[int, bool] = {}  # by where the word is: each step is read once per command
    for found in SHELL_FAILURE.finditer(text):
        named = found.group("named") or found.group("word")
        if named is None and not shows_text(command):
            return found.group(0)
        at = command.find(named.strip()) if named is not None else -1
        if at < 0:
            continue
        if at not in handled:
            handled[at] = HANDLED_STEP.match(command, at) is not None
        if not handled[at]:
            return found.group(0)
    return None


_DIAGNOSTIC = re.compile(r"^(?P<program>[\w.+-]+): (?P<message>\S.*)$", re.M)
"""A utility's diagnostic: ``utility_name: message``, the form POSIX gives every standard
utility's standard error (XCU 1.4, "Utility Description Defaults", STDERR) and GNU's and
BusyBox's tools print (``sort: unknown sort type``)."""
_NOT_A_FAILURE = re.compile(r"^(?:warning\b|write error|write failed)|Broken pipe\b", re.I)
"""A diagnostic that reports no failed work: a warning, or the reader closing the pipe early
(``sort: write failed: standard output: Broken pipe`` after ``| head``)."""
_REFUSED_USAGE = re.compile(
    r"\b(?:unknown|unrecognized|illegal|missing operand|extra operand)\b", re.I
)
"""How a utility refuses its arguments: getopt's ``illegal option -- x`` (POSIX) and ``invalid
option``/``unrecognized option`` (GNU), coreutils' ``missing operand``/``extra operand``,
BusyBox's ``unknown sort type``. With ``says_what_failed``'s words it tells a failure from the
progress a tool logs to standard error under its name (``go: upgraded x => y``, GNU grep's
``grep: f.pyc: binary file matches``)."""
_STAGE_START = r"(?:^|[|;&(\n'\"`]|\$\()\s*(?:\S*/)?"
"""Where a pipeline's stage starts: the line's start, an operator, a quote or a subshell, then
the program, by its path or its name."""


def piped_stage_error(text: str, command: str) -> str | None:
    """A diagnostic (``_DIAGNOSTIC``) of a program whose standard output ``command`` pipes into
    another (``du … | sort -rh | head``), or None. A pipeline's exit status is its last
    command's (POSIX XCU 2.9.2, without ``pipefail``), so an earlier stage's failure shows only
    in what it printed; and that stage's standard output went into the pipe, so a line on the
    output that opens with its name is its standard error: its diagnostic, a failure when it
    says so (``says_what_failed``, ``_REFUSED_USAGE``), not a tool's progress. A stage whose
    standard error also goes into the pipe (``2>&1``, ``|&``) is not read: its line may have
    passed through the next program."""
    if "|" not in command:  # no pipeline: no stage's output went anywhere but the screen
        return None
    for found in _DIAGNOSTIC.finditer(text):
        program, message = found.group("program"), found.group("message")
        if _NOT_A_FAILURE.search(message):
            continue
        if not (says_what_failed(message) or _REFUSED_USAGE.search(message)):
            continue
        stage = re.compile(rf"{_STAGE_START}{re.escape(program)}(?=[ \t|])[^|;&\n]*\|(?![|&])")
        piped = [m.group(0) for m in stage.finditer(command)]
        if any("2>&1" not in s and ">&" not in s for s in piped):
            return found.group(0).strip()
    return None
